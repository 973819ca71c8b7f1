//! Any OpenAI-compatible `/v1/embeddings` endpoint (Ollama, vLLM, llama.cpp's server, a
//! hosted API) as an [`Embedder`].
//!
//! The HTTP client is blocking and runs on a thread of its own for every call, so the
//! embedder can be used from synchronous code and from inside an async runtime alike.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::{Embedder, ModelError, TextKind};

#[derive(Debug, Clone)]
pub struct OpenAiConfig {
    /// Base URL, e.g. `http://localhost:11434` (the `/v1/embeddings` path is appended).
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
    /// Prepended to questions and to passages (e5-style models want `query: `/`passage: `).
    pub query_prefix: String,
    pub passage_prefix: String,
    /// The model's input window in tokens, for splitting long articles.
    pub window_tokens: usize,
    pub timeout: Duration,
    /// Attempts per request (server errors and timeouts are retried with backoff).
    pub attempts: u32,
}

impl OpenAiConfig {
    pub fn new(base_url: &str, model: &str) -> OpenAiConfig {
        OpenAiConfig {
            base_url: base_url.trim_end_matches('/').to_owned(),
            model: model.to_owned(),
            api_key: None,
            query_prefix: String::new(),
            passage_prefix: String::new(),
            window_tokens: 512,
            timeout: Duration::from_secs(60),
            attempts: 3,
        }
    }
}

#[derive(Serialize)]
struct Request<'a> {
    model: &'a str,
    input: Vec<String>,
}

#[derive(Deserialize)]
struct Response {
    data: Vec<Datum>,
}

#[derive(Deserialize)]
struct Datum {
    index: usize,
    embedding: Vec<f32>,
}

pub struct OpenAiEmbedder {
    config: OpenAiConfig,
    id: String,
    dim: usize,
}

impl OpenAiEmbedder {
    /// Connects and learns the vector dimension from one probe request.
    pub fn connect(config: OpenAiConfig) -> Result<OpenAiEmbedder, ModelError> {
        let id = format!("openai:{}@{}", config.model, config.base_url);
        let mut e = OpenAiEmbedder { config, id, dim: 0 };
        let probe = e.request(vec!["probe".to_owned()])?;
        e.dim = probe[0].len();
        Ok(e)
    }

    fn request(&self, input: Vec<String>) -> Result<Vec<Vec<f32>>, ModelError> {
        let cfg = self.config.clone();
        let n = input.len();
        let remote = |m: String| ModelError::Remote(format!("{}/v1/embeddings: {m}", cfg.base_url));
        let result = std::thread::scope(|s| {
            s.spawn(|| -> Result<Response, String> {
                let client = reqwest::blocking::Client::builder()
                    .timeout(cfg.timeout)
                    .build()
                    .map_err(|e| e.to_string())?;
                let body = Request {
                    model: &cfg.model,
                    input,
                };
                let mut last = String::new();
                for attempt in 0..cfg.attempts.max(1) {
                    if attempt > 0 {
                        std::thread::sleep(Duration::from_millis(200 * (1 << attempt)));
                    }
                    let mut req = client
                        .post(format!("{}/v1/embeddings", cfg.base_url))
                        .json(&body);
                    if let Some(key) = &cfg.api_key {
                        req = req.bearer_auth(key);
                    }
                    match req.send() {
                        Ok(resp) if resp.status().is_success() => {
                            return resp
                                .json::<Response>()
                                .map_err(|e| format!("malformed response: {e}"));
                        }
                        Ok(resp)
                            if resp.status().is_server_error() || resp.status().as_u16() == 429 =>
                        {
                            last = format!("HTTP {}", resp.status());
                        }
                        Ok(resp) => {
                            return Err(format!(
                                "HTTP {}: {}",
                                resp.status(),
                                resp.text().unwrap_or_default()
                            ));
                        }
                        Err(e) => last = e.to_string(),
                    }
                }
                Err(format!("{last} after {} attempt(s)", cfg.attempts.max(1)))
            })
            .join()
            .unwrap_or_else(|_| Err("the request thread panicked".to_owned()))
        });
        let mut resp = result.map_err(remote)?;
        if resp.data.len() != n {
            return Err(remote(format!(
                "{} embeddings for {n} inputs",
                resp.data.len()
            )));
        }
        resp.data.sort_by_key(|d| d.index);
        let mut out = Vec::with_capacity(n);
        for d in resp.data {
            if self.dim != 0 && d.embedding.len() != self.dim {
                return Err(remote(format!(
                    "dimension {} instead of {}",
                    d.embedding.len(),
                    self.dim
                )));
            }
            let norm = d
                .embedding
                .iter()
                .map(|x| x * x)
                .sum::<f32>()
                .sqrt()
                .max(1e-12);
            out.push(d.embedding.into_iter().map(|x| x / norm).collect());
        }
        Ok(out)
    }
}

impl Embedder for OpenAiEmbedder {
    fn model_id(&self) -> &str {
        &self.id
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn window_tokens(&self) -> usize {
        self.config.window_tokens
    }

    /// Without the server's tokenizer: one token per character, a safe over-count for
    /// Chinese text.
    fn token_count(&self, text: &str, kind: TextKind) -> usize {
        let prefix = match kind {
            TextKind::Query => &self.config.query_prefix,
            TextKind::Passage => &self.config.passage_prefix,
        };
        prefix.chars().count() + text.chars().count() + 2
    }

    fn embed(&self, texts: &[&str], kind: TextKind) -> Result<Vec<Vec<f32>>, ModelError> {
        let prefix = match kind {
            TextKind::Query => &self.config.query_prefix,
            TextKind::Passage => &self.config.passage_prefix,
        };
        self.request(texts.iter().map(|t| format!("{prefix}{t}")).collect())
    }
}
