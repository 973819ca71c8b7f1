//! `coal fit-rerank`: the learned re-ranking fitted on dev sets, measured on held-out
//! halves, and written as a `[method]` table.

use std::io::Write;

use anyhow::Context;
use query_engine::rerank_fit::{self, FitQuestion, Fold, HeldOut, Tier};

pub fn run(args: crate::config::FitRerankArgs) -> anyhow::Result<()> {
    if let Some(path) = &args.write
        && path.exists()
    {
        anyhow::bail!("{} exists; choose another --write path", path.display());
    }
    let (store, engine) = crate::ask_cmd::open_engine(&args.model.resolve()?, &args.store)?;
    if !engine.retriever().has_embedder() {
        anyhow::bail!("fit-rerank needs the dense retriever: build the store with embeddings");
    }
    let tier = if args.tier == 3 {
        Tier::Graph
    } else {
        Tier::Rerank
    };
    let gold_map = crate::search_cmd::gold_map(&store, args.store.db_url.as_deref())?;
    let mut by_set: Vec<Vec<FitQuestion>> = Vec::new();
    for (set, items) in args.questions.load()? {
        let (items, gold) = crate::search_cmd::gold_items(&gold_map, &set, items, &args.questions)?;
        by_set.push(rerank_fit::collect(&engine, tier, &set, &items, &gold)?);
    }
    let all: Vec<&FitQuestion> = by_set.iter().flatten().collect();
    if let Some(path) = &args.candidates {
        write_candidates(path, &all)?;
    }
    let model = rerank_fit::fit(tier, &all).context(
        "nothing to fit: no candidate of any question is a gold article (or every one is)",
    )?;
    let in_sample = rerank_fit::measure(&all, &model);
    let folds = rerank_fit::two_folds(tier, &by_set);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.json {
        let v = serde_json::json!({
            "model": model,
            "in_sample": in_sample,
            "two_folds": folds,
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
    } else {
        print_table(&mut out, args.tier, all.len(), &in_sample, &folds)?;
    }
    if let Some(path) = &args.write {
        let mut method = engine.config().clone();
        model.install(&mut method);
        crate::ask_cmd::write_method_table(path, &method)?;
    }
    Ok(())
}

fn print_table(
    out: &mut impl Write,
    tier: u8,
    questions: usize,
    in_sample: &[HeldOut],
    folds: &[Fold],
) -> std::io::Result<()> {
    writeln!(
        out,
        "{questions} questions with gold articles; Recall@10 of tier {tier}'s scoring, hand weights vs learned"
    )?;
    writeln!(
        out,
        "| fitted on | measured on | n | hand | learned | gain |"
    )?;
    writeln!(out, "|---|---|---|---|---|---|")?;
    let row = |out: &mut dyn Write, fitted: &str, h: &HeldOut| {
        writeln!(
            out,
            "| {fitted} | {} | {} | {:.3} | {:.3} | {:+.3} |",
            h.set,
            h.questions,
            h.hand_recall,
            h.learned_recall,
            h.learned_recall - h.hand_recall
        )
    };
    for f in folds {
        let held = if f.fitted_on == "even" { "odd" } else { "even" };
        for h in &f.held_out {
            row(
                out,
                &format!("{} items", f.fitted_on),
                &HeldOut {
                    set: format!("{} ({held} items)", h.set),
                    ..h.clone()
                },
            )?;
        }
    }
    for h in in_sample {
        row(out, "all (in sample)", h)?;
    }
    Ok(())
}

/// One JSON line a question: its set, candidates, features, hand scores and gold groups.
fn write_candidates(path: &std::path::Path, questions: &[&FitQuestion]) -> anyhow::Result<()> {
    let err = || format!("cannot write {}", path.display());
    let file = std::fs::File::create(path).with_context(err)?;
    let mut w = std::io::BufWriter::new(file);
    for q in questions {
        let gold: Vec<Vec<&String>> = q.gold.iter().map(|g| g.iter().collect()).collect();
        let v = serde_json::json!({
            "set": q.set,
            "iris": q.iris,
            "features": q.features,
            "hand": q.hand,
            "gold": gold,
        });
        writeln!(w, "{v}").with_context(err)?;
    }
    w.flush().with_context(err)?;
    Ok(())
}
