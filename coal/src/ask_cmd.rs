//! `coal ask`

use std::io::Write;
use std::time::Instant;

use kg_store::Store;
use query_engine::engine::{Answer, AskOptions, Engine};

use crate::config::{AskArgs, FileConfig};

pub fn run(args: AskArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    let store = Store::open(&args.store.store, false)?;
    let cfg = FileConfig::read(args.model.config.as_deref())?.method;
    let embedder = args.model.load(false)?;
    let engine = Engine::open(&store, Some(embedder), cfg)?;
    let startup_ms = started.elapsed().as_secs_f64() * 1e3;
    let opts = AskOptions {
        force_tier: args.tier,
        ..AskOptions::default()
    };
    let answer = engine.ask(&args.question, &opts)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.json {
        let mut v = serde_json::to_value(&answer)?;
        if !args.explain {
            v.as_object_mut().map(|o| o.remove("trace"));
        } else {
            v["trace"]["timings_ms"]["startup"] = serde_json::json!(startup_ms);
        }
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(());
    }
    for w in &answer.warnings {
        eprintln!("warning: {w}");
    }
    writeln!(out, "{}", answer.answer.trim_end())?;
    if !answer.citations.is_empty() {
        writeln!(out, "\n引用：")?;
        for c in &answer.citations {
            writeln!(
                out,
                "  《{}》（{}）{}  {}",
                c.law_title, c.version_date, c.label, c.iri
            )?;
        }
    }
    if args.explain {
        explain(&mut out, &answer, startup_ms)?;
    }
    Ok(())
}

fn explain(out: &mut impl Write, a: &Answer, startup_ms: f64) -> anyhow::Result<()> {
    let t = &a.trace;
    writeln!(out, "\n— trace —")?;
    writeln!(out, "tier {} ({:?})", a.tier, a.kind)?;
    if let Some(cx) = &t.complexity {
        let i = &cx.intrinsic;
        writeln!(
            out,
            "type {:?}, C_base {:.2}, C_5D {:.3}, C_intrinsic {:.3}",
            i.question_type, i.c_base, i.c_5d, i.c_intrinsic
        )?;
        for d in &i.dimensions {
            writeln!(
                out,
                "  {:<3} V={:<2} score {:.2} weight {:.2}",
                d.name, d.value, d.score, d.weight
            )?;
        }
        let d = &i.decomposition;
        writeln!(out, "  sub-queries: {:?}", d.sub_queries)?;
        writeln!(
            out,
            "  entities: {:?}",
            d.entities.iter().map(|e| &e.name).collect::<Vec<_>>()
        )?;
        writeln!(out, "  constraints: {:?}", d.constraints)?;
        writeln!(out, "  domains: {:?}", d.domains)?;
        writeln!(out, "  relations: {:?}", d.relations)?;
        let c = &cx.consistency;
        writeln!(
            out,
            "s1 {:.2}, QSI {:.3}, Jaccard {:.3}, Top3 {:.3}, RDI {:.3}, C_consistency {:.3}",
            c.s1, c.qsi, c.jaccard, c.top3, c.rdi, c.c_consistency
        )?;
        writeln!(out, "C_final {:.3} → tier {}", cx.c_final, cx.tier)?;
    }
    for (name, hits) in [
        ("bm25", &t.bm25),
        ("dense", &t.dense),
        ("hybrid", &t.hybrid),
        ("graph", &t.graph),
    ] {
        if hits.is_empty() {
            continue;
        }
        writeln!(out, "{name}:")?;
        for h in hits {
            writeln!(out, "  {:>8.3}  {}", h.score, h.iri)?;
        }
    }
    for d in &t.dropped {
        writeln!(out, "dropped {}: {}", d.iri, d.reason)?;
    }
    let mut timings: Vec<String> = t
        .timings_ms
        .iter()
        .map(|(k, v)| format!("{k} {v:.2} ms"))
        .collect();
    timings.insert(0, format!("startup {startup_ms:.0} ms"));
    writeln!(out, "timings: {}", timings.join(", "))?;
    Ok(())
}
