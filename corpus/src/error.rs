use std::path::PathBuf;

/// Errors that stop reading a corpus. Problems inside single files are not errors:
/// they are [`crate::Problem`]s and the rest of the corpus is still read.
#[derive(Debug, thiserror::Error)]
pub enum CorpusError {
    #[error("corpus path {0} does not exist")]
    NotFound(PathBuf),
    #[error("cannot read {0}: {1}")]
    Io(PathBuf, #[source] std::io::Error),
    #[error("cannot walk {0}: {1}")]
    Walk(PathBuf, String),
    #[error("profile {0} needs a corpus folder to resolve its paths against")]
    ProfileWithoutRoot(PathBuf),
    #[error("{}:{line}: the profile names {} which does not exist", profile.display(), path.display())]
    ProfileEntryMissing {
        profile: PathBuf,
        line: usize,
        path: PathBuf,
    },
    #[error("no statute files (.md or .txt) found")]
    NoFiles,
}
