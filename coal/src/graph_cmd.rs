//! `coal graph`: what the query side loads of the build's graph, and how fast.

use std::io::Write;
use std::time::Instant;

use kg_store::Store;
use query_engine::graph::StatuteGraph;

use crate::config::GraphArgs;

pub fn run(args: GraphArgs) -> anyhow::Result<()> {
    let store = Store::open(&args.store.store, false)?;
    let resident_before = resident_bytes();
    let t = Instant::now();
    let data = store.statute_graph()?;
    let read_ms = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let graph = StatuteGraph::new(data);
    let build_ms = t.elapsed().as_secs_f64() * 1e3;
    // What loading cost the process (the graph, and what the allocator kept of reading
    // it): the estimate below counts the graph's own structures only.
    let resident_growth = resident_before
        .zip(resident_bytes())
        .map(|(a, b)| b.saturating_sub(a));
    let stats = &graph.stats;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.json {
        let mut v = serde_json::to_value(stats)?;
        v["read_ms"] = serde_json::json!(read_ms);
        v["build_ms"] = serde_json::json!(build_ms);
        v["resident_growth_bytes"] = serde_json::json!(resident_growth);
        v["laws"] = serde_json::json!(graph.laws.len());
        v["topics"] = serde_json::json!(graph.topics.len());
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(());
    }
    writeln!(
        out,
        "statute graph of build {}: {} nodes, {} edges (each stored both ways), {} interned strings, ~{:.1} MB",
        store.build_id(),
        stats.nodes,
        stats.edges,
        stats.strings,
        stats.memory_bytes as f64 / 1e6
    )?;
    writeln!(
        out,
        "loaded in {:.0} ms ({read_ms:.0} ms reading the file, {build_ms:.0} ms building the graph); the process grew by {}",
        read_ms + build_ms,
        resident_growth.map_or("? (no /proc here)".into(), |b| format!(
            "{:.1} MB resident",
            b as f64 / 1e6
        ))
    )?;
    let list = |m: &std::collections::BTreeMap<String, usize>| {
        m.iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    writeln!(out, "  nodes: {}", list(&stats.nodes_by_kind))?;
    writeln!(out, "  edges: {}", list(&stats.edges_by_kind))?;
    writeln!(
        out,
        "  {} laws, {} topics with centroids",
        graph.laws.len(),
        graph
            .topics
            .iter()
            .filter(|t| !t.centroid.is_empty())
            .count()
    )?;
    Ok(())
}

/// This process's resident memory (VmRSS of Linux's /proc/self/status; None elsewhere).
fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}
