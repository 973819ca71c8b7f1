//! The offline build: statute files → parsed corpus → RDF graph + metadata in a new build
//! of the store, committed atomically.
//!
//! Architecture invariant: kg-build never prints and never reads the store's current
//! build while writing; it reports progress through [`BuildObserver`] and hands the
//! store a complete build or nothing.

pub mod align;
pub mod delta;
pub mod domains;
mod embed;
pub mod extract;
pub mod fusion;
pub mod grounding;
pub mod knowledge;
mod rdf;
mod stages;
pub mod summaries;
pub mod verify;

use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

use coal_corpus::{Corpus, CorpusSpec, Problem, Severity};
use kg_store::BuildWriter;
use kg_store::{ArticleRow, LawRow, LawVersionRow};
use rayon::prelude::*;
use serde::Serialize;

pub use embed::{ArticleVectors, EmbedReport, article_passages};
pub use rdf::{GraphCounts, division_iris, law_iris, text_hash};

#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error(transparent)]
    Corpus(#[from] coal_corpus::CorpusError),
    #[error(transparent)]
    Store(#[from] kg_store::StoreError),
    #[error("strict build refused: {count} problem(s) in the input, the first: {first}")]
    Strict { count: usize, first: Box<Problem> },
    #[error("embedding model: {0}")]
    Model(coal_models::ModelError),
    #[error("no statute could be read: {0} file(s), all skipped")]
    NothingToBuild(usize),
}

/// How the CLI (or a test) follows a build. Library code never prints.
pub trait BuildObserver: Sync {
    /// A stage starts; `total` units of work when known.
    fn stage(&self, _name: &str, _total: Option<u64>) {}
    /// `done` units of the current stage are complete.
    fn progress(&self, _done: u64) {}
}

/// Observes nothing.
pub struct Quiet;
impl BuildObserver for Quiet {}

#[derive(Debug, Clone)]
pub struct BuildOptions {
    pub corpus: CorpusSpec,
    pub store: std::path::PathBuf,
    pub db_url: Option<String>,
    /// Any warning fails the build before anything is written.
    pub strict: bool,
    /// Only the graph and metadata: no retrieval indexes.
    pub structure_only: bool,
    /// Start from the current build's graph and vector index and rewrite only what
    /// changed (the default); false builds everything anew.
    pub incremental: bool,
    /// Share of new or changed articles past which the domains are clustered again
    /// (below it new articles join their nearest topic).
    pub recluster_share: f64,
    /// How an article with several 款 gets its vector.
    pub article_vectors: embed::ArticleVectors,
}

/// What a build did, printed by `coal build` and stored with the build.
#[derive(Debug, Clone, Serialize)]
pub struct BuildSummary {
    pub build_id: String,
    pub files_read: usize,
    pub files_skipped: usize,
    pub laws: usize,
    pub versions: usize,
    pub articles: usize,
    pub paragraphs: usize,
    pub items: usize,
    pub divisions: usize,
    pub nodes: usize,
    pub edges: usize,
    pub triples: usize,
    pub nodes_by_type: BTreeMap<String, usize>,
    pub edges_by_type: BTreeMap<String, usize>,
    pub warnings_by_kind: BTreeMap<String, usize>,
    pub errors_by_kind: BTreeMap<String, usize>,
    pub store_bytes: u64,
    /// The embedding stage, when the build had a model.
    pub embeddings: Option<EmbedReport>,
    /// References, concepts and override clauses read by the rules.
    pub knowledge: knowledge::KnowledgeReport,
    /// Triples extracted by an LLM, when one was configured.
    pub extraction: Option<extract::ExtractReport>,
    /// Topic clusters and domains, when the build had embeddings.
    pub domains: Option<domains::DomainReport>,
    /// Concepts of different laws fused into entities.
    pub fusion: fusion::FusionReport,
    /// What an incremental build kept from the previous one and what it rewrote.
    pub reuse: ReuseReport,
    pub seconds: BTreeMap<String, f64>,
    /// Every problem, with file and line.
    pub problems: Vec<Problem>,
}

/// What a build took over from the build it started from, law by law.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ReuseReport {
    /// The build whose graph this one started from; `None`: built from scratch.
    pub base_build: Option<String>,
    /// Laws whose files are unchanged and whose graphs were all kept.
    pub laws_unchanged: usize,
    /// Laws with changed files (a version added, removed or edited), by short name.
    pub laws_changed: Vec<String>,
    pub laws_added: Vec<String>,
    pub laws_removed: Vec<String>,
    /// Laws with unchanged files whose graphs were rewritten for what they depend on
    /// (references resolved into a changed law, for instance).
    pub laws_relinked: Vec<String>,
    pub graphs_kept: usize,
    pub graphs_written: usize,
    pub graphs_removed: usize,
    /// Laws the BM25 index indexed again when it started as a copy of the base build's
    /// (`None`: the index was written whole).
    pub bm25_laws_reindexed: Option<usize>,
    /// Laws whose metadata rows were copied from the base build's inside the database
    /// (`None`: every row was sent).
    pub metadata_laws_copied: Option<usize>,
    /// Versions whose hierarchy the statute graph took from the base build's snapshot.
    pub statute_graph_reused: usize,
}

