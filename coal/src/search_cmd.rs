//! `coal search` and `coal eval retrieval`

use std::collections::HashSet;
use std::io::Write;
use std::time::Instant;

use anyhow::{Context, bail};
use kg_store::Store;
use query_engine::eval::{GoldMap, load_set, score};

use crate::config::{EvalRetrievalArgs, SearchArgs};

/// Characters of article text shown per hit.
const SNIPPET_CHARS: usize = 60;

pub fn search(args: SearchArgs) -> anyhow::Result<()> {
    let question = args.question.trim();
    if question.is_empty() {
        bail!("the question is empty");
    }
    let store = Store::open(&args.store.store, false)?;
    let index = store.text_index()?;
    let hits = index.search(question, args.k, args.include_old)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&hits)?)?;
        return Ok(());
    }
    for (i, h) in hits.iter().enumerate() {
        let a = &h.article;
        let body = a.text.strip_prefix(&a.label).unwrap_or(&a.text).trim();
        let snippet: String = body
            .chars()
            .take(SNIPPET_CHARS)
            .collect::<String>()
            .replace('\n', " ");
        let more = if body.chars().count() > SNIPPET_CHARS {
            "…"
        } else {
            ""
        };
        writeln!(
            out,
            "{:>2}. {:>7.3}  {}({}) {}  {}{}",
            i + 1,
            h.score,
            a.law_title,
            a.version_date,
            a.label,
            snippet,
            more
        )?;
    }
    if hits.is_empty() {
        writeln!(out, "no article matches")?;
    }
    Ok(())
}

pub fn eval_retrieval(args: EvalRetrievalArgs) -> anyhow::Result<()> {
    let ks = args.ks()?;
    let max_k = *ks.iter().max().expect("at least one k");
    let store = Store::open(&args.store.store, false)?;
    let index = store.text_index()?;
    let rt = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let (versions, articles) = rt.block_on(async {
        let db = store.meta(args.store.db_url.as_deref()).await?;
        anyhow::Ok((
            store.law_versions(&db).await?,
            store.articles(&db, None).await?,
        ))
    })?;
    let gold_map = GoldMap::new(&versions, articles);
    let mut report = serde_json::Map::new();
    let mut table = String::new();
    table.push_str("| set | mode | n |");
    for k in &ks {
        table.push_str(&format!(" R@{k} |"));
    }
    table.push_str(" MRR@10 | nDCG@10 |");
    for k in &ks {
        table.push_str(&format!(" P@{k} | F1@{k} |"));
    }
    table.push_str(" p50 ms |\n|");
    table.push_str(&"---|".repeat(5 + ks.len() * 3 + 1));
    table.push('\n');
    for path in &args.sets {
        let items = load_set(path)?;
        let gold: Vec<Vec<HashSet<String>>> = items
            .iter()
            .map(|it| {
                it.gold
                    .iter()
                    .map(|g| gold_map.resolve(it, g).map(|v| v.into_iter().collect()))
                    .collect()
            })
            .collect::<Result<_, _>>()?;
        let mut ranked = Vec::with_capacity(items.len());
        let mut latencies = Vec::with_capacity(items.len());
        for it in &items {
            let t = Instant::now();
            let hits = index.search(&it.question, max_k, false)?;
            latencies.push(t.elapsed().as_secs_f64() * 1000.0);
            ranked.push(hits.into_iter().map(|h| h.article.iri).collect::<Vec<_>>());
        }
        latencies.sort_by(f64::total_cmp);
        let p50 = latencies.get(latencies.len() / 2).copied().unwrap_or(0.0);
        let m = score(&ranked, &gold, &ks);
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().trim_end_matches(".jsonl").to_owned())
            .unwrap_or_default();
        table.push_str(&format!("| {name} | bm25 | {} |", m.questions));
        for k in &ks {
            table.push_str(&format!(" {:.3} |", m.recall_at[k]));
        }
        table.push_str(&format!(" {:.3} | {:.3} |", m.mrr_at_10, m.ndcg_at_10));
        for k in &ks {
            table.push_str(&format!(" {:.3} | {:.3} |", m.precision_at[k], m.f1_at[k]));
        }
        table.push_str(&format!(" {p50:.2} |\n"));
        report.insert(name, serde_json::json!({ "bm25": m, "bm25_p50_ms": p50 }));
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{table}");
    }
    Ok(())
}
