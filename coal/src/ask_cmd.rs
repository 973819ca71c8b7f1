//! `coal ask`

use std::io::Write;
use std::time::Instant;

use kg_store::Store;
use query_engine::engine::{Answer, AskOptions, Engine};

use crate::config::{AskArgs, Models};

/// The store, and the engine over it with the configured model and method constants.
pub fn open_engine(
    models: &Models,
    store: &crate::config::StoreArgs,
) -> anyhow::Result<(Store, Engine)> {
    let (store, engine, _) = open_engine_timed(models, store)?;
    Ok((store, engine))
}

/// Start-up stages and their milliseconds.
pub type StageTimes = Vec<(&'static str, f64)>;

/// [`open_engine`] with the wall time of each start-up stage: the store, the encoder,
/// then the engine's own stages.
pub fn open_engine_timed(
    models: &Models,
    store: &crate::config::StoreArgs,
) -> anyhow::Result<(Store, Engine, StageTimes)> {
    let mut t = Instant::now();
    let mut lap = |name: &'static str, out: &mut Vec<(&'static str, f64)>| {
        out.push((name, t.elapsed().as_secs_f64() * 1e3));
        t = Instant::now();
    };
    let mut opened = Vec::new();
    let store = Store::open(&store.store, false)?;
    lap("store", &mut opened);
    let engine = engine_over(&store, models)?;
    opened.extend_from_slice(engine.open_ms());
    Ok((store, engine, opened))
}

/// The engine over an opened build, with the configured encoder, chat model and method
/// constants.
pub fn engine_over(store: &Store, models: &Models) -> anyhow::Result<Engine> {
    let load = || {
        models
            .embedder(false)
            .map(Some)
            .map_err(|e| -> query_engine::engine::EncoderLoadError { format!("{e:#}").into() })
    };
    let mut engine = Engine::open_loading(store, load, models.file.method.clone())?;
    if let Some((chat, _)) = models.chat()? {
        engine.set_chat(chat);
    }
    Ok(engine)
}