/// The build to start from: the current one, when it recorded its graph digests and
/// nobody changed it since (SPARQL UPDATE).
fn incremental_base(store: &std::path::Path) -> Option<(String, delta::GraphState)> {
    let dir = kg_store::StoreDir::new(store, false).ok()?;
    let id = dir.current_build().ok()?;
    let build_dir = dir.build_dir(&id);
    if build_dir.join(kg_store::UPDATED_FILE).exists() || !dir.rdf_dir(&id).is_dir() {
        return None;
    }
    let state = delta::GraphState::read(&build_dir)?;
    Some((id, state))
}

/// A law's files and their contents, in one hash.
fn law_hash(law: &coal_corpus::Law) -> String {
    let mut all = String::new();
    for v in &law.versions {
        all.push_str(&v.content_hash());
        for f in &v.files {
            all.push('|');
            all.push_str(&f.path);
        }
        all.push('\n');
    }
    text_hash(&all)
}

/// Parses the corpus (stage `parse`).
pub fn parse(spec: &CorpusSpec, observer: &dyn BuildObserver) -> Result<Corpus, BuildError> {
    observer.stage("parse", None);
    let corpus = coal_corpus::load_corpus(spec, &|done, total| {
        if done == 1 {
            observer.stage("parse", Some(total as u64));
        }
        observer.progress(done as u64)
    })?;
    Ok(corpus)
}

/// Runs a full build and commits it. On any error the new build is removed and the
/// committed one is untouched.
pub async fn build(
    opts: &BuildOptions,
    embedder: Option<&dyn coal_models::Embedder>,
    observer: &dyn BuildObserver,
) -> Result<BuildSummary, BuildError> {
    build_with_llm(opts, embedder, None, observer).await
}

/// An LLM for triple extraction, and how many requests may run at once.
pub struct Extraction<'a> {
    pub chat: &'a dyn coal_models::ChatModel,
    pub concurrency: usize,
    /// Which articles to extract from (a slow local model need not read them all).
    pub select: ExtractSelection,
    /// When set, the model judges every kept triple against its article and those it
    /// gives a probability of being right below this are dropped (see [`verify`]).
    pub verify: Option<f64>,
    /// Relations whose triples are left out (`[llm] skip_relations`), before the
    /// verification.
    pub skip_relations: Vec<String>,
}

/// A part of the corpus to extract triples from: the laws whose title contains one of
/// `laws` (all when empty), then at most `limit` articles of them in corpus order.
#[derive(Debug, Clone, Default)]
pub struct ExtractSelection {
    pub laws: Vec<String>,
    pub limit: Option<usize>,
}

impl ExtractSelection {
    pub fn takes_law(&self, title: &str) -> bool {
        self.laws.is_empty() || self.laws.iter().any(|l| title.contains(l.as_str()))
    }
}

