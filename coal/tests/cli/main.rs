//! The `coal` binary end to end on small fixture statutes: real RocksDB store, real
//! SQLite. One test binary (one link), a module per feature.

#[path = "../common/mod.rs"]
mod common;

mod ask;
mod bench;
mod build;
mod llm;
mod search;
mod versions;

use std::path::{Path, PathBuf};

use common::{ask_json, build_json as build_with, coal, stderr, stdout};

fn fixtures() -> PathBuf {
    common::statutes()
}

fn build(store: &Path, corpus: &Path) -> serde_json::Value {
    build_with(store, corpus, &[])
}

fn eval_fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/eval")
        .join(name)
}

/// A store of the 示范劳动法 fixture (references, items) and the 示范保障法 versions.
fn ask_store(dir: &Path) -> String {
    let store = dir.join("store");
    let profile = eval_fixture("ask_profile.txt");
    let out = coal(&[
        "build",
        "--corpus",
        fixtures().to_str().unwrap(),
        "--profile",
        profile.to_str().unwrap(),
        "--store",
        store.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    store.to_str().unwrap().to_owned()
}
