//! Any OpenAI-compatible `/v1/chat/completions` endpoint (llama.cpp's server, Ollama,
//! vLLM, a hosted API) as a [`ChatModel`].

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::ModelError;
use crate::http::{Endpoint, post_json};

/// The answers of a yes-or-no judgement read from the logits ([`ChatModel::option_probabilities`]):
/// 是 and 否, one token each in the models this project runs.
pub const YES_NO: [&str; 2] = ["是", "否"];

/// A model that answers a system and a user message with text.
pub trait ChatModel: Send + Sync {
    /// Names the model and endpoint (for traces and caches).
    fn id(&self) -> &str;
    fn complete(&self, system: &str, user: &str) -> Result<String, ModelError>;

    /// A reply that must be JSON: backends that can constrain generation (llama.cpp's
    /// grammars) do; the others are asked in the prompt and checked by the caller.
    fn complete_json(&self, system: &str, user: &str) -> Result<String, ModelError> {
        self.complete(system, user)
    }

    /// A reply in the shape a GBNF grammar (llama.cpp's format) allows, from backends that
    /// can constrain generation; the others give [`ChatModel::complete_json`]. A grammar
    /// can bound what JSON alone cannot (how many items a list holds): a small model
    /// otherwise repeats list items until `max_tokens` cuts the reply. The caller checks
    /// the shape either way.
    fn complete_with_grammar(
        &self,
        system: &str,
        user: &str,
        _grammar: &str,
    ) -> Result<String, ModelError> {
        self.complete_json(system, user)
    }

    /// How likely the model finds each of `options` as the start of its reply, normalised
    /// over the options: a judgement (是/否) read from the model's logits rather than
    /// sampled, so that a caller can set its own threshold. Backends without logits (the
    /// HTTP one) sample a reply and give 1 to the option it starts with.
    fn option_probabilities(
        &self,
        system: &str,
        user: &str,
        options: &[&str],
    ) -> Result<Vec<f64>, ModelError> {
        let reply = self.complete(system, user)?;
        let reply = reply.trim_start();
        match options.iter().position(|o| reply.starts_with(o)) {
            Some(i) => Ok((0..options.len()).map(|j| (i == j) as u8 as f64).collect()),
            None => Err(ModelError::Chat(format!(
                "the reply starts with none of {options:?}: {}",
                reply.chars().take(40).collect::<String>()
            ))),
        }
    }

    /// [`ChatModel::option_probabilities`] for several user messages under one system
    /// prompt, in their order. Backends with a KV cache (the local one) read the opening
    /// the messages share once: judging several candidates for one question costs the
    /// question's tokens once.
    fn option_probabilities_many(
        &self,
        system: &str,
        users: &[&str],
        options: &[&str],
    ) -> Result<Vec<Vec<f64>>, ModelError> {
        users
            .iter()
            .map(|u| self.option_probabilities(system, u, options))
            .collect()
    }

    /// Replies to several user messages under one system prompt, in their order.
    /// Backends that can decode several sequences at once (the local one: on a CPU one
    /// token of several sequences costs little more than one token of one, since
    /// generation waits on memory) do so; the others answer one after another.
    fn complete_many(&self, system: &str, users: &[&str]) -> Result<Vec<String>, ModelError> {
        users.iter().map(|u| self.complete(system, u)).collect()
    }

    /// Whether requests must not overlap (a local model on the CPU): callers then run
    /// one at a time whatever concurrency they were given.
    fn one_at_a_time(&self) -> bool {
        false
    }

    /// What the replies so far cost, for backends that count it (the local one).
    fn totals(&self) -> Option<ChatTotals> {
        None
    }
}

/// Replies generated, tokens and seconds, summed since the model was loaded.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct ChatTotals {
    pub replies: usize,
    pub prompt_tokens: usize,
    pub prefill_secs: f64,
    pub generated_tokens: usize,
    pub generation_secs: f64,
    /// Replies cut at the token bound.
    pub truncated: usize,
}