/// [`build`], with triples extracted by an LLM when one is given.
pub async fn build_with_llm(
    opts: &BuildOptions,
    embedder: Option<&dyn coal_models::Embedder>,
    llm: Option<Extraction<'_>>,
    observer: &dyn BuildObserver,
) -> Result<BuildSummary, BuildError> {
    let mut seconds = BTreeMap::new();
    let t = Instant::now();
    let corpus = parse(&opts.corpus, observer)?;
    seconds.insert("parse".to_owned(), t.elapsed().as_secs_f64());
    if opts.strict
        && let Some(first) = corpus.problems.first()
    {
        return Err(BuildError::Strict {
            count: corpus.problems.len(),
            first: Box::new(first.clone()),
        });
    }
    if corpus.laws.is_empty() {
        return Err(BuildError::NothingToBuild(corpus.files_read));
    }
    let describe = opts
        .corpus
        .profile
        .as_ref()
        .or(opts.corpus.root.as_ref())
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| format!("{} file(s)", opts.corpus.files.len()));
    let base = if opts.incremental {
        incremental_base(&opts.store)
    } else {
        None
    };
    let writer = BuildWriter::begin(
        &opts.store,
        opts.db_url.as_deref(),
        &describe,
        base.as_ref().map(|b| b.0.as_str()),
    )
    .await?;
    match write(&writer, &corpus, observer, embedder, llm, base, opts).await {
        Ok(w) => {
            seconds.extend(w.seconds);
            let mut summary = summarize(&corpus, writer.id(), w.counts, seconds);
            summary.reuse = w.reuse;
            summary.fusion = w.fusion;
            summary.domains = w.domains;
            summary.embeddings = w.embeddings;
            summary.knowledge = w.knowledge;
            summary.extraction = w.extraction;
            summary.store_bytes = writer.disk_usage();
            let t = Instant::now();
            observer.stage("commit", None);
            let json = serde_json::to_value(&summary).expect("summary serializes");
            writer.commit(&json).await?;
            summary
                .seconds
                .insert("commit".to_owned(), t.elapsed().as_secs_f64());
            Ok(summary)
        }
        Err(e) => {
            // Best effort: the error that stopped the build matters more than cleanup's.
            let _ = writer.abort().await;
            Err(e)
        }
    }
}

/// What the stages wrote, for the build's summary.
struct Written {
    counts: GraphCounts,
    embeddings: Option<EmbedReport>,
    knowledge: knowledge::KnowledgeReport,
    extraction: Option<extract::ExtractReport>,
    domains: Option<domains::DomainReport>,
    reuse: ReuseReport,
    fusion: fusion::FusionReport,
    /// Wall seconds per stage.
    seconds: BTreeMap<String, f64>,
}

/// The metadata database's rows of the build, collected while the graph is written.
#[derive(Default)]
struct MetadataRows {
    laws: Vec<LawRow>,
    versions: Vec<LawVersionRow>,
    articles: Vec<ArticleRow>,
}

impl MetadataRows {
    fn add_version(&mut self, law: &coal_corpus::Law, i: usize, iris: &rdf::LawIris) {
        let v = &law.versions[i];
        let viri = &iris.versions[i];
        self.versions.push(LawVersionRow {
            iri: viri.clone(),
            law_iri: iris.work.clone(),
            title: v.title.clone(),
            version_date: v.version_date.map(|d| d.to_string()),
            valid_until: law
                .versions
                .get(i + 1)
                .and_then(|n| n.version_date)
                .map(|d| d.to_string()),
            content_hash: v.content_hash(),
            files: v.files.iter().map(|f| f.path.clone()).collect(),
            article_count: v.articles.len() as i32,
        });
        for a in &v.articles {
            self.articles.push(ArticleRow {
                iri: coal_ontology::iri::article(viri, a.number.main, a.number.suffix),
                work_iri: coal_ontology::iri::article_work(
                    &iris.work,
                    a.number.main,
                    a.number.suffix,
                ),
                law_iri: iris.work.clone(),
                version_iri: viri.clone(),
                label: a.label.clone(),
                number: a.number.main as i32,
                suffix: a.number.suffix as i32,
                hierarchy_path: v.hierarchy_label(a.division),
                text_hash: text_hash(&a.text()),
                source_file: v.files[a.source.file].path.clone(),
                source_line: a.source.line as i32,
            });
        }
    }
}

/// The graph stage's products: the laws' graphs are in the delta (not yet finished),
/// the rows and the concepts wait for their stages.
struct GraphStage<'g> {
    delta: delta::GraphDelta<'g>,
    counts: GraphCounts,
    rows: MetadataRows,
    knowledge: knowledge::KnowledgeReport,
    reuse: ReuseReport,
    /// Each concept by its latest definition.
    concepts: BTreeMap<String, fusion::ConceptRecord>,
    /// Seconds making the quads (in parallel) and loading them.
    quads_secs: f64,
    /// Version graphs kept unchanged from the base build.
    kept_versions: std::collections::HashSet<String>,
}

