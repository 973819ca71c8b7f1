//! Models used on both sides of the store: the text encoder (multilingual-e5-small,
//! 4-bit, in pure Rust) that embeds articles at build time and questions at query time,
//! and clients of OpenAI-compatible embedding and chat endpoints.
//!
//! Architecture invariant: this crate knows nothing of statutes, graphs or stores; it
//! turns text into vectors.

pub mod chat;
pub mod e5;
mod embedder;
mod error;
mod http;
#[cfg(feature = "local-llm")]
pub mod local_llm;
pub mod model_file;
pub mod openai;
mod reply_cache;
mod settings;

pub use chat::{ChatConfig, ChatModel, ChatTotals, OpenAiChat, YES_NO};
pub use e5::{E5Encoder, EncoderOptions, PassLayout, TextKind};
pub use embedder::{Embedder, LocalE5, load_default_e5};
pub use error::ModelError;
#[cfg(feature = "local-llm")]
pub use local_llm::{GenerationStats, LocalChat, LocalChatConfig};
pub use openai::{OpenAiConfig, OpenAiEmbedder};
pub use reply_cache::CachedChat;
pub use settings::{EmbedderSettings, LlmSettings};