pub fn run(args: AskArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    let (_store, engine) = open_engine(&args.model.resolve()?, &args.store)?;
    let startup_ms = started.elapsed().as_secs_f64() * 1e3;
    let opts = AskOptions {
        force_tier: args.tier,
        as_of: args.as_of.clone(),
        ..AskOptions::default()
    };
    let answer = engine.ask(&args.question, &opts)?;
    if answer.kind == query_engine::engine::AnswerKind::LawNotInStore {
        for w in &answer.warnings {
            eprintln!("warning: {w}");
        }
        anyhow::bail!(
            "{} (the store holds {} laws; `coal sparql --store {} \"SELECT ?t WHERE {{ ?v a coal:LawVersion ; coal:title ?t }}\"` lists them)",
            answer.answer,
            engine.graph().laws.len(),
            args.store.store.display()
        );
    }
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
    for r in &answer.trace.removed_citations {
        eprintln!(
            "warning: citation cut from the answer: {} ({})",
            r.text, r.reason
        );
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
        writeln!(out, "  decomposed by: {}", a.trace.decomposed_by)?;
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
    if !t.links.is_empty() {
        writeln!(out, "links to the graph:")?;
        for l in &t.links {
            writeln!(
                out,
                "  {:<8} {}  ({}; weight {:.2}{})",
                format!("{:?}", l.kind).to_lowercase(),
                l.name,
                l.evidence,
                l.weight,
                l.domain
                    .as_deref()
                    .map(|d| format!("; domain {d}"))
                    .unwrap_or_default()
            )?;
        }
    }
    if let Some(d) = &t.draft {
        writeln!(
            out,
            "draft answer (its nearest articles joined the dense list): {d}"
        )?;
    }
    for (name, hits) in [
        ("bm25", &t.bm25),
        ("bigram", &t.bigram),
        ("dense", &t.dense),
        ("hybrid", &t.hybrid),
        ("reranked", &t.reranked),
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
    if !t.paragraphs.is_empty() {
        writeln!(out, "款 (paragraph vectors):")?;
        for p in &t.paragraphs {
            writeln!(out, "  {:>8.3}  {}", p.score, p.iri)?;
        }
    }
    for h in &t.unconfirmed_headings {
        writeln!(
            out,
            "heading left out: {h} (no article below it in the text ranking's top {})",
            query_engine::engine::HEADING_CONFIRMED_WITHIN
        )?;
    }
    if !t.paths.is_empty() {
        writeln!(out, "graph paths:")?;
        for p in &t.paths {
            writeln!(out, "  {}  (cost {:.2}, from {})", p.path, p.cost, p.from)?;
        }
    }
    for d in &t.dropped {
        match &d.edge {
            Some(e) => writeln!(out, "dropped {}: {} [{e}]", d.iri, d.reason)?,
            None => writeln!(out, "dropped {}: {}", d.iri, d.reason)?,
        }
    }
    for k in &t.kept {
        writeln!(out, "kept {}: {}", k.iri, k.reason)?;
    }
    if !t.judged.is_empty() {
        writeln!(
            out,
            "judged by the chat model (probability the answer needs it; place in the ranking before):"
        )?;
        for j in &t.judged {
            let kept = a.context.iter().any(|c| c.iri == j.iri);
            writeln!(
                out,
                "  {:>6.3}  {}  (was {}){}",
                j.p,
                j.iri,
                j.rank + 1,
                if kept { ", in the context" } else { "" }
            )?;
        }
    }
    if let Some(m) = &a.generated_by {
        writeln!(out, "answer written by {m}")?;
    }
    for r in &t.removed_citations {
        writeln!(
            out,
            "citation cut from the answer: {} ({})",
            r.text, r.reason
        )?;
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

/// `coal eval answer`
pub fn eval_answer(args: crate::config::EvalAnswerArgs) -> anyhow::Result<()> {
    use query_engine::eval_answer::evaluate_reporting;
    let variants = args.variants()?;
    let (store, engine) = open_engine(&args.model.resolve()?, &args.store)?;
    let mut gold_map = crate::search_cmd::gold_map(&store, args.store.db_url.as_deref())?;
    gold_map.matching = args.gold_match.matching();
    let mut table = String::from(
        "| set | variant | n | P | R | F1 | hit@1 | R@10 | R@100 | 2+ gold n | F1 2+ | R@10 2+ | R@100 2+ | context | ROUGE-1 | ROUGE-2 | ROUGE-L | BLEU-4 | tiers 1/2/3/4 | p50 ms | p95 ms | invalid / removed citations |\n|",
    );
    table.push_str(&"---|".repeat(22));
    table.push('\n');
    let mut json = serde_json::Map::new();
    let mut per_item = String::new();
    let mut by_type = String::from(
        "| set | question type | variant | n | F1 | R@10 | context | p50 ms |\n|---|---|---|---|---|---|---|---|\n",
    );
    let mut decomposers = Vec::new();
    for (set, items) in args.questions.load()? {
        let (items, gold) = crate::search_cmd::gold_items(&gold_map, &set, items, &args.questions)?;
        let mut per_set = serde_json::Map::new();
        for v in &variants {
            let before = engine.chat_totals();
            let started = std::time::Instant::now();
            let mut answered = |n: usize| {
                // A model takes seconds a question: a line every tenth of the run.
                let step = items.len().div_ceil(10).max(1);
                if before.is_some() && (n.is_multiple_of(step) || n == items.len()) {
                    let each = started.elapsed().as_secs_f64() / n as f64;
                    eprintln!(
                        "{set} {}: {n}/{} questions, {each:.1} s each, ETA {:.0} s",
                        v.name(),
                        items.len(),
                        each * (items.len() - n) as f64
                    );
                }
            };
            let r = evaluate_reporting(
                &engine,
                &items,
                &gold,
                *v,
                query_engine::eval_answer::ModelUse {
                    extractive: args.extractive,
                    rule_decomposition: args.rule_decomposition,
                },
                &mut answered,
            )?;
            if let (Some(after), Some(before)) = (engine.chat_totals(), before) {
                let g = after.since(&before);
                if g.replies > 0 {
                    let n = g.replies as f64;
                    decomposers.push(format!(
                        "{set} {}: {} model replies, per reply {:.1} s prefill ({} prompt tokens) + {:.1} s generation ({} tokens, {:.1} tokens/s), {} cut at max_tokens",
                        v.name(),
                        g.replies,
                        g.prefill_secs / n,
                        g.prompt_tokens / g.replies,
                        g.generation_secs / n,
                        g.generated_tokens / g.replies,
                        g.tokens_per_sec(),
                        g.truncated
                    ));
                }
            }
            if r.decomposed_by.keys().any(|k| k != "rules") {
                decomposers.push(format!(
                    "{set} {}: decomposed by {:?}",
                    v.name(),
                    r.decomposed_by
                ));
            }
            let tier = |t: u8| r.tiers.get(&t).copied().unwrap_or(0);
            table.push_str(&format!(
                "| {set} | {} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {} | {:.3} | {:.3} | {:.3} | {:.2} | {:.3} | {:.3} | {:.3} | {:.3} | {}/{}/{}/{} | {:.1} | {:.1} | {}/{} |\n",
                v.name(),
                r.questions,
                r.precision,
                r.recall,
                r.f1,
                r.hit_at_1,
                r.recall_at_10,
                r.recall_at_100,
                r.multi_gold,
                r.multi_f1,
                r.multi_recall_at_10,
                r.multi_recall_at_100,
                r.mean_context,
                r.rouge1,
                r.rouge2,
                r.rouge_l,
                r.bleu4,
                tier(1),
                tier(2),
                tier(3),
                tier(4),
                r.p50_ms,
                r.p95_ms,
                r.invalid_citations,
                r.removed_citations
            ));
            for (ty, s) in &r.by_type {
                by_type.push_str(&format!(
                    "| {set} | {ty} | {} | {} | {:.3} | {:.3} | {:.2} | {:.1} |\n",
                    v.name(),
                    s.questions,
                    s.f1,
                    s.recall_at_10,
                    s.mean_context,
                    s.p50_ms
                ));
            }
            per_set.insert(v.name(), serde_json::to_value(&r)?);
            for it in &r.per_item {
                let mut line = serde_json::to_value(it)?;
                line["set"] = serde_json::json!(set);
                line["variant"] = serde_json::json!(v.name());
                per_item.push_str(&serde_json::to_string(&line)?);
                per_item.push('\n');
            }
        }
        json.insert(set, serde_json::Value::Object(per_set));
    }
    if let Some(path) = &args.per_item {
        use anyhow::Context;
        std::fs::write(path, per_item)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&json)?)?;
    } else {
        write!(out, "{table}")?;
        if args.by_type {
            write!(out, "\n{by_type}")?;
        }
        for d in &decomposers {
            writeln!(out, "{d}")?;
        }
    }
    Ok(())
}

/// `coal calibrate`
pub fn calibrate(args: crate::config::CalibrateArgs) -> anyhow::Result<()> {
    use anyhow::Context;
    use query_engine::calibrate::{calibrate, observe};
    if let Some(path) = &args.write
        && path.exists()
    {
        anyhow::bail!("{} exists; choose another --write path", path.display());
    }
    let (store, mut engine) = open_engine(&args.model.resolve()?, &args.store)?;
    let base = engine.config().clone();
    let gold_map = crate::search_cmd::gold_map(&store, args.store.db_url.as_deref())?;
    let mut obs = Vec::new();
    let mut by_set = Vec::new();
    let mut inputs = Vec::new();
    for (set, items) in args.questions.load()? {
        let (items, gold) = crate::search_cmd::gold_items(&gold_map, &set, items, &args.questions)?;
        let o = observe(&engine, &items, &gold)?;
        obs.extend(o.iter().cloned());
        by_set.push((set.clone(), o));
        inputs.push((set, items, gold));
    }
    let c = calibrate(&obs, &base);
    if let Some(path) = &args.observations {
        let mut text = String::new();
        for (set, o) in &by_set {
            for o in o {
                let mut line = serde_json::to_value(o)?;
                line["set"] = serde_json::json!(set);
                text.push_str(&serde_json::to_string(&line)?);
                text.push('\n');
            }
        }
        std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    // With a learned re-ranking, each fold fits it on its half too.
    let refit = base.rerank_learned.is_some() && engine.retriever().has_embedder();
    if args.two_folds && base.rerank_learned.is_some() && !refit {
        eprintln!(
            "warning: the store has no embeddings, so the folds keep the learned re-ranking fitted on every item"
        );
    }
    let folds = match (args.two_folds, refit) {
        (false, _) => None,
        (true, false) => Some(query_engine::calibrate::two_folds(&by_set, &base)),
        (true, true) => Some(query_engine::calibrate::refitted_folds(
            &mut engine,
            &inputs,
            &base,
        )?),
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.json {
        let mut v = serde_json::to_value(&c)?;
        if let Some(f) = &folds {
            v["two_folds"] = serde_json::to_value(f)?;
            v["two_folds_refit_rerank"] = serde_json::json!(refit);
        }
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
    } else {
        print_calibration(&mut out, &c, folds.as_deref(), refit)?;
    }
    if let Some(path) = &args.write {
        write_method_table(path, &c.best)?;
    }
    Ok(())
}

/// Writes method constants as a `coal.toml` with one `[method]` table (and its learned
/// sub-tables), as `calibrate` and `fit-rerank` do.
pub fn write_method_table(
    path: &std::path::Path,
    method: &query_engine::method::MethodConfig,
) -> anyhow::Result<()> {
    use anyhow::Context;
    #[derive(serde::Serialize)]
    struct File<'a> {
        method: &'a query_engine::method::MethodConfig,
    }
    let text = toml::to_string(&File { method })?;
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

/// σ and each tier's context bounds, as the calibration tables print them.
fn context_bounds(m: &query_engine::method::MethodConfig) -> String {
    let tiers: Vec<String> = (0..4)
        .map(|t| format!("{}–{}", m.context_min[t], m.context_max[t]))
        .collect();
    format!("σ {:.2}, context {}", m.cliff_sigma, tiers.join("/"))
}

fn print_calibration(
    out: &mut impl Write,
    c: &query_engine::calibrate::Calibration,
    folds: Option<&[query_engine::calibrate::Fold]>,
    refit: bool,
) -> std::io::Result<()> {
    writeln!(
        out,
        "{} questions with gold articles, {} grid points",
        c.questions, c.grid_points
    )?;
    writeln!(out, "article F1, current constants: {:.4}", c.default_f1)?;
    for t in 0..4 {
        writeln!(
            out,
            "article F1, every question in tier {}: {:.4} ({:.4} with its context bounds fitted: {})",
            t + 1,
            c.forced_f1[t],
            c.fitted_forced_f1[t],
            context_bounds(&c.forced_best)
        )?;
    }
    writeln!(
        out,
        "best: {:.4} with gamma {:.2}, theta {:.2}/{:.2}/{:.2}, QSI midpoint {:.1}, {}",
        c.best_f1,
        c.best.gamma,
        c.best.theta_low,
        c.best.theta_medium,
        c.best.theta_high,
        c.best.qsi_midpoint,
        context_bounds(&c.best)
    )?;
    if c.recomputed_mismatches > 0 {
        writeln!(
            out,
            "warning: {} questions' observed F1 differs from the one recomputed from their rankings",
            c.recomputed_mismatches
        )?;
    }
    let Some(folds) = folds else { return Ok(()) };
    let what = if refit {
        "the learned re-ranking and the routing"
    } else {
        "routing"
    };
    writeln!(
        out,
        "\ntwo folds ({what} fitted on one half of every set, reported on the other; forced tiers with the context bounds fitted for forcing):"
    )?;
    writeln!(
        out,
        "| fitted on | held-out set | n | routed F1 | tier 1 | tier 2 | tier 3 | tier 4 | best forced | tiers 1/2/3/4 (lookups) | outside the most used | routed context |"
    )?;
    writeln!(out, "|{}", "---|".repeat(12))?;
    for f in folds {
        for (set, h) in &f.held_out {
            let forced = h.forced_fitted_f1;
            let best = forced.iter().copied().fold(f64::MIN, f64::max);
            let routed: usize = h.tiers.iter().sum();
            let most = h.tiers.iter().copied().max().unwrap_or(0);
            writeln!(
                out,
                "| {} (γ {:.1}, θ {:.2}/{:.2}/{:.2}, {}) | {set} | {} | {:.4} | {:.4} | {:.4} | {:.4} | {:.4} | {:.4} | {}/{}/{}/{} ({}) | {:.1}% | {:.2} |",
                f.fitted_on,
                f.fitted.best.gamma,
                f.fitted.best.theta_low,
                f.fitted.best.theta_medium,
                f.fitted.best.theta_high,
                context_bounds(&f.fitted.best),
                h.questions,
                h.routed_f1,
                forced[0],
                forced[1],
                forced[2],
                forced[3],
                best,
                h.tiers[0],
                h.tiers[1],
                h.tiers[2],
                h.tiers[3],
                h.lookups,
                100.0 * (routed - most) as f64 / routed.max(1) as f64,
                h.mean_context
            )?;
        }
    }
    writeln!(
        out,
        "\nRecall@10 on the held-out halves (lookups left out), routed against each tier forced; then over the questions with 2+ gold articles:"
    )?;
    writeln!(
        out,
        "| fitted on | held-out set | n | routed | tier 1 | tier 2 | tier 3 | tier 4 | 2+ gold n | routed | tier 1 | tier 2 | tier 3 | tier 4 |"
    )?;
    writeln!(out, "|{}", "---|".repeat(14))?;
    for f in folds {
        for (set, h) in &f.held_out {
            let (a, m) = (&h.recall_at_10, &h.recall_at_10_multi);
            writeln!(
                out,
                "| {} | {set} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} |",
                f.fitted_on,
                a.questions,
                a.routed,
                a.forced[0],
                a.forced[1],
                a.forced[2],
                a.forced[3],
                m.questions,
                m.routed,
                m.forced[0],
                m.forced[1],
                m.forced[2],
                m.forced[3],
            )?;
        }
    }
    Ok(())
}
