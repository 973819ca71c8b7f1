//! `coal history` and `coal diff`

use std::io::Write;

use query_engine::versions::{self, ArticleDiff};

use crate::config::{BuildsArgs, DiffArgs, GcArgs, HistoryArgs};

fn counts(c: &[(String, usize)]) -> String {
    c.iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn history(args: HistoryArgs) -> anyhow::Result<()> {
    let source = crate::sparql_cmd::GraphSource::open(&args.source)?;
    let h = versions::history(source.graph(), &args.law)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&h)?)?;
        return Ok(());
    }
    writeln!(out, "{}: {} version(s)", h[0].title, h.len())?;
    for v in &h {
        writeln!(
            out,
            "  {}  valid {} – {}  {} articles{}",
            v.version_date.as_deref().unwrap_or("undated"),
            v.version_date.as_deref().unwrap_or("?"),
            v.valid_until.as_deref().unwrap_or("now"),
            v.articles,
            if v.changes_from_previous.is_empty() {
                String::new()
            } else {
                format!("; from the previous: {}", counts(&v.changes_from_previous))
            }
        )?;
    }
    Ok(())
}

fn one_line(text: &str) -> String {
    text.replace('\n', " ")
}

fn print_change(out: &mut impl Write, c: &ArticleDiff) -> std::io::Result<()> {
    let label =
        |s: &Option<versions::ArticleSide>| s.as_ref().map(|a| a.label.clone()).unwrap_or_default();
    match (c.kind.as_str(), &c.from, &c.to) {
        ("added", _, Some(t)) => writeln!(out, "+ added {}\n    + {}", t.label, one_line(&t.text)),
        ("removed", Some(f), _) => {
            writeln!(out, "- removed {}\n    - {}", f.label, one_line(&f.text))
        }
        ("unchanged", _, Some(t)) => writeln!(out, "  unchanged {}", t.label),
        (kind, Some(f), Some(t)) => {
            let head = if f.label == t.label {
                format!("~ {kind} {}", t.label)
            } else {
                format!("~ {kind} {} → {}", f.label, t.label)
            };
            writeln!(out, "{head} (similarity {:.2})", c.similarity)?;
            if f.text.strip_prefix(&f.label) != t.text.strip_prefix(&t.label) {
                writeln!(out, "    - {}", one_line(&f.text))?;
                writeln!(out, "    + {}", one_line(&t.text))?;
            }
            Ok(())
        }
        (kind, _, _) => writeln!(out, "? {kind} {}{}", label(&c.from), label(&c.to)),
    }
}

pub fn diff(args: DiffArgs) -> anyhow::Result<()> {
    let source = crate::sparql_cmd::GraphSource::open(&args.source)?;
    let d = versions::diff(
        source.graph(),
        &args.law,
        args.from.as_deref(),
        args.to.as_deref(),
    )?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&d)?)?;
        return Ok(());
    }
    writeln!(
        out,
        "{} {} → {}: {}",
        d.to.title,
        d.from.version_date.as_deref().unwrap_or("undated"),
        d.to.version_date.as_deref().unwrap_or("undated"),
        counts(&d.counts)
    )?;
    for c in d
        .changes
        .iter()
        .filter(|c| args.all || c.kind != "unchanged")
    {
        print_change(&mut out, c)?;
    }
    Ok(())
}

fn size(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

pub fn builds(args: BuildsArgs) -> anyhow::Result<()> {
    let dir = kg_store::StoreDir::new(&args.store.store, false)?;
    let list = dir.list_builds()?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&list)?)?;
        return Ok(());
    }
    for b in &list {
        let what = b
            .summary
            .as_ref()
            .map(|s| format!("{} laws, {} articles", s["laws"], s["articles"]))
            .unwrap_or_default();
        writeln!(
            out,
            "{:<28} {:<9} {:>10}  {what}",
            b.id,
            format!("{:?}", b.state).to_lowercase(),
            size(b.bytes)
        )?;
    }
    if list.is_empty() {
        writeln!(out, "no builds")?;
    }
    Ok(())
}

pub fn gc(args: GcArgs) -> anyhow::Result<()> {
    let dir = kg_store::StoreDir::new(&args.store.store, false)?;
    let removed = dir.gc(args.keep as usize)?;
    let cache = dir.prune_embedding_cache()?;
    let ids: Vec<String> = removed.iter().map(|b| b.id.clone()).collect();
    dir.forget_builds(args.store.db_url.as_deref(), &ids)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.json {
        let json = serde_json::json!({ "removed": removed, "embedding_cache": cache });
        writeln!(out, "{}", serde_json::to_string_pretty(&json)?)?;
        return Ok(());
    }
    let freed: u64 = removed.iter().map(|b| b.bytes).sum();
    for b in &removed {
        writeln!(out, "removed {} ({:?}, {})", b.id, b.state, size(b.bytes))?;
    }
    writeln!(
        out,
        "{} build(s) removed, {} freed",
        removed.len(),
        size(freed)
    )?;
    match cache {
        kg_store::builds::CachePrune::Pruned(models) => {
            for (model, n) in models {
                writeln!(
                    out,
                    "embedding cache {model}: {n} entr{} no build uses removed",
                    if n == 1 { "y" } else { "ies" }
                )?;
            }
        }
        kg_store::builds::CachePrune::Skipped(why) => {
            writeln!(out, "embedding cache kept whole: {why}")?;
        }
    }
    Ok(())
}
