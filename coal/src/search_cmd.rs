//! `coal search` and `coal eval retrieval`

use std::io::Write;

use anyhow::{Context, bail};
use kg_store::Store;
use query_engine::eval::{GoldMap, GoldSets, load_set};
use query_engine::eval_retrieval::RetrievalRun;
use query_engine::retrieve::{Hit, Mode, Retriever};

use crate::config::{EvalRetrievalArgs, SearchArgs};

/// Characters of article text shown per hit.
const SNIPPET_CHARS: usize = 60;

pub fn search(args: SearchArgs) -> anyhow::Result<()> {
    if args.question.trim().is_empty() {
        bail!("the question is empty");
    }
    let store = Store::open(&args.store.store, false)?;
    let mode = args.mode.mode();
    let embedder = if matches!(mode, Mode::Bm25 | Mode::Bigram) {
        None
    } else {
        Some(args.model.resolve()?.embedder(false)?)
    };
    let mut retriever = Retriever::open(&store, embedder)?;
    retriever.set_bm25_weights(args.bm25.bm25_weights.unwrap_or_default());
    let result = retriever.search(
        &args.question,
        mode,
        args.fusion.fusion(),
        args.k,
        args.include_old,
    )?;
    for w in &result.warnings {
        eprintln!("warning: {w}");
    }
    let mut rows = Vec::new();
    for h in &result.hits {
        let article = retriever.article(&h.iri)?.with_context(|| {
            format!("{} is in the vector index but not in the BM25 index", h.iri)
        })?;
        rows.push((h, article));
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.json {
        let json: Vec<_> = rows
            .iter()
            .map(|(h, a)| serde_json::json!({ "hit": h, "article": a }))
            .collect();
        writeln!(out, "{}", serde_json::to_string_pretty(&json)?)?;
        return Ok(());
    }
    for (i, (h, a)) in rows.iter().enumerate() {
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
    if rows.is_empty() {
        writeln!(out, "no article matches")?;
    }
    Ok(())
}

/// Gold citations of the store's metadata mapped to article IRIs.
pub fn gold_map(store: &Store, db_url: Option<&str>) -> anyhow::Result<GoldMap> {
    let meta = store.metadata(db_url)?;
    Ok(GoldMap::new(&meta.law_versions()?, meta.articles(None)?))
}

/// The items (and their gold sets) to score: all of them, or with `within_store` only
/// those whose every gold article is in the store. Says on stderr how many were left out.
pub fn gold_items(
    gold_map: &GoldMap,
    set: &str,
    items: Vec<query_engine::eval::EvalItem>,
    sets: &crate::config::QuestionSets,
) -> anyhow::Result<(Vec<query_engine::eval::EvalItem>, GoldSets)> {
    if !sets.within_store {
        let gold = gold_map.gold_sets(&items)?;
        return Ok((items, gold));
    }
    let total = items.len();
    let (mut kept, mut gold) = gold_map.within_store(items);
    eprintln!(
        "{set}: {} of {total} items have every gold article in this store (--within-store)",
        kept.len()
    );
    if let Some(limit) = sets.limit {
        kept.truncate(limit);
        gold.truncate(limit);
    }
    Ok((kept, gold))
}

pub fn eval_retrieval(args: EvalRetrievalArgs) -> anyhow::Result<()> {
    let ks = args.ks()?;
    let max_k = *ks.iter().max().expect("at least one k");
    let store = Store::open(&args.store.store, false)?;
    // BM25 alone needs neither the model nor the configuration file.
    let models = (!args.bm25_only)
        .then(|| args.model.resolve())
        .transpose()?;
    let embedder = match &models {
        Some(m) => Some(m.embedder(false)?),
        None => None,
    };
    let mut retriever = Retriever::open(&store, embedder)?;
    retriever.set_bm25_weights(args.bm25.bm25_weights.unwrap_or_default());
    if let Some(w) = retriever.bigram_warning() {
        eprintln!("warning: {w}");
    }
    let mut gold_map = gold_map(&store, args.store.db_url.as_deref())?;
    gold_map.matching = args.gold_match.matching();
    // Tier 2's re-ranking needs the statute graph and the `[method]` weights.
    let rerank_with = match &models {
        Some(m) => Some((
            query_engine::graph::StatuteGraph::new(store.statute_graph()?),
            m.method()?,
        )),
        None => None,
    };
    // --draft conflicts with --bm25-only (clap), so the model is there when it is asked.
    let chat = match models.as_ref().filter(|_| args.draft) {
        None => None,
        Some(m) => match m.chat()? {
            Some((chat, _)) => Some(chat),
            None => anyhow::bail!(
                "--draft needs a chat model: add an [llm] table to the configuration file (examples/coal.local-llm.toml)"
            ),
        },
    };
    let run = RetrievalRun {
        retriever: &retriever,
        rerank: rerank_with.as_ref().map(|(g, m)| (g, m)),
        fusion: args.fusion.fusion(),
        include_old: args.include_old,
        max_k,
        draft: chat.as_deref().map(|chat| query_engine::draft::Drafting {
            chat,
            weight: args.draft_weight,
            batch: args.draft_batch as usize,
        }),
    };
    let mut report = serde_json::Map::new();
    let mut table = String::from("| set | mode | n |");
    for k in &ks {
        table.push_str(&format!(" R@{k} |"));
    }
    table.push_str(" MRR@10 | nDCG@10 |");
    for k in &ks {
        table.push_str(&format!(" P@{k} | F1@{k} |"));
    }
    table.push_str(" p50 ms | p95 ms |\n|");
    table.push_str(&"---|".repeat(5 + ks.len() * 3 + 2));
    table.push('\n');
    let mut dump = match &args.dump {
        Some(p) => Some(std::io::BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("cannot write {}", p.display()))?,
        )),
        None => None,
    };
    for path in &args.sets {
        let mut items = load_set(path)?;
        if let Some(n) = args.limit {
            items.truncate(n);
        }
        let gold = gold_map.gold_sets(&items)?;
        let runs = run.run(&items, |qi, lists| -> anyhow::Result<()> {
            if let Some(out) = dump.as_mut() {
                let pairs = |hits: &[Hit]| -> Vec<(String, f32)> {
                    hits.iter().map(|h| (h.iri.clone(), h.score)).collect()
                };
                let it = &items[qi];
                let line = serde_json::json!({
                    "set": path.display().to_string(), "id": it.id, "question": it.question,
                    "bm25": pairs(lists.bm25), "bigram": pairs(lists.bigram), "dense": pairs(lists.dense),
                    "gold": gold[qi], "query_vector": lists.query_vector,
                });
                writeln!(out, "{line}").context("cannot write the --dump file")?;
            }
            Ok(())
        })?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().trim_end_matches(".jsonl").to_owned())
            .unwrap_or_default();
        let mut per_mode = serde_json::Map::new();
        for mode_run in &runs {
            let r = mode_run.report(&gold, &ks);
            let m = &r.metrics;
            table.push_str(&format!("| {name} | {} | {} |", mode_run.mode, m.questions));
            for k in &ks {
                table.push_str(&format!(" {:.3} |", m.recall_at[k]));
            }
            table.push_str(&format!(" {:.3} | {:.3} |", m.mrr_at_10, m.ndcg_at_10));
            for k in &ks {
                table.push_str(&format!(" {:.3} | {:.3} |", m.precision_at[k], m.f1_at[k]));
            }
            table.push_str(&format!(" {:.2} | {:.2} |\n", r.p50_ms, r.p95_ms));
            per_mode.insert(mode_run.mode.to_owned(), serde_json::to_value(&r)?);
        }
        report.insert(name, serde_json::Value::Object(per_mode));
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{table}");
    }
    Ok(())
}
