use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: not an e5 model file ({reason})", path.display())]
    BadFormat { path: PathBuf, reason: String },
    #[error("{}: sha256 {actual} does not match the expected {expected}; the file is corrupt or another model", path.display())]
    Checksum {
        path: PathBuf,
        expected: String,
        actual: String,
    },
    #[error("{0}")]
    Missing(String),
    #[error("embedding endpoint {0}")]
    Remote(String),
    #[error("chat endpoint {0}")]
    Chat(String),
    #[error("local LLM: {0}")]
    Local(String),
    /// A `[embedder]` or `[llm]` table of the configuration that names no usable model.
    #[error("[{table}] {message}")]
    Settings {
        table: &'static str,
        message: String,
    },
}
