//! `coal build`

use anyhow::Context;

use crate::config::BuildArgs;
use crate::progress::Bars;

/// How many problems are listed on stderr; the rest are counted (all are in --json).
const PROBLEMS_SHOWN: usize = 20;

pub fn run(args: BuildArgs) -> anyhow::Result<()> {
    let models = args.model.resolve()?;
    let embedder = args.embedder(&models)?;
    let llm = args.extraction_llm(&models)?;
    let verify = models.verify_triples()?;
    let skip_relations = models.skip_relations()?;
    let select = kg_build::ExtractSelection {
        laws: args.extract_laws.clone(),
        limit: args.extract_limit,
    };
    let (opts, json) = args.into_options()?;
    let bars = Bars::new();
    let rt = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let extraction = llm.as_ref().map(|(chat, n)| kg_build::Extraction {
        chat: chat.as_ref(),
        concurrency: *n,
        select: select.clone(),
        verify,
        skip_relations,
    });
    let result = rt.block_on(kg_build::build_with_llm(
        &opts,
        embedder.as_deref(),
        extraction,
        &bars,
    ));
    bars.finish();
    let summary = result.with_context(|| {
        format!(
            "build into {} failed; the previous build (if any) is unchanged",
            opts.store.display()
        )
    })?;
    for p in summary.problems.iter().take(PROBLEMS_SHOWN) {
        eprintln!("{p}");
    }
    if summary.problems.len() > PROBLEMS_SHOWN {
        eprintln!(
            "… and {} more problem(s) (all of them with --json)",
            summary.problems.len() - PROBLEMS_SHOWN
        );
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        print_summary(&summary, &opts.store);
    }
    Ok(())
}

fn print_summary(s: &kg_build::BuildSummary, store: &std::path::Path) {
    print_counts(s, store);
    print_knowledge(&s.knowledge);
    print_reuse(&s.reuse);
    if let Some(e) = &s.embeddings {
        print_embeddings(e);
    }
    print_fusion(&s.fusion);
    if let Some(d) = &s.domains {
        print_domains(d);
    }
    if let Some(e) = &s.extraction {
        print_extraction(e);
    }
    if !s.warnings_by_kind.is_empty() {
        println!("  warnings: {}", join(&s.warnings_by_kind));
    }
    if !s.errors_by_kind.is_empty() {
        println!("  files skipped for errors: {}", join(&s.errors_by_kind));
    }
    let secs = s
        .seconds
        .iter()
        .map(|(k, v)| format!("{k} {v:.2}s"))
        .collect::<Vec<_>>()
        .join(", ");
    println!("  time: {secs}");
}

/// `kind n, kind n, …`
fn join(m: &std::collections::BTreeMap<String, usize>) -> String {
    m.iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn print_counts(s: &kg_build::BuildSummary, store: &std::path::Path) {
    println!("build {} committed to {}", s.build_id, store.display());
    println!(
        "  {} files read ({} skipped): {} laws, {} versions, {} articles, {} paragraphs, {} items, {} divisions",
        s.files_read,
        s.files_skipped,
        s.laws,
        s.versions,
        s.articles,
        s.paragraphs,
        s.items,
        s.divisions
    );
    println!(
        "  graph: {} nodes, {} edges, {} triples; store {:.1} MB",
        s.nodes,
        s.edges,
        s.triples,
        s.store_bytes as f64 / 1e6
    );
    println!("  nodes by type: {}", join(&s.nodes_by_type));
    println!("  edges by type: {}", join(&s.edges_by_type));
}

fn print_knowledge(k: &kg_build::knowledge::KnowledgeReport) {
    let pct = |a: usize, b: usize| 100.0 * a as f64 / b.max(1) as f64;
    println!(
        "  references: {} ({} resolved, {:.1}%); with article numbers {} ({:.1}% resolved), into the same law {} ({:.1}% resolved); whole laws {}, generic {}",
        k.references,
        k.references_resolved,
        pct(k.references_resolved, k.references),
        k.numbered_references,
        pct(k.numbered_resolved, k.numbered_references),
        k.numbered_same_law,
        pct(k.numbered_same_law_resolved, k.numbered_same_law),
        k.whole_law_references,
        k.generic_references
    );
    println!(
        "  concepts: {} ({} definitions, {} mentions); override clauses: {} defer ({} to a named law), {} prevail; {} article overrides across versions",
        k.concepts,
        k.definitions,
        k.mentions,
        k.clauses_defers,
        k.defers_to_laws,
        k.clauses_prevails,
        k.overrides
    );
}

fn print_reuse(r: &kg_build::ReuseReport) {
    match &r.base_build {
        Some(base) => {
            let names = |v: &[String]| {
                if v.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", v.join("、"))
                }
            };
            println!(
                "  reused from build {base}: {} laws unchanged; changed {}{}, added {}{}, removed {}{}, re-linked {}{}; graphs kept {}, written {}, removed {}; BM25: {}; metadata: {}; statute graph: {} versions' hierarchy reused",
                r.laws_unchanged,
                r.laws_changed.len(),
                names(&r.laws_changed),
                r.laws_added.len(),
                names(&r.laws_added),
                r.laws_removed.len(),
                names(&r.laws_removed),
                r.laws_relinked.len(),
                names(&r.laws_relinked),
                r.graphs_kept,
                r.graphs_written,
                r.graphs_removed,
                match r.bm25_laws_reindexed {
                    Some(n) => format!("{n} laws re-indexed"),
                    None => "written whole".to_owned(),
                },
                match r.metadata_laws_copied {
                    Some(n) => format!("{n} laws' rows copied"),
                    None => "written whole".to_owned(),
                },
                r.statute_graph_reused
            );
        }
        None => println!("  built from scratch (no earlier build to start from)"),
    }
}

