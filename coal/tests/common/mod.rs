//! What the `coal` test binaries share: running the binary, reading its output.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs `coal` with the real embedding model and no store or corpus from the environment.
pub fn coal(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_coal"))
        .args(args)
        .env_remove("COAL_STORE")
        .env_remove("COAL_CORPUS")
        .env(
            "COAL_MODEL",
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/models/e5-small-q4.bin"),
        )
        .output()
        .unwrap()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A fixture folder of this crate's tests.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// The corpus crate's fixture statutes.
pub fn statutes() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/tests/fixtures")
}

/// `dir/corpus`, holding copies of these fixture statutes (paths below [`statutes`]).
pub fn corpus_of(dir: &Path, files: &[&str]) -> PathBuf {
    let corpus = dir.join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    for f in files {
        let from = statutes().join(f);
        std::fs::copy(&from, corpus.join(from.file_name().unwrap())).unwrap();
    }
    corpus
}

/// `coal build` of a corpus folder into `store`; must succeed.
pub fn build(store: &Path, corpus: &Path) {
    let out = coal(&[
        "build",
        "--corpus",
        corpus.to_str().unwrap(),
        "--store",
        store.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
}

/// `coal build --json` with extra flags; must succeed; returns the JSON summary.
pub fn build_json(store: &Path, corpus: &Path, flags: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "build",
        "--corpus",
        corpus.to_str().unwrap(),
        "--store",
        store.to_str().unwrap(),
        "--json",
    ];
    args.extend_from_slice(flags);
    let out = coal(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `coal ask --json --explain`; must succeed.
pub fn ask_json(store: &str, extra: &[&str], question: &str) -> serde_json::Value {
    let mut args = vec!["ask", "--store", store, "--json", "--explain"];
    args.extend_from_slice(extra);
    args.push(question);
    let out = coal(&args);
    assert!(out.status.success(), "{question}: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}
