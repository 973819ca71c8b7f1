//! `coal bench encoder`: encoder throughput and single-question latency on real articles.

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
    let spec = coal_corpus::CorpusSpec::folder(&args.corpus).with_profile(&args.profile);
    let corpus =
        coal_corpus::load_corpus(&spec, &|_, _| {}).context("reading the benchmark corpus")?;
    let texts: Vec<String> = corpus
        .versions()
        .flat_map(|v| v.articles.iter().map(|a| a.text()))
        .take(args.articles)
        .collect();
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
    let t = Instant::now();
    for chunk in refs.chunks(64) {
        enc.embed(chunk, TextKind::Passage);
    }
    let secs = t.elapsed().as_secs_f64();
    let questions = [
        "用人单位解除劳动合同需要支付经济补偿吗？",
        "交通事故责任如何认定",
        "什么是无固定期限劳动合同",
    ];
    let mut lat = Vec::new();
    for _ in 0..args.repeat {
        for q in questions {
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
    println!(
        "passages: {} articles, {} tokens in {:.1} s: {:.0} tokens/s, {:.1} articles/s ({} threads)",
        refs.len(),
        tokens,
        secs,
        tokens as f64 / secs,
        refs.len() as f64 / secs,
        if args.model.threads == 0 {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        } else {
            args.model.threads
        }
    );
    println!(
        "one question: p50 {:.1} ms, p95 {:.1} ms over {} runs",
        lat[lat.len() / 2],
        lat[lat.len() * 95 / 100],
        lat.len()
    );
    Ok(())
}
