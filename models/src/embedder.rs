//! What the build and the query side need from an embedding model.

use crate::{E5Encoder, ModelError, TextKind};

pub trait Embedder: Send + Sync {
    /// Identifies the model in caches and indexes: vectors of two models never mix.
    fn model_id(&self) -> &str;
    fn dim(&self) -> usize;
    /// Tokens one input may have before the model splits or truncates it.
    fn window_tokens(&self) -> usize;
    /// Tokens `text` takes, including the model's own markers.
    fn token_count(&self, text: &str, kind: TextKind) -> usize;
    /// L2-normalized vectors, one per text.
    fn embed(&self, texts: &[&str], kind: TextKind) -> Result<Vec<Vec<f32>>, ModelError>;
}

/// The local e5 encoder with its model id.
pub struct LocalE5 {
    pub encoder: E5Encoder,
    pub id: String,
}

impl Embedder for LocalE5 {
    fn model_id(&self) -> &str {
        &self.id
    }

    fn dim(&self) -> usize {
        self.encoder.dim()
    }

    fn window_tokens(&self) -> usize {
        self.encoder.window_tokens() + 2
    }

    fn token_count(&self, text: &str, kind: TextKind) -> usize {
        self.encoder.token_count(text, kind)
    }

    fn embed(&self, texts: &[&str], kind: TextKind) -> Result<Vec<Vec<f32>>, ModelError> {
        Ok(self.encoder.embed(texts, kind))
    }
}

/// Loads the default local model. With `verify` the file's sha256 must be the published
/// one (builds verify; queries skip the 0.3 s check and rely on the index's model id).
pub fn load_default_e5(
    explicit: Option<&std::path::Path>,
    threads: usize,
    verify: bool,
) -> Result<LocalE5, ModelError> {
    let path = crate::model_file::locate(explicit)?;
    if verify {
        crate::model_file::verify(&path, crate::model_file::E5_SHA256)?;
    }
    let encoder = E5Encoder::load(&path, &crate::EncoderOptions { threads })?;
    Ok(LocalE5 {
        encoder,
        id: crate::model_file::E5_MODEL_ID.to_owned(),
    })
}
