//! `[llm] backend = "local"` from the command line: the shipped example configuration
//! answers a question with the real 0.5B model, and bad configurations are refused with
//! the field or file they concern.

mod common;

use std::path::{Path, PathBuf};

use common::{build, coal, fixture, stderr};

/// The shipped example with its model path made absolute (tests run elsewhere).
fn example_config(dir: &Path, model: &Path) -> PathBuf {
    let example = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/coal.local-llm.toml"),
    )
    .unwrap();
    let text = example.replace(
        "model_path = \".models/qwen2.5-coder-0.5b-instruct-q4.gguf\"",
        &format!(
            "model_path = {:?}\nmax_tokens = 160",
            model.display().to_string()
        ),
    );
    assert_ne!(text, example, "the example names the fetched model");
    // max_tokens given twice would be a TOML error: keep the test's bound only.
    let text = text.replace("max_tokens = 512\n", "");
    let path = dir.join("coal.toml");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn the_example_local_config_answers_with_the_local_model() {
    let Some(model) = coal_tests::local_llm_model() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    build(&store, &fixture("graph"));
    let config = example_config(dir.path(), &model);
    let out = coal(&[
        "ask",
        "--store",
        store.to_str().unwrap(),
        "--config",
        config.to_str().unwrap(),
        "--json",
        "示范循环法规定的循环利用义务是什么？",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let by = v["generated_by"].as_str().unwrap_or_default();
    assert!(by.starts_with("local:qwen2.5-coder-0.5b"), "{v}");
    assert!(!v["answer"].as_str().unwrap_or_default().trim().is_empty());
}

#[test]
fn a_local_config_without_a_usable_model_file_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    build(&store, &fixture("graph"));
    let ask = |config: &str| {
        let path = dir.path().join("bad.toml");
        std::fs::write(&path, config).unwrap();
        coal(&[
            "ask",
            "--store",
            store.to_str().unwrap(),
            "--config",
            path.to_str().unwrap(),
            "示范循环法的目的是什么？",
        ])
    };
    let out = ask("[llm]\nbackend = \"local\"\n");
    assert!(!out.status.success());
    assert!(stderr(&out).contains("model_path"), "{}", stderr(&out));
    let not_gguf = dir.path().join("model.gguf");
    std::fs::write(&not_gguf, "<html>404</html>").unwrap();
    let out = ask(&format!(
        "[llm]\nbackend = \"local\"\nmodel_path = {:?}\n",
        not_gguf.display().to_string()
    ));
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("not a GGUF file") && err.contains("model.gguf"),
        "{err}"
    );
    let out = ask("[llm]\nbackend = \"local\"\nmodel_path = \"/nonexistent/m.gguf\"\n");
    assert!(
        stderr(&out).contains("/nonexistent/m.gguf") && stderr(&out).contains("make llm-model"),
        "{}",
        stderr(&out)
    );
    let out = ask("[llm]\nbackend = \"local\"\nurl = \"http://x\"\nmodel_path = \"m.gguf\"\n");
    assert!(
        stderr(&out).contains("`url` is for backend = \"http\""),
        "{}",
        stderr(&out)
    );
    let out = ask("[llm]\nbackend = \"gpu\"\n");
    assert!(
        stderr(&out).contains("backend `gpu` is unknown"),
        "{}",
        stderr(&out)
    );
}

/// `eval retrieval --draft` with the real 0.5B model: every question gets a draft (the
/// three decoded side by side) and the drafted modes are scored beside the plain ones
/// (`make eval-draft` measures the 1.5B model on lecoqa.dev). The replies land in
/// `[llm] reply_cache`: a second run, and `eval answer`'s tier 3 drafting the same
/// questions one at a time, generate nothing new and score the same.
#[test]
fn eval_retrieval_drafts_answers_with_the_local_model() {
    let Some(model) = coal_tests::local_llm_model() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    build(&store, &common::statutes().join("versions"));
    let config = example_config(dir.path(), &model);
    let cache = dir.path().join("replies.jsonl");
    let text = std::fs::read_to_string(&config).unwrap();
    let text = text.replace(
        "[llm]\n",
        &format!("[llm]\nreply_cache = {:?}\n", cache.display().to_string()),
    );
    std::fs::write(&config, format!("{text}\n[method]\ndraft_from_tier = 3\n")).unwrap();
    let set = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/eval/mini.jsonl");
    let run = || {
        let out = coal(&[
            "eval",
            "retrieval",
            "--store",
            store.to_str().unwrap(),
            "--config",
            config.to_str().unwrap(),
            "--set",
            set.to_str().unwrap(),
            "--draft",
            "--json",
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let v = run();
    for mode in ["dense", "dense+draft", "hybrid+draft", "reranked+draft"] {
        let m = &v["mini"][mode];
        assert_eq!(m["metrics"]["questions"], 3, "{mode}: {v}");
        assert!(m["p50_ms"].as_f64().unwrap() > 0.0, "{mode}: {v}");
    }
    // A drafted mode's time includes the generation.
    assert!(
        v["mini"]["dense+draft"]["p50_ms"].as_f64().unwrap()
            > v["mini"]["dense"]["p50_ms"].as_f64().unwrap(),
        "{v}"
    );
    // Every question is drafted, the one without gold articles too.
    let cached = std::fs::read_to_string(&cache).unwrap();
    assert_eq!(cached.lines().count(), 4, "{cached}");
    let again = run();
    assert_eq!(
        again["mini"]["reranked+draft"]["metrics"], v["mini"]["reranked+draft"]["metrics"],
        "{again}"
    );
    let out = coal(&[
        "eval",
        "answer",
        "--store",
        store.to_str().unwrap(),
        "--config",
        config.to_str().unwrap(),
        "--set",
        set.to_str().unwrap(),
        "--variants",
        "tier3",
        "--extractive",
        "--rule-decomposition",
        "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&cache).unwrap(), cached);
}