fn print_embeddings(e: &kg_build::EmbedReport) {
    let i = &e.index;
    println!(
        "  embeddings: {} passages, {} embedded ({} tokens), {} from cache; vector index {}: {} reused, {} inserted, {} retired",
        e.passages,
        e.embedded,
        e.tokens_embedded,
        e.from_cache,
        if i.extended { "extended" } else { "built anew" },
        i.reused,
        i.inserted,
        i.retired
    );
    if e.paragraph_vector_articles > 0 {
        println!(
            "  article vectors: {} articles with several 款 are found by their 款 passages' vectors",
            e.paragraph_vector_articles
        );
    }
    match &e.paragraph_index {
        Some(p) => println!(
            "  款 passages: {} ({} embedded now); paragraph index {}: {} reused, {} inserted, {} retired",
            e.paragraph_passages,
            e.paragraphs_embedded,
            if p.extended { "extended" } else { "built anew" },
            p.reused,
            p.inserted,
            p.retired
        ),
        None => println!(
            "  款 passages: {}, searched in the article index",
            e.paragraph_passages
        ),
    }
    println!("  vector index written in {:.1}s", e.index_seconds);
}

fn print_fusion(f: &kg_build::fusion::FusionReport) {
    println!(
        "  fusion: {} concepts, {} candidate pairs ({} same label, {} similar label, {} near embedding); merged {} by rules, {} by the LLM; apart {} by rules, {} by the LLM, {} unsure (kept apart), {} refused as chains; {} entities from {} concepts",
        f.concepts,
        f.candidates,
        f.same_label,
        f.similar_label,
        f.near_embedding,
        f.merged_by_rules,
        f.merged_by_llm,
        f.apart_by_rules,
        f.apart_by_llm,
        f.unsure_kept_apart,
        f.refused_by_constraint,
        f.entities,
        f.concepts_fused
    );
}

fn print_domains(d: &kg_build::domains::DomainReport) {
    println!(
        "  domains: {} articles in {} topic clusters and {} domains (BIC); NMI/ARI with the corpus folders {:.3}/{:.3} (random {:.3}/{:.3}), ARI with chapters within laws {:.3} (random {:.3}); domains' NMI with the folders {:.3} (random {:.3})",
        d.articles,
        d.topics,
        d.domains,
        d.nmi_folders,
        d.ari_folders,
        d.nmi_folders_random,
        d.ari_folders_random,
        d.ari_chapters,
        d.ari_chapters_random,
        d.nmi_domains_folders,
        d.nmi_domains_folders_random
    );
    if d.sampled > 0 {
        println!(
            "  domains fitted on a sample of {} articles; the other {} joined their nearest topic",
            d.sampled,
            d.articles.saturating_sub(d.sampled)
        );
    }
    if d.reused {
        println!(
            "  domains kept from the previous build ({:.1}% of the articles new or changed joined their nearest topic)",
            100.0 * d.changed_share
        );
    }
    if d.summaries + d.summary_failures > 0 {
        println!(
            "  domain summaries (LLM): {} written, {} failed (those keep only their terms)",
            d.summaries, d.summary_failures
        );
    }
}

fn print_extraction(e: &kg_build::extract::ExtractReport) {
    println!(
        "  extraction ({}): {} articles, {} calls, {} from cache, {} triples kept ({} invalid, {} not supported by their article and {} repeated dropped), {} skipped",
        e.model,
        e.articles,
        e.calls,
        e.from_cache,
        e.triples,
        e.invalid_triples,
        e.ungrounded_triples,
        e.duplicate_triples,
        e.skipped
    );
    if e.left_out_triples > 0 {
        println!(
            "  {} triples left out by [llm] skip_relations",
            e.left_out_triples
        );
    }
    if e.closed_replies > 0 {
        println!(
            "  {} replies cut at max_tokens kept their complete triples",
            e.closed_replies
        );
    }
    if !e.ungrounded_reasons.is_empty() {
        let why: Vec<String> = e
            .ungrounded_reasons
            .iter()
            .map(|(w, n)| format!("{w} {n}"))
            .collect();
        println!("  unsupported triples: {}", why.join(", "));
    }
    if let Some(g) = e.generation.filter(|g| g.replies > 0) {
        println!(
            "  generation: {} replies, {:.1} s each ({:.1} s prefill of {} prompt tokens, {:.1} s for {} tokens at {:.1} tokens/s), {} cut at max_tokens",
            g.replies,
            (g.prefill_secs + g.generation_secs) / g.replies as f64,
            g.prefill_secs / g.replies as f64,
            g.prompt_tokens / g.replies,
            g.generation_secs / g.replies as f64,
            g.generated_tokens / g.replies,
            g.tokens_per_sec(),
            g.truncated
        );
    }
    for x in &e.skipped_examples {
        eprintln!("warning: extraction skipped {x}");
    }
    if let Some(v) = &e.verification {
        println!(
            "  verification: {} triples judged ({} calls, {} from cache), {} refused below P(是) {}, {} not judged (kept)",
            v.judged, v.calls, v.from_cache, v.refused, v.threshold, v.failed
        );
        if let Some(g) = v.generation.filter(|g| g.replies > 0) {
            println!(
                "  verification prefill: {:.1} s a triple ({} prompt tokens)",
                g.prefill_secs / g.replies as f64,
                g.prompt_tokens / g.replies
            );
        }
        for x in &v.failed_examples {
            eprintln!("warning: verification could not judge {x}");
        }
    }
}
