//! Any OpenAI-compatible `/v1/embeddings` endpoint (Ollama, vLLM, llama.cpp's server, a
//! hosted API) as an [`Embedder`].
//!
//! The HTTP client is blocking and runs on a thread of its own for every call, so the
//! embedder can be used from synchronous code and from inside an async runtime alike.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::http::{Endpoint, post_json};
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
        let cfg = &self.config;
        let n = input.len();
        let remote = |m: String| ModelError::Remote(format!("{}/v1/embeddings: {m}", cfg.base_url));
        let ep = Endpoint {
            base_url: cfg.base_url.clone(),
            api_key: cfg.api_key.clone(),
            timeout: cfg.timeout,
            attempts: cfg.attempts,
        };
        let body = Request {
            model: &cfg.model,
            input,
        };
        let result = post_json::<_, Response>(&ep, "/v1/embeddings", &body);
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