/// Writes every law's work and version graphs (with their knowledge and extracted
/// triples) through the delta against the base build, and the build's own record.
fn graph_stage<'g>(
    writer: &'g BuildWriter,
    corpus: &Corpus,
    base: Option<(String, delta::GraphState)>,
    mut extracted: HashMap<String, rdf::QuadSink>,
    observer: &dyn BuildObserver,
) -> Result<GraphStage<'g>, BuildError> {
    observer.stage("graph", Some(corpus.versions().count() as u64));
    let mut done = 0u64;
    let resolver = knowledge::Resolver::new(corpus);
    let mut quads_time = std::time::Duration::ZERO;
    let mut reuse = ReuseReport {
        base_build: base.as_ref().map(|b| b.0.clone()),
        ..Default::default()
    };
    // The delta compares graphs; the laws' hashes are for the report only.
    let mut base_state = base.map(|b| b.1);
    let base_laws = base_state
        .as_mut()
        .map(|b| std::mem::take(&mut b.laws))
        .unwrap_or_default();
    let mut out = GraphStage {
        delta: delta::GraphDelta::new(writer.graph(), base_state),
        counts: GraphCounts::default(),
        rows: MetadataRows::default(),
        knowledge: knowledge::KnowledgeReport::default(),
        reuse: ReuseReport::default(),
        concepts: BTreeMap::new(),
        quads_secs: 0.0,
        kept_versions: Default::default(),
    };
    // The quads of a batch of laws are made in parallel (they depend on nothing but the
    // corpus), then loaded in corpus order.
    let mut made: std::collections::VecDeque<LawQuads> = Default::default();
    for (law_index, law) in corpus.laws.iter().enumerate() {
        if made.is_empty() {
            let end = (law_index + QUAD_BATCH_LAWS).min(corpus.laws.len());
            let tk = Instant::now();
            made = (law_index..end)
                .into_par_iter()
                .map(|l| law_quads(&resolver, corpus, l))
                .collect::<Vec<_>>()
                .into();
            quads_time += tk.elapsed();
        }
        let LawQuads {
            iris,
            work,
            versions,
        } = made.pop_front().expect("a batch per law");
        out.counts.add(&work.counts);
        let mut written = out.delta.put(work)?;
        out.rows.laws.push(LawRow {
            iri: iris.work.clone(),
            short_name: law.short_name.clone(),
            title: law.latest().title.clone(),
            version_count: law.versions.len() as i32,
        });
        for (i, (mut g, k, report, defined)) in versions.into_iter().enumerate() {
            // A concept's latest definition stands for it.
            for c in defined {
                out.concepts.insert(c.iri.clone(), c);
            }
            out.counts.add(&g.counts);
            out.counts.add(&k.counts);
            g.append(k);
            if let Some(x) = extracted.remove(&iris.versions[i]) {
                out.counts.add(&x.counts);
                g.append(x);
            }
            let version_written = out.delta.put(g)?;
            if !version_written {
                out.kept_versions.insert(iris.versions[i].clone());
            }
            written |= version_written;
            out.knowledge.add(&report);
            out.rows.add_version(law, i, &iris);
            done += 1;
            observer.progress(done);
        }
        let hash = law_hash(law);
        match base_laws.get(&iris.work) {
            _ if reuse.base_build.is_none() => {}
            None => reuse.laws_added.push(law.short_name.clone()),
            Some((_, h)) if *h != hash => reuse.laws_changed.push(law.short_name.clone()),
            Some(_) if written => reuse.laws_relinked.push(law.short_name.clone()),
            Some(_) => reuse.laws_unchanged += 1,
        }
        out.delta
            .state
            .laws
            .insert(iris.work.clone(), (law.short_name.clone(), hash));
    }
    reuse.laws_removed = base_laws
        .iter()
        .filter(|(work, _)| !out.delta.state.laws.contains_key(*work))
        .map(|(_, (name, _))| name.clone())
        .collect();
    out.reuse = reuse;
    out.delta.put(build_record(writer.id()))?;
    out.quads_secs = quads_time.as_secs_f64();
    Ok(out)
}

/// The build's own node in the builds graph.
fn build_record(id: &str) -> rdf::QuadSink {
    let build_iri = coal_ontology::iri::build(id);
    let mut b = rdf::QuadSink::new(coal_ontology::iri::BUILDS_GRAPH);
    b.node(&build_iri, coal_ontology::vocab::BUILD);
    b.string(&build_iri, coal_ontology::vocab::BUILD_ID, id);
    b.string(
        &build_iri,
        coal_ontology::vocab::CREATED_AT,
        &kg_store::now_rfc3339(),
    );
    b
}

/// Adds the wall time since `t` to a stage's seconds.
fn add_secs(seconds: &mut BTreeMap<String, f64>, stage: &str, t: Instant) {
    *seconds.entry(stage.to_owned()).or_insert(0.0) += t.elapsed().as_secs_f64();
}

