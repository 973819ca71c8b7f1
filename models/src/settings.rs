//! The `[embedder]` and `[llm]` tables of `coal.toml`, and the clients they describe.
//! The build and the query side both open their models here, so one table means the
//! same model on both sides.

use std::path::{Path, PathBuf};

use crate::{ChatModel, Embedder, ModelError};

fn bad(table: &'static str, message: impl Into<String>) -> ModelError {
    ModelError::Settings {
        table,
        message: message.into(),
    }
}

/// The `[embedder]` table: the local e5 encoder (default) or an OpenAI-compatible
/// embedding endpoint.
#[derive(serde::Deserialize, Debug, Default, Clone)]
#[serde(deny_unknown_fields)]
pub struct EmbedderSettings {
    /// `e5` (the local model, default) or `openai` (any OpenAI-compatible endpoint).
    #[serde(default)]
    pub kind: Option<String>,
    pub url: Option<String>,
    pub model: Option<String>,
    /// Name of the environment variable that holds the API key (the key itself never
    /// goes into the file).
    pub api_key_env: Option<String>,
    #[serde(default)]
    pub query_prefix: String,
    #[serde(default)]
    pub passage_prefix: String,
    pub window_tokens: Option<usize>,
}

impl EmbedderSettings {
    /// The embedder this table names. `local_model` and `threads` are for the local e5
    /// file (its default places when `None`); `verify` checks its sha256 (builds do).
    pub fn open(
        &self,
        local_model: Option<&Path>,
        threads: usize,
        verify: bool,
    ) -> Result<Box<dyn Embedder>, ModelError> {
        match self.kind.as_deref().unwrap_or("e5") {
            "e5" => Ok(Box::new(crate::load_default_e5(
                local_model,
                threads,
                verify,
            )?)),
            "openai" => {
                let (Some(url), Some(model)) = (&self.url, &self.model) else {
                    return Err(bad("embedder", "kind = \"openai\" needs `url` and `model`"));
                };
                let mut cfg = crate::OpenAiConfig::new(url, model);
                if let Some(var) = &self.api_key_env {
                    cfg.api_key =
                        Some(std::env::var(var).map_err(|_| {
                            bad("embedder", format!("api_key_env: ${var} is not set"))
                        })?);
                }
                cfg.query_prefix = self.query_prefix.clone();
                cfg.passage_prefix = self.passage_prefix.clone();
                if let Some(w) = self.window_tokens {
                    cfg.window_tokens = w;
                }
                Ok(Box::new(crate::OpenAiEmbedder::connect(cfg)?))
            }
            other => Err(bad(
                "embedder",
                format!("kind `{other}` is unknown: use \"e5\" or \"openai\""),
            )),
        }
    }
}

/// The `[llm]` table: the chat model that extracts triples, decomposes questions and
/// writes answers from the retrieved articles (without it, answers are extractive).
/// `backend = "http"` (the default) is any OpenAI-compatible endpoint; `backend =
/// "local"` runs a GGUF file in-process with llama.cpp.
#[derive(serde::Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct LlmSettings {
    /// "http" or "local".
    pub backend: Option<String>,
    /// http: the endpoint's base URL and model name.
    pub url: Option<String>,
    pub model: Option<String>,
    /// http: name of the environment variable that holds the API key.
    pub api_key_env: Option<String>,
    pub temperature: Option<f32>,
    pub timeout_secs: Option<u64>,
    pub attempts: Option<u32>,
    /// http: requests in flight at once during triple extraction (default 2; a local
    /// model always runs one).
    pub concurrency: Option<usize>,
    /// local: the GGUF file (relative paths are read from the working directory).
    pub model_path: Option<PathBuf>,
    /// local: threads of one generation (default 1, fastest on a loaded 2-core machine).
    pub threads: Option<i32>,
    /// local: threads of the prompt's prefill (default: `threads`; prefill is
    /// compute-bound and gains from a second core, generation mostly does not).
    pub batch_threads: Option<i32>,
    /// local: tokens generated at most per reply (default 512).
    pub max_tokens: Option<u32>,
    /// local: prompt plus reply in tokens (default 4096).
    pub context_tokens: Option<u32>,
    /// build: after extraction the model judges each kept triple against its article,
    /// and triples it gives a probability below this of being right are dropped (absent:
    /// no second look). Between 0 and 1.
    pub verify_triples: Option<f64>,
    /// build: relations whose extracted triples are left out of the graph (e.g.
    /// `["规定"]`: the local 1.5B model's 规定 triples were right for 54-60% of three
    /// hand-checked samples, its other relations for 80-88%).
    pub skip_relations: Option<Vec<String>>,
    /// A file that keeps the model's replies (JSON lines): a prompt asked again under the
    /// same model, temperature and token bound is answered from it without running the
    /// model (relative paths are read from the working directory).
    pub reply_cache: Option<PathBuf>,
}

impl LlmSettings {
    /// Requests in flight at once during extraction (at least 1).
    pub fn concurrency(&self) -> usize {
        self.concurrency.unwrap_or(2).max(1)
    }

