//! `coal search` and `coal eval retrieval`

use std::collections::HashSet;
use std::io::Write;
use std::time::Instant;

use anyhow::{Context, bail};
use kg_store::Store;
use query_engine::eval::{GoldMap, RetrievalMetrics, load_set, score};
use query_engine::retrieve::{HYBRID_CANDIDATES, Hit, Mode, Retriever};

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
        Some(args.model.load(false)?)
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

/// Per item, one set of acceptable IRIs per gold article; an unmappable gold is an error.
pub fn gold_sets(
    gold_map: &GoldMap,
    items: &[query_engine::eval::EvalItem],
) -> anyhow::Result<Vec<Vec<HashSet<String>>>> {
    Ok(items
        .iter()
        .map(|it| {
            it.gold
                .iter()
                .map(|g| gold_map.resolve(it, g).map(|v| v.into_iter().collect()))
                .collect()
        })
        .collect::<Result<_, _>>()?)
}

/// Per item, per gold alternative: the gold article IRIs.
type GoldSets = Vec<Vec<HashSet<String>>>;

/// The items (and their gold sets) to score: all of them, or with `within_store` only
/// those whose every gold article is in the store (the paper's setting: a set's items on
/// a smaller corpus). Reports on stderr how many were left out.
pub fn gold_items(
    gold_map: &GoldMap,
    set: &str,
    items: Vec<query_engine::eval::EvalItem>,
    sets: &crate::config::QuestionSets,
) -> anyhow::Result<(Vec<query_engine::eval::EvalItem>, GoldSets)> {
    if !sets.within_store {
        let gold = gold_sets(gold_map, &items)?;
        return Ok((items, gold));
    }
    let total = items.len();
    let mut kept = Vec::new();
    let mut gold = Vec::new();
    for it in items {
        let resolved: Result<Vec<HashSet<String>>, _> = it
            .gold
            .iter()
            .map(|g| gold_map.resolve(&it, g).map(|v| v.into_iter().collect()))
            .collect();
        if let Ok(g) = resolved
            && !g.is_empty()
        {
            kept.push(it);
            gold.push(g);
        }
    }
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
    let embedder = if args.bm25_only {
        None
    } else {
        Some(args.model.load(false)?)
    };
    let mut retriever = Retriever::open(&store, embedder)?;
    retriever.set_bm25_weights(args.bm25.bm25_weights.unwrap_or_default());
    if let Some(w) = retriever.bigram_warning() {
        eprintln!("warning: {w}");
    }
    let mut gold_map = gold_map(&store, args.store.db_url.as_deref())?;
    gold_map.matching = args.gold_match.matching();
    // The retrievers alone, the method's hybrid, and tier 2's re-ranking (which needs the
    // statute graph and the `[method]` weights; without the graph's signals when older
    // versions are searched too, as `ask --as-of` does).
    let modes: &[&str] = if args.bm25_only {
        &["bm25", "bigram"]
    } else {
        &["bm25", "bigram", "dense", "hybrid", "reranked"]
    };
    let rerank_with = if args.bm25_only {
        None
    } else {
        let method = crate::config::FileConfig::read(args.model.config.as_deref())?.method;
        method.validate().map_err(|e| anyhow::anyhow!(e))?;
        let graph = query_engine::graph::StatuteGraph::new(store.statute_graph()?);
        Some((graph, method))
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
    // Hybrid fuses the top 100 of each list; alone, each retriever is asked for what is scored.
    let candidates = if args.bm25_only {
        max_k
    } else {
        max_k.max(HYBRID_CANDIDATES)
    };
    let mut dump = match &args.dump {
        Some(p) => Some(std::io::BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("cannot write {}", p.display()))?,
        )),
        None => None,
    };
    for path in &args.sets {
        let items = load_set(path)?;
        let gold = gold_sets(&gold_map, &items)?;
        // Per mode: ranked IRIs and latencies. BM25 and dense run once per question;
        // hybrid fuses those same lists (its latency is the sum plus the fusion).
        let mut ranked: Vec<Vec<Vec<String>>> = vec![Vec::new(); modes.len()];
        let mut latency: Vec<Vec<f64>> = vec![Vec::new(); modes.len()];
        for (qi, it) in items.iter().enumerate() {
            let t = Instant::now();
            let bm25 = retriever.bm25(&it.question, candidates, args.include_old)?;
            let t_bm25 = t.elapsed().as_secs_f64() * 1000.0;
            let t = Instant::now();
            let bigram = retriever.bigram(&it.question, candidates, args.include_old)?;
            let t_bigram = t.elapsed().as_secs_f64() * 1000.0;
            let mut dense: Vec<Hit> = Vec::new();
            let mut query_vector: Vec<f32> = Vec::new();
            let mut t_dense = 0.0;
            if !args.bm25_only {
                let t = Instant::now();
                query_vector = retriever.embed_query(&it.question)?;
                dense = retriever.dense_by_vector(&query_vector, candidates, args.include_old)?;
                t_dense = t.elapsed().as_secs_f64() * 1000.0;
            }
            if let Some(out) = dump.as_mut() {
                let pairs = |hits: &[Hit]| -> Vec<(String, f32)> {
                    hits.iter().map(|h| (h.iri.clone(), h.score)).collect()
                };
                let line = serde_json::json!({
                    "set": path.display().to_string(), "id": it.id, "question": it.question,
                    "bm25": pairs(&bm25), "bigram": pairs(&bigram), "dense": pairs(&dense), "gold": gold[qi],
                    "query_vector": query_vector,
                });
                writeln!(out, "{line}")?;
            }
            let head = |l: &[Hit]| l.len().min(HYBRID_CANDIDATES);
            let (b, g, d) = (
                &bm25[..head(&bm25)],
                &bigram[..head(&bigram)],
                &dense[..head(&dense)],
            );
            for (m, &mode) in modes.iter().enumerate() {
                let (list, ms) = match mode {
                    "bm25" => (bm25.clone(), t_bm25),
                    "bigram" => (bigram.clone(), t_bigram),
                    "dense" => (dense.clone(), t_dense),
                    "hybrid" => {
                        let t = Instant::now();
                        let fused = Retriever::fuse(b, d, args.fusion.fusion(), max_k);
                        (fused, t_bm25 + t_dense + t.elapsed().as_secs_f64() * 1000.0)
                    }
                    _ => {
                        let (graph, method) = rerank_with.as_ref().expect("loaded with dense");
                        let graph = (!args.include_old).then_some(graph);
                        let t = Instant::now();
                        let list = query_engine::rerank::rerank(d, b, g, graph, method);
                        let fused = t.elapsed().as_secs_f64() * 1000.0;
                        (list, t_bm25 + t_bigram + t_dense + fused)
                    }
                };
                ranked[m].push(list.into_iter().take(max_k).map(|h| h.iri).collect());
                latency[m].push(ms);
            }
        }
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().trim_end_matches(".jsonl").to_owned())
            .unwrap_or_default();
        let mut per_mode = serde_json::Map::new();
        for (m, &mode_name) in modes.iter().enumerate() {
            latency[m].sort_by(f64::total_cmp);
            let (p50, p95) = (
                query_engine::eval_answer::quantile(&latency[m], 0.50),
                query_engine::eval_answer::quantile(&latency[m], 0.95),
            );
            let metrics: RetrievalMetrics = score(&ranked[m], &gold, &ks);
            table.push_str(&format!("| {name} | {mode_name} | {} |", metrics.questions));
            for k in &ks {
                table.push_str(&format!(" {:.3} |", metrics.recall_at[k]));
            }
            table.push_str(&format!(
                " {:.3} | {:.3} |",
                metrics.mrr_at_10, metrics.ndcg_at_10
            ));
            for k in &ks {
                table.push_str(&format!(
                    " {:.3} | {:.3} |",
                    metrics.precision_at[k], metrics.f1_at[k]
                ));
            }
            table.push_str(&format!(" {p50:.2} | {p95:.2} |\n"));
            per_mode.insert(
                mode_name.to_owned(),
                serde_json::json!({ "metrics": metrics, "p50_ms": p50, "p95_ms": p95 }),
            );
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