/// Runs the stages in order (extraction, graph, BM25, embeddings, domains, fusion,
/// statute graph, metadata) into the new build; the caller commits or aborts it.
async fn write(
    writer: &BuildWriter,
    corpus: &Corpus,
    observer: &dyn BuildObserver,
    embedder: Option<&dyn coal_models::Embedder>,
    llm: Option<Extraction<'_>>,
    base: Option<(String, delta::GraphState)>,
    opts: &BuildOptions,
) -> Result<Written, BuildError> {
    let mut seconds = BTreeMap::new();
    // Each store-wide cache is read once per build and shared by the stages.
    let llm = llm.map(|l| stages::Llm::open(writer, &l)).transpose()?;
    let mut encoder = match embedder {
        Some(e) if !opts.structure_only => Some(embed::Encoder::open(writer, e)?),
        _ => None,
    };
    // Extraction comes first: its triples belong to the version graphs written next.
    let mut extraction = None;
    let mut extracted = HashMap::new();
    if let Some(llm) = &llm {
        let t = Instant::now();
        let (report, sinks) = stages::extract_stage(corpus, llm, observer)?;
        extracted = sinks;
        extraction = Some(report);
        add_secs(&mut seconds, "extract", t);
    }

    let t = Instant::now();
    let mut g = graph_stage(writer, corpus, base, extracted, observer)?;
    // Structure and knowledge quads are made together, in parallel: `quads` is that
    // time, `graph` the rest (mostly loading them into the store).
    let graph_secs = t.elapsed().as_secs_f64() - g.quads_secs;
    seconds.insert("graph".to_owned(), graph_secs);
    seconds.insert("quads".to_owned(), g.quads_secs);

    let mut embed_report = None;
    let mut domain_report = None;
    let mut centroids = kg_store::statute_graph::Centroids::new();
    if !opts.structure_only {
        let t = Instant::now();
        g.reuse.bm25_laws_reindexed =
            stages::write_text_index(writer, corpus, opts.incremental, observer)?;
        add_secs(&mut seconds, "bm25", t);
        if let Some(encoder) = encoder.as_mut() {
            let t = Instant::now();
            let (report, passage_keys) = embed::embed_stage(
                writer,
                corpus,
                encoder,
                opts.article_vectors,
                opts.incremental,
                observer,
            )?;
            embed_report = Some(report);
            add_secs(&mut seconds, "embed", t);
            let t = Instant::now();
            let (report, quads, by_topic) = stages::domain_stage(
                writer,
                corpus,
                encoder,
                &passage_keys,
                opts.incremental.then_some(opts.recluster_share),
                llm.as_ref(),
                observer,
            )?;
            g.counts.add(&quads.counts);
            g.delta.put(quads)?;
            domain_report = Some(report);
            centroids = by_topic;
            add_secs(&mut seconds, "domains", t);
        }
    }
    let t = Instant::now();
    let concepts: Vec<fusion::ConceptRecord> =
        std::mem::take(&mut g.concepts).into_values().collect();
    let (fusion_report, quads) =
        stages::fusion_stage(writer, &concepts, encoder.as_mut(), llm.as_ref(), observer)?;
    g.counts.add(&quads.counts);
    g.delta.put(quads)?;
    add_secs(&mut seconds, "fusion", t);

    let t = Instant::now();
    let mut reuse = g.reuse;
    reuse.graphs_removed = g.delta.finish()?;
    reuse.graphs_kept = g.delta.kept;
    reuse.graphs_written = g.delta.written;
    g.delta.state.write(&writer.build_dir())?;
    add_secs(&mut seconds, "graph", t);

    if !opts.structure_only {
        let t = Instant::now();
        observer.stage("statute graph", None);
        let (_, reused) = writer.write_statute_graph(&centroids, &g.kept_versions)?;
        reuse.statute_graph_reused = reused;
        add_secs(&mut seconds, "statute_graph", t);
    }

    let t = Instant::now();
    observer.stage("metadata", None);
    let rows = g.rows;
    reuse.metadata_laws_copied = writer
        .write_metadata(rows.laws, rows.versions, rows.articles)
        .await?;
    add_secs(&mut seconds, "metadata", t);
    Ok(Written {
        counts: g.counts,
        embeddings: embed_report,
        knowledge: g.knowledge,
        extraction,
        domains: domain_report,
        reuse,
        fusion: fusion_report,
        seconds,
    })
}

/// Laws whose quads are made together in parallel; bounds the memory they hold.
const QUAD_BATCH_LAWS: usize = 64;

