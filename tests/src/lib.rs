//! Shared helpers for the integration tests that run on the real corpus in `../shared`.

use std::path::PathBuf;

/// The shared data folder: `$COAL_SHARED`, else `../shared` beside the checkout.
pub fn shared() -> PathBuf {
    std::env::var_os("COAL_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared")))
}

pub fn lawrefbook() -> PathBuf {
    shared().join("corpus/lawrefbook")
}

pub fn profile(name: &str) -> PathBuf {
    shared().join("corpus/profiles").join(format!("{name}.txt"))
}

/// The paths a profile lists.
pub fn profile_entries(name: &str) -> Vec<String> {
    std::fs::read_to_string(profile(name))
        .expect("profile exists")
        .lines()
        .map(|l| l.trim().to_owned())
        .filter(|l| !l.is_empty())
        .collect()
}
