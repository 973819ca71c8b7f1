//! `coal bench encoder`: encoder throughput and single-question latency on real articles.

use query_engine::eval_answer::quantile;
use std::time::Instant;

use anyhow::Context;
use coal_models::{E5Encoder, EncoderOptions, TextKind};

use crate::config::BenchEncoderArgs;

pub fn encoder(args: BenchEncoderArgs) -> anyhow::Result<()> {
    let path = coal_models::model_file::locate(args.model.model.as_deref())?;
    let t = Instant::now();
    let enc = E5Encoder::load(
        &path,
        &EncoderOptions {
            threads: args.model.threads,
        },
    )?;
    let load = t.elapsed();
    let texts = article_texts(&args.corpus, &args.profile, 0, args.articles)?;
    let texts: Vec<String> = texts.into_iter().map(|t| t.replace('\n', " ")).collect();
    if let Some(path) = &args.write_texts {
        std::fs::write(path, texts.join("\n") + "\n")
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    let refs: Vec<&str> = texts.iter().map(|s| s.as_str()).collect();
    let tokens: usize = refs
        .iter()
        .map(|t| enc.token_count(t, TextKind::Passage))
        .sum();
    anyhow::ensure!(
        args.batch.iter().all(|&b| b > 0) && args.passes > 0,
        "--batch sizes and --passes must be at least 1"
    );
    let threads = if args.model.threads == 0 {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    } else {
        args.model.threads
    };
    let mut rows = Vec::new();
    for &layout in &args.layout {
        for &batch in &args.batch {
            let mut secs = Vec::new();
            for _ in 0..args.passes {
                let t = Instant::now();
                for chunk in refs.chunks(batch) {
                    enc.embed_with(chunk, TextKind::Passage, layout.into());
                }
                secs.push(t.elapsed().as_secs_f64());
            }
            secs.sort_by(f64::total_cmp);
            rows.push((layout, batch, quantile(&secs, 0.5)));
        }
    }
    let mut questions = Vec::new();
    for set in &args.questions {
        let items = query_engine::eval::load_set(set)
            .with_context(|| format!("cannot read the question set {}", set.display()))?;
        questions.extend(items.into_iter().map(|i| i.question));
    }
    if args.questions.is_empty() {
        questions = [
            "用人单位解除劳动合同需要支付经济补偿吗？",
            "交通事故责任如何认定",
            "什么是无固定期限劳动合同",
        ]
        .map(String::from)
        .to_vec();
    }
    let mut lat = Vec::new();
    for _ in 0..args.repeat {
        for q in &questions {
            let t = Instant::now();
            enc.embed(&[q], TextKind::Query);
            lat.push(t.elapsed().as_secs_f64() * 1000.0);
        }
    }
    lat.sort_by(f64::total_cmp);
    println!(
        "model {} loaded in {:.2} s",
        path.display(),
        load.as_secs_f64()
    );
    for (layout, batch, secs) in rows {
        println!(
            "passages: {} articles, {} tokens in {:.1} s: {:.0} tokens/s, {:.1} articles/s ({} threads, {} per call, passes {layout:?}, median of {})",
            refs.len(),
            tokens,
            secs,
            tokens as f64 / secs,
            refs.len() as f64 / secs,
            threads,
            batch,
            args.passes
        );
    }
    println!(
        "one question: p50 {:.1} ms, p95 {:.1} ms over {} runs",
        quantile(&lat, 0.5),
        quantile(&lat, 0.95),
        lat.len()
    );
    Ok(())
}

/// A trace's query embedding and its vector searches (articles, 款), in milliseconds.
fn vector_ms(timings: &std::collections::BTreeMap<String, f64>) -> (f64, f64) {
    let at = |stage: &str| timings.get(stage).copied().unwrap_or(0.0);
    (at("embed"), at("dense") + at("paragraphs"))
}

/// `coal bench ask`: the engine on real questions, warm, one at a time.
pub fn ask(args: crate::config::BenchAskArgs) -> anyhow::Result<()> {
    use query_engine::engine::AskOptions;
    let t = Instant::now();
    let (_store, engine, opened) =
        crate::ask_cmd::open_engine_timed(&args.model.resolve()?, &args.store)?;
    let startup = t.elapsed().as_secs_f64() * 1e3;
    // The first question pays for lazy initialization (the jieba dictionary).
    let t = Instant::now();
    engine.ask("劳动合同", &AskOptions::default())?;
    let first = t.elapsed().as_secs_f64() * 1e3;
    let mut total = Vec::new();
    let mut without_embedding = Vec::new();
    let mut without_vectors = Vec::new();
    // Each stage of the routed questions (the query embedding, the article and 款 vector
    // searches, BM25, ...), by its trace name.
    let mut stage_ms: std::collections::BTreeMap<String, Vec<f64>> = Default::default();
    // Question → the answer written as JSON, as `coal ask --json` (and `/api/ask`) do.
    let mut as_json = Vec::new();
    let mut s1 = Vec::new();
    let mut tiers = std::collections::BTreeMap::new();
    let mut types = std::collections::BTreeMap::new();
    // Per forced tier: question → context; the same without the query embedding; without
    // the embedding and the vector searches (what each tier adds to the shared
    // retrieval); the tier's own stage.
    let mut per_tier: Vec<[Vec<f64>; 4]> = vec![Default::default(); 4];
    for (_, items) in args.questions.load()? {
        for item in &items {
            // The routed question first, as a user's question comes: its forced-tier
            // repeats below find the same articles in the index caches.
            let t = Instant::now();
            let a = engine.ask(&item.question, &AskOptions::default())?;
            let ms = t.elapsed().as_secs_f64() * 1e3;
            total.push(ms);
            let json = std::hint::black_box(serde_json::to_vec(&a)?);
            as_json.push(t.elapsed().as_secs_f64() * 1e3);
            drop(json);
            let (embed_ms, search_ms) = vector_ms(&a.trace.timings_ms);
            without_embedding.push(ms - embed_ms);
            without_vectors.push(ms - embed_ms - search_ms);
            for (stage, ms) in &a.trace.timings_ms {
                stage_ms.entry(stage.clone()).or_default().push(*ms);
            }
            *tiers.entry(a.tier).or_insert(0usize) += 1;
            match &a.trace.complexity {
                Some(cx) => {
                    s1.push(cx.consistency.s1);
                    *types
                        .entry(format!("{:?}", cx.intrinsic.question_type))
                        .or_insert(0usize) += 1;
                }
                None => {
                    *types
                        .entry(query_engine::eval_answer::GRAPH_LOOKUP_TYPE.to_owned())
                        .or_insert(0) += 1
                }
            }
            for t in 1..=4u8 {
                let opts = AskOptions {
                    force_tier: Some(t),
                    ..AskOptions::default()
                };
                let start = Instant::now();
                let a = engine.ask(&item.question, &opts)?;
                let ms = start.elapsed().as_secs_f64() * 1e3;
                let (embed_ms, search_ms) = vector_ms(&a.trace.timings_ms);
                let tier_ms = a.trace.timings_ms.get("tier").copied().unwrap_or(0.0);
                let e = &mut per_tier[t as usize - 1];
                e[0].push(ms);
                e[1].push(ms - embed_ms);
                e[2].push(ms - embed_ms - search_ms);
                e[3].push(tier_ms);
            }
        }
    }
    for v in [
        &mut total,
        &mut as_json,
        &mut without_embedding,
        &mut without_vectors,
        &mut s1,
    ] {
        v.sort_by(f64::total_cmp);
    }
    println!(
        "start-up {startup:.0} ms (store, encoder, indexes and statute graph, loaded in parallel); the graph built in memory in {:.0} ms ({} nodes, {} edges, ~{:.1} MB); first question {first:.0} ms",
        engine.graph_load_ms(),
        engine.graph().stats.nodes,
        engine.graph().stats.edges,
        engine.graph().stats.memory_bytes as f64 / 1e6
    );
    let stages: Vec<String> = opened
        .iter()
        .map(|(n, ms)| format!("{n} {ms:.0}"))
        .collect();
    println!("start-up stages (ms): {}", stages.join(", "));
    for (t, runs) in per_tier.iter_mut().enumerate() {
        for v in runs.iter_mut() {
            v.sort_by(f64::total_cmp);
        }
        let [all, without_embedding, without_vectors, tier] = &*runs;
        println!(
            "tier {} forced: question → context p50 {:.1} ms, p95 {:.1} ms; without the query embedding p50 {:.2} ms, p95 {:.2} ms; without it and the vector searches p50 {:.2} ms, p95 {:.2} ms; the tier's own stage p50 {:.2} ms, p95 {:.2} ms",
            t + 1,
            quantile(all, 0.5),
            quantile(all, 0.95),
            quantile(without_embedding, 0.5),
            quantile(without_embedding, 0.95),
            quantile(without_vectors, 0.5),
            quantile(without_vectors, 0.95),
            quantile(tier, 0.5),
            quantile(tier, 0.95)
        );
    }
    println!(
        "{} questions: question → context p50 {:.1} ms, p95 {:.1} ms; without the query embedding p50 {:.2} ms, p95 {:.2} ms; without it and the vector searches p50 {:.2} ms, p95 {:.2} ms",
        total.len(),
        quantile(&total, 0.5),
        quantile(&total, 0.95),
        quantile(&without_embedding, 0.5),
        quantile(&without_embedding, 0.95),
        quantile(&without_vectors, 0.5),
        quantile(&without_vectors, 0.95)
    );
    println!(
        "question → answer written as JSON (as `coal ask --json`): p50 {:.1} ms, p95 {:.1} ms",
        quantile(&as_json, 0.5),
        quantile(&as_json, 0.95)
    );
    let per_stage: Vec<String> = stage_ms
        .iter_mut()
        .map(|(stage, v)| {
            v.sort_by(f64::total_cmp);
            format!("{stage} {:.2}/{:.2}", quantile(v, 0.5), quantile(v, 0.95))
        })
        .collect();
    println!(
        "routed questions' stages, p50/p95 ms (embed: the query embedding; dense, paragraphs: the article and 款 vector searches): {}",
        per_stage.join(", ")
    );
    println!("tiers: {tiers:?}");
    println!("types: {types:?}");
    println!(
        "BM25 top score s1: p10 {:.1}, p25 {:.1}, p50 {:.1}, p75 {:.1}, p90 {:.1}",
        quantile(&s1, 0.1),
        quantile(&s1, 0.25),
        quantile(&s1, 0.5),
        quantile(&s1, 0.75),
        quantile(&s1, 0.9)
    );
    Ok(())
}

/// The first `n` article texts of the profile's statutes longer than `min_chars`.
fn article_texts(
    corpus: &std::path::Path,
    profile: &std::path::Path,
    min_chars: usize,
    n: usize,
) -> anyhow::Result<Vec<String>> {
    let spec = coal_corpus::CorpusSpec::folder(corpus).with_profile(profile);
    let corpus =
        coal_corpus::load_corpus(&spec, &|_, _| {}).context("reading the benchmark corpus")?;
    Ok(corpus
        .versions()
        .flat_map(|v| v.articles.iter().map(|a| a.text()))
        .filter(|t| t.chars().count() > min_chars)
        .take(n)
        .collect())
}

/// `coal bench llm`: the local chat model's prefill and generation speed for each thread
/// setting, on prompts built from real articles (greedy, so every setting generates the
/// same tokens).
#[cfg(feature = "local-llm")]
pub fn llm(args: crate::config::BenchLlmArgs) -> anyhow::Result<()> {
    use coal_models::{LocalChat, LocalChatConfig};
    // Articles long enough to make a prompt of a few hundred tokens, as `ask` sends.
    let texts = article_texts(&args.corpus, &args.profile, 150, args.prompts)?;
    anyhow::ensure!(
        !texts.is_empty(),
        "no article of the profile is long enough"
    );
    let system = "你是法律助手。只根据给出的条文回答，并注明条文。";
    println!(
        "| threads | batch threads | prompt tokens | prefill tokens/s | generated | generation tokens/s | s per reply |"
    );
    println!("|---|---|---|---|---|---|---|");
    for &threads in &args.threads {
        for &batch_threads in args.batch_threads.as_deref().unwrap_or(&[threads]) {
            let mut cfg = LocalChatConfig::new(&args.model_path);
            cfg.threads = threads;
            cfg.batch_threads = batch_threads;
            cfg.temperature = 0.0;
            cfg.max_tokens = args.max_tokens;
            let chat = LocalChat::load(cfg)?;
            let (mut prefill, mut generation, mut total) = (Vec::new(), Vec::new(), Vec::new());
            let (mut prompt_tokens, mut generated) = (0, 0);
            for _ in 0..args.repeat {
                for t in &texts {
                    let user = format!("条文：{t}\n问题：这一条规定了什么？");
                    coal_models::ChatModel::complete(&chat, system, &user)?;
                    let s = chat.last_stats();
                    prefill.push(s.prompt_tokens as f64 / s.prefill_secs.max(1e-9));
                    generation.push(s.tokens_per_sec());
                    total.push(s.prefill_secs + s.generation_secs);
                    prompt_tokens += s.prompt_tokens;
                    generated += s.generated_tokens;
                }
            }
            let n = prefill.len();
            println!(
                "| {threads} | {batch_threads} | {:.0} | {:.0} | {:.0} | {:.1} | {:.2} |",
                prompt_tokens as f64 / n as f64,
                median(&mut prefill),
                generated as f64 / n as f64,
                median(&mut generation),
                median(&mut total)
            );
        }
    }
    println!("medians over {} replies per row", texts.len() * args.repeat);
    Ok(())
}

#[cfg(feature = "local-llm")]
fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    quantile(xs, 0.5)
}