/// One law's IRIs, its work graph and, per version, its structure quads, knowledge quads
/// and report.
struct LawQuads {
    iris: rdf::LawIris,
    work: rdf::QuadSink,
    versions: Vec<(
        rdf::QuadSink,
        rdf::QuadSink,
        knowledge::KnowledgeReport,
        Vec<fusion::ConceptRecord>,
    )>,
}

fn law_quads(resolver: &knowledge::Resolver<'_>, corpus: &Corpus, law_index: usize) -> LawQuads {
    let law = &corpus.laws[law_index];
    let iris = law_iris(law);
    let mut concepts_seen = std::collections::HashSet::new();
    let versions = (0..law.versions.len())
        .map(|i| {
            let g = rdf::version_quads(law, &iris, i);
            let (k, report, concepts) = knowledge::version_knowledge(
                resolver,
                corpus,
                law_index,
                i,
                &iris,
                &mut concepts_seen,
            );
            (g, k, report, concepts)
        })
        .collect();
    let work = rdf::work_quads(law, &iris);
    LawQuads {
        iris,
        work,
        versions,
    }
}

/// An article with where it stands: its IRI, its version and whether that version is its
/// law's latest.
pub(crate) struct PlacedArticle<'c> {
    pub iri: String,
    pub version_iri: std::rc::Rc<str>,
    pub version: &'c coal_corpus::LawVersion,
    pub article: &'c coal_corpus::Article,
    pub latest: bool,
}

/// Every article of every version, in corpus order, with its IRI.
pub(crate) fn placed_articles(corpus: &Corpus) -> impl Iterator<Item = PlacedArticle<'_>> {
    corpus.laws.iter().flat_map(placed_articles_of)
}

/// Every article of every version of one law, with its IRI.
pub(crate) fn placed_articles_of(
    law: &coal_corpus::Law,
) -> impl Iterator<Item = PlacedArticle<'_>> {
    let last = law.versions.len() - 1;
    let iris = law_iris(law);
    law.versions
        .iter()
        .zip(iris.versions)
        .enumerate()
        .flat_map(move |(i, (version, viri))| {
            let version_iri: std::rc::Rc<str> = viri.into();
            version.articles.iter().map(move |article| PlacedArticle {
                iri: coal_ontology::iri::article(
                    &version_iri,
                    article.number.main,
                    article.number.suffix,
                ),
                version_iri: version_iri.clone(),
                version,
                article,
                latest: i == last,
            })
        })
}

fn summarize(
    corpus: &Corpus,
    build_id: &str,
    counts: GraphCounts,
    seconds: BTreeMap<String, f64>,
) -> BuildSummary {
    let mut warnings_by_kind = BTreeMap::new();
    let mut errors_by_kind = BTreeMap::new();
    for p in &corpus.problems {
        let map = if p.severity == Severity::Warning {
            &mut warnings_by_kind
        } else {
            &mut errors_by_kind
        };
        *map.entry(p.kind.name().to_owned()).or_insert(0) += 1;
    }
    let versions: Vec<_> = corpus.versions().collect();
    BuildSummary {
        build_id: build_id.to_owned(),
        files_read: corpus.files_read,
        files_skipped: corpus
            .problems
            .iter()
            .filter(|p| p.severity == Severity::Error)
            .count()
            + warnings_by_kind.get("duplicate_file").copied().unwrap_or(0)
            + warnings_by_kind
                .get("conflicting_version")
                .copied()
                .unwrap_or(0),
        laws: corpus.laws.len(),
        versions: versions.len(),
        articles: corpus.article_count(),
        paragraphs: versions
            .iter()
            .flat_map(|v| &v.articles)
            .map(|a| a.paragraphs.len())
            .sum(),
        items: versions
            .iter()
            .flat_map(|v| &v.articles)
            .flat_map(|a| &a.paragraphs)
            .map(|p| p.items.len())
            .sum(),
        divisions: versions.iter().map(|v| v.divisions.len()).sum(),
        nodes: counts.nodes(),
        edges: counts.edges(),
        triples: counts.triples,
        nodes_by_type: counts.nodes_by_type,
        edges_by_type: counts.edges_by_type,
        warnings_by_kind,
        errors_by_kind,
        store_bytes: 0,
        embeddings: None,
        knowledge: knowledge::KnowledgeReport::default(),
        extraction: None,
        domains: None,
        fusion: fusion::FusionReport::default(),
        reuse: ReuseReport::default(),
        seconds,
        problems: corpus.problems.clone(),
    }
}