    /// The probability below which the build's verification drops a triple, if set.
    pub fn verify_threshold(&self) -> Result<Option<f64>, ModelError> {
        match self.verify_triples {
            Some(p) if !(p > 0.0 && p < 1.0) => Err(bad(
                "llm",
                format!("verify_triples = {p}: give a probability between 0 and 1 (e.g. 0.5)"),
            )),
            p => Ok(p),
        }
    }

    /// The chat model this table names (a local model is loaded here), behind its
    /// reply cache when the table names one.
    pub fn client(&self) -> Result<Box<dyn ChatModel>, ModelError> {
        let model: Box<dyn ChatModel> = match self.backend.as_deref().unwrap_or("http") {
            "http" => Box::new(self.http_client()?),
            "local" => self.local_client()?,
            other => {
                return Err(bad(
                    "llm",
                    format!("backend `{other}` is unknown: use \"http\" or \"local\""),
                ));
            }
        };
        match &self.reply_cache {
            None => Ok(model),
            Some(path) => Ok(Box::new(crate::CachedChat::open(
                model,
                &self.reply_settings(),
                path,
            )?)),
        }
    }

    /// What besides the model and the prompt decides a reply (the cache's key holds it).
    fn reply_settings(&self) -> String {
        format!(
            "temperature={:?} max_tokens={:?} context_tokens={:?}",
            self.temperature, self.max_tokens, self.context_tokens
        )
    }

    /// A field set that belongs to the other backend is a mistake worth naming.
    fn refuse_fields(&self, fields: &[(&str, bool)], backend: &str) -> Result<(), ModelError> {
        let other = if backend == "http" { "local" } else { "http" };
        match fields.iter().find(|(_, set)| *set) {
            Some((field, _)) => Err(bad(
                "llm",
                format!(
                    "`{field}` is for backend = \"{other}\"; this table is backend = \"{backend}\""
                ),
            )),
            None => Ok(()),
        }
    }

    fn http_client(&self) -> Result<crate::OpenAiChat, ModelError> {
        let (Some(url), Some(model)) = (&self.url, &self.model) else {
            return Err(bad("llm", "backend = \"http\" needs `url` and `model`"));
        };
        self.refuse_fields(
            &[
                ("model_path", self.model_path.is_some()),
                ("threads", self.threads.is_some()),
                ("batch_threads", self.batch_threads.is_some()),
                ("max_tokens", self.max_tokens.is_some()),
                ("context_tokens", self.context_tokens.is_some()),
            ],
            "http",
        )?;
        let mut c = crate::ChatConfig::new(url, model);
        if let Some(var) = &self.api_key_env {
            c.api_key = Some(std::env::var(var).map_err(|_| {
                bad(
                    "llm",
                    format!("api_key_env names `{var}`, which is not set"),
                )
            })?);
        }
        if let Some(t) = self.temperature {
            c.temperature = t;
        }
        if let Some(t) = self.timeout_secs {
            c.timeout = std::time::Duration::from_secs(t);
        }
        if let Some(a) = self.attempts {
            c.attempts = a;
        }
        Ok(crate::OpenAiChat::new(c))
    }

    #[cfg(feature = "local-llm")]
    fn local_client(&self) -> Result<Box<dyn ChatModel>, ModelError> {
        self.refuse_fields(
            &[
                ("url", self.url.is_some()),
                ("model", self.model.is_some()),
                ("api_key_env", self.api_key_env.is_some()),
            ],
            "local",
        )?;
        let Some(path) = &self.model_path else {
            return Err(bad(
                "llm",
                "backend = \"local\" needs `model_path`, a GGUF file (`make llm-model` fetches one)",
            ));
        };
        let mut c = crate::LocalChatConfig::new(path);
        if let Some(t) = self.threads {
            c.threads = t;
        }
        c.batch_threads = self.batch_threads.unwrap_or(c.threads);
        if let Some(t) = self.temperature {
            c.temperature = t;
        }
        if let Some(n) = self.max_tokens {
            c.max_tokens = n;
        }
        if let Some(n) = self.context_tokens {
            c.context_tokens = n;
        }
        Ok(Box::new(crate::LocalChat::load(c)?))
    }

    #[cfg(not(feature = "local-llm"))]
    fn local_client(&self) -> Result<Box<dyn ChatModel>, ModelError> {
        Err(bad(
            "llm",
            "backend = \"local\": this coal was built without the `local-llm` feature (cargo build -p coal --features local-llm)",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn llm(json: &str) -> LlmSettings {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn a_field_of_the_other_backend_is_named() {
        let e = llm(r#"{"url":"http://x","model":"m","max_tokens":5}"#)
            .client()
            .err()
            .unwrap();
        assert_eq!(
            e.to_string(),
            "[llm] `max_tokens` is for backend = \"local\"; this table is backend = \"http\""
        );
        let e = llm(r#"{"backend":"gpu"}"#).client().err().unwrap();
        assert!(e.to_string().contains("backend `gpu` is unknown"), "{e}");
    }

    #[test]
    fn an_openai_embedder_needs_url_and_model() {
        let e = EmbedderSettings {
            kind: Some("openai".into()),
            ..Default::default()
        }
        .open(None, 1, false)
        .err()
        .unwrap();
        assert_eq!(
            e.to_string(),
            "[embedder] kind = \"openai\" needs `url` and `model`"
        );
    }
}