impl ChatTotals {
    /// What was spent between `earlier` and `self`.
    pub fn since(&self, earlier: &ChatTotals) -> ChatTotals {
        ChatTotals {
            replies: self.replies - earlier.replies,
            prompt_tokens: self.prompt_tokens - earlier.prompt_tokens,
            prefill_secs: self.prefill_secs - earlier.prefill_secs,
            generated_tokens: self.generated_tokens - earlier.generated_tokens,
            generation_secs: self.generation_secs - earlier.generation_secs,
            truncated: self.truncated - earlier.truncated,
        }
    }

    /// Generated tokens per second of generation.
    pub fn tokens_per_sec(&self) -> f64 {
        if self.generation_secs > 0.0 {
            self.generated_tokens as f64 / self.generation_secs
        } else {
            0.0
        }
    }
}

/// The JSON of a reply, without the Markdown fences (```json … ```) models like to add
/// even when told to output JSON only.
pub fn json_text(reply: &str) -> &str {
    let t = reply.trim();
    let t = t
        .strip_prefix("```json")
        .or_else(|| t.strip_prefix("```"))
        .unwrap_or(t);
    t.strip_suffix("```").unwrap_or(t).trim()
}

#[derive(Debug, Clone)]
pub struct ChatConfig {
    /// Base URL, e.g. `http://localhost:8080` (`/v1/chat/completions` is appended).
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
    pub temperature: f32,
    pub timeout: Duration,
    /// Attempts per request (server errors and timeouts are retried with backoff).
    pub attempts: u32,
}

impl ChatConfig {
    pub fn new(base_url: &str, model: &str) -> ChatConfig {
        ChatConfig {
            base_url: base_url.trim_end_matches('/').to_owned(),
            model: model.to_owned(),
            api_key: None,
            // The method's authors generated at 0.3.
            temperature: 0.3,
            timeout: Duration::from_secs(120),
            attempts: 3,
        }
    }
}

#[derive(Serialize)]
struct Message<'a> {
    role: &'a str,
    content: &'a str,
}

#[derive(Serialize)]
struct Request<'a> {
    model: &'a str,
    messages: [Message<'a>; 2],
    temperature: f32,
}

#[derive(Deserialize)]
struct Response {
    choices: Vec<Choice>,
}

#[derive(Deserialize)]
struct Choice {
    message: ChoiceMessage,
}

#[derive(Deserialize)]
struct ChoiceMessage {
    content: String,
}

pub struct OpenAiChat {
    config: ChatConfig,
    id: String,
}

impl OpenAiChat {
    pub fn new(config: ChatConfig) -> OpenAiChat {
        let id = format!("openai:{}@{}", config.model, config.base_url);
        OpenAiChat { config, id }
    }
}

impl ChatModel for OpenAiChat {
    fn id(&self) -> &str {
        &self.id
    }

    fn complete(&self, system: &str, user: &str) -> Result<String, ModelError> {
        let cfg = &self.config;
        let ep = Endpoint {
            base_url: cfg.base_url.clone(),
            api_key: cfg.api_key.clone(),
            timeout: cfg.timeout,
            attempts: cfg.attempts,
        };
        let body = Request {
            model: &cfg.model,
            messages: [
                Message {
                    role: "system",
                    content: system,
                },
                Message {
                    role: "user",
                    content: user,
                },
            ],
            temperature: cfg.temperature,
        };
        let resp: Response = post_json(&ep, "/v1/chat/completions", &body)
            .map_err(|m| ModelError::Chat(format!("{}/v1/chat/completions: {m}", cfg.base_url)))?;
        resp.choices
            .into_iter()
            .next()
            .map(|c| c.message.content)
            .ok_or_else(|| {
                ModelError::Chat(format!("{}/v1/chat/completions: no choices", cfg.base_url))
            })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn fences_around_json_are_removed() {
        assert_eq!(super::json_text("```json\n{\"a\":1}\n```"), "{\"a\":1}");
        assert_eq!(super::json_text("```\n[1]\n```"), "[1]");
        assert_eq!(super::json_text("  {\"a\":1} "), "{\"a\":1}");
        assert_eq!(super::json_text("好的"), "好的");
    }
}
