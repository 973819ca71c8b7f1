//! `ask`: the method as a chain of stages, each with a typed product and its part of the
//! trace:
//!
//! analyse ([`analyse`]: clean, date, named laws and articles, decomposition) →
//! lookup ([`lookup`]: "X法第N条的内容是什么" answered exactly) →
//! retrieve ([`retrieval`]: BM25, bigram BM25, dense over articles and 款, hybrid,
//! re-ranking) → route ([`route`]: graph links, Eq. 1–9, the tier) → draft
//! ([`draft_stage`]: the harder tiers' drafted answer, with a chat model) → tier ([`tiers`],
//! [`graph_tier`], [`verify`]) → judge ([`judge_stage`]: the chat model reads the first
//! candidates against the question, with `judge_from_tier`) → context ([`context_stage`]:
//! score cliff or the judge's cut, named articles) →
//! answer ([`answer`]: extractive, or generated with checked citations).
//!
//! `eval` and `calibrate` call [`Engine::ask`], so they measure exactly these stages.

mod analyse;
mod answer;
mod context_stage;
mod draft_stage;
pub mod generate;
mod graph_tier;
mod judge_stage;
mod lookup;
mod retrieval;
mod route;
mod tiers;
mod verify;

use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

use coal_models::Embedder;
use kg_store::Store;

use crate::QueryError;
use crate::complexity::{EntityKind, Lexicon, QuestionType};
use crate::graph::StatuteGraph;
use crate::link::Linker;
use crate::method::MethodConfig;
use crate::retrieve::Retriever;

pub use analyse::{MAX_QUESTION_CHARS, check_date};
pub use answer::{
    Answer, AnswerKind, Citation, ContextArticle, Dropped, ExplainedPath, Kept, RANKED_KEPT,
    TIER_RANKING_KEPT, Trace,
};
pub use graph_tier::HEADING_CONFIRMED_WITHIN;
pub use retrieval::PARAGRAPH_CANDIDATES;

/// Why an encoder given to [`Engine::open_loading`] did not load.
pub type EncoderLoadError = Box<dyn std::error::Error + Send + Sync>;

#[derive(Debug, Clone, Default)]
pub struct AskOptions {
    /// Skip routing and use this tier (1–4).
    pub force_tier: Option<u8>,
    /// Ablations: route on one side of Eq. 9 only.
    pub without_intrinsic: bool,
    pub without_consistency: bool,
    /// Ablation: the top N of the hybrid list, no routing and no cliff.
    pub fixed_top: Option<usize>,
    /// Answer from the versions in force on this date (`YYYY-MM-DD`) instead of the latest.
    pub as_of: Option<String>,
    /// With a chat model: let it decompose the question but write the extractive answer
    /// (what the routing and retrieval gain from the model, without generation's cost).
    pub extractive: bool,
    /// With a chat model: the rules decompose the question and the model only writes the
    /// answer (generation measured alone, at half the model calls).
    pub rule_decomposition: bool,
}

pub struct Engine {
    retriever: Retriever,
    graph: StatuteGraph,
    linker: Linker,
    lexicon: Lexicon,
    cfg: MethodConfig,
    /// Every version of every law (not only the latest), by version IRI.
    validity: HashMap<String, lookup::Validity>,
    chat: Option<Box<dyn coal_models::ChatModel>>,
    /// Wall time of each start-up stage (indexes, graph file, graph, linker, lexicon).
    open_ms: Vec<(&'static str, f64)>,
    /// Path-search buffers (one per concurrent question), reused across questions.
    scratch: std::sync::Mutex<Vec<crate::graph::paths::Scratch>>,
}

/// Times the stages of one question.
struct Laps {
    t: Instant,
    timings: BTreeMap<String, f64>,
}

impl Laps {
    fn start() -> Laps {
        Laps {
            t: Instant::now(),
            timings: BTreeMap::new(),
        }
    }

    fn lap(&mut self, name: &str) {
        self.timings
            .insert(name.to_owned(), self.t.elapsed().as_secs_f64() * 1e3);
        self.t = Instant::now();
    }
}

impl Engine {
    pub fn open(
        store: &Store,
        embedder: Option<Box<dyn Embedder>>,
        cfg: MethodConfig,
    ) -> Result<Engine, QueryError> {
        Engine::open_loading(store, move || Ok(embedder), cfg)
    }

    /// [`Engine::open`] with the encoder loaded by `load_embedder` while the indexes and
    /// the statute graph load: start-up is the longest of these, not their sum (the HNSW
    /// indexes and the encoder take ~200 ms each on the eval profile).
    pub fn open_loading<F>(
        store: &Store,
        load_embedder: F,
        cfg: MethodConfig,
    ) -> Result<Engine, QueryError>
    where
        F: FnOnce() -> Result<Option<Box<dyn Embedder>>, EncoderLoadError> + Send,
    {
        cfg.validate()?;
        let started = Instant::now();
        let since = |t: Instant| t.elapsed().as_secs_f64() * 1e3;
        let (embedder, vectors, paragraphs, text, data, mut open_ms) =
            std::thread::scope(|s| -> Result<_, QueryError> {
                let timed = |name: &'static str| move || (name, since(started));
                let encoder = s.spawn(move || (load_embedder(), timed("encoder")()));
                let vectors = s.spawn(move || (store.vector_index(), timed("vectors")()));
                let paragraphs =
                    s.spawn(move || (store.paragraph_vector_index(), timed("款 vectors")()));
                let text = store.text_index()?;
                let data = store.statute_graph()?;
                let mut open_ms = vec![timed("text index, graph file")()];
                fn join<T>(r: std::thread::Result<T>) -> Result<T, QueryError> {
                    r.map_err(|_| QueryError::StartupPanic)
                }
                let (embedder, t) = join(encoder.join())?;
                open_ms.push(t);
                let embedder = embedder.map_err(|e| QueryError::Encoder(e.to_string()))?;
                let (vectors, t) = join(vectors.join())?;
                open_ms.push(t);
                let (paragraphs, t) = join(paragraphs.join())?;
                open_ms.push(t);
                Ok((embedder, vectors, paragraphs, text, data, open_ms))
            })?;
        // Dense indexes are only used (and must exist) with an encoder.
        let (vectors, paragraphs) = match &embedder {
            Some(_) => (Some(vectors?), paragraphs?),
            None => (None, None),
        };
        let retriever = Retriever::from_parts(text, vectors, paragraphs, embedder)?;
        let mut t = Instant::now();
        let mut lap = |name: &'static str, open_ms: &mut Vec<(&'static str, f64)>| {
            open_ms.push((name, since(t)));
            t = Instant::now();
        };
        let graph = StatuteGraph::new(data);
        lap("graph", &mut open_ms);
        let validity = lookup::validity_table(&graph.versions);
        let linker = Linker::new(&graph);
        lap("linker", &mut open_ms);
        // The rules' lexicon: law names, then concept and entity labels, each with the
        // graph domain of what it names.
        let mut lexicon = Lexicon::default();
        for (i, l) in graph.laws.iter().enumerate() {
            let domain = linker.law_domain(&graph, i);
            lexicon.add(&l.short_name, EntityKind::Law, &l.short_name, &domain);
            lexicon.add(&l.title, EntityKind::Law, &l.short_name, &domain);
        }
        let mut names: Vec<(&String, &Vec<crate::graph::NodeId>)> = graph.names.iter().collect();
        names.sort();
        for (label, nodes) in names {
            let Some(&n) = nodes.first() else { continue };
            if !matches!(
                graph.kind(n),
                crate::graph::NodeKind::Concept | crate::graph::NodeKind::Entity
            ) {
                continue;
            }
            let law = graph.law_name(n).unwrap_or_default().to_owned();
            let domain = linker.domain_of(&graph, n).unwrap_or_default();
            lexicon.add(label, EntityKind::Concept, &law, &domain);
        }
        lap("lexicon", &mut open_ms);
        Ok(Engine {
            retriever,
            graph,
            linker,
            lexicon,
            cfg,
            validity,
            chat: None,
            open_ms,
            scratch: std::sync::Mutex::new(Vec::new()),
        })
    }

    /// Runs `f` with path-search buffers of the graph's size, taken from (and returned
    /// to) the engine's pool: questions need not allocate them.
    pub(crate) fn with_scratch<T>(
        &self,
        f: impl FnOnce(&mut crate::graph::paths::Scratch) -> T,
    ) -> T {
        let taken = self.scratch.lock().ok().and_then(|mut pool| pool.pop());
        let mut s = taken.unwrap_or_else(|| crate::graph::paths::Scratch::new(&self.graph));
        let out = f(&mut s);
        if let Ok(mut pool) = self.scratch.lock() {
            pool.push(s);
        }
        out
    }

    /// Answers are written by this chat model from the context (checked citations);
    /// without one they are extractive.
    pub fn set_chat(&mut self, chat: Box<dyn coal_models::ChatModel>) {
        self.chat = Some(chat);
    }

    /// What the chat model's replies have cost so far (backends that count it).
    pub fn chat_totals(&self) -> Option<coal_models::ChatTotals> {
        self.chat.as_ref().and_then(|c| c.totals())
    }

    pub fn config(&self) -> &MethodConfig {
        &self.cfg
    }

    pub fn set_config(&mut self, cfg: MethodConfig) -> Result<(), QueryError> {
        cfg.validate()?;
        self.cfg = cfg;
        Ok(())
    }

    /// Is `iri` an article of the store (any version)?
    pub fn is_article(&self, iri: &str) -> bool {
        matches!(self.retriever.article(iri), Ok(Some(_)))
    }

    /// The retrievers (BM25, dense, hybrid) over the same indexes `ask` uses.
    pub fn retriever(&self) -> &Retriever {
        &self.retriever
    }

    /// The statute graph the graph tiers walk.
    pub fn graph(&self) -> &StatuteGraph {
        &self.graph
    }

    /// Milliseconds it took to load the statute graph at start-up (reading its file and
    /// building the typed graph).
    pub fn graph_load_ms(&self) -> f64 {
        self.open_ms
            .iter()
            .filter(|(n, _)| n.starts_with("graph"))
            .map(|(_, ms)| ms)
            .sum()
    }

    /// Wall time of each stage of [`Engine::open`], in order.
    pub fn open_ms(&self) -> &[(&'static str, f64)] {
        &self.open_ms
    }

    /// Articles and concepts the graph tiers walk.
    pub fn graph_size(&self) -> (usize, usize) {
        let concepts = self
            .graph
            .stats
            .nodes_by_kind
            .get("concept")
            .copied()
            .unwrap_or(0);
        (self.graph.article_count(), concepts)
    }

    pub fn ask(&self, question: &str, opts: &AskOptions) -> Result<Answer, QueryError> {
        let mut laps = Laps::start();
        let a = self.analyse(question, opts.as_of.as_deref(), opts.rule_decomposition)?;
        laps.lap("intrinsic");
        let mut trace = Trace {
            decomposed_by: a.decomposed_by.clone(),
            ..Trace::default()
        };
        let early_trace = || Trace {
            timings_ms: laps.timings.clone(),
            ..trace.clone()
        };
        if let Some(answer) = self.refusal(&a, early_trace) {
            return Ok(answer);
        }
        if opts.force_tier.is_none()
            && opts.fixed_top.is_none()
            && a.is_lookup
            && let Some(mut answer) = self.lookup(&a, early_trace())
        {
            laps.lap("lookup");
            answer.trace.timings_ms = laps.timings;
            return Ok(answer);
        }
        let mut warnings = a.warnings.clone();
        for m in &a.mentions {
            let exists = self
                .article_iri(m, a.as_of.as_deref())
                .is_some_and(|iri| self.is_article(&iri));
            if !exists {
                warnings.push(format!(
                    "《{}》 has no {} in the version {}",
                    self.graph.laws[m.law].title,
                    m.label,
                    a.as_of
                        .as_deref()
                        .map(|d| format!("in force on {d}"))
                        .unwrap_or_else(|| "in force".into())
                ));
            }
        }
        let mut r = self.retrieve(&a)?;
        warnings.extend(self.retriever.bigram_warning());
        for (name, ms) in &r.timings {
            laps.timings.insert((*name).to_owned(), *ms);
        }
        laps.t = Instant::now();
        let route = self.route(&a, &r, opts);
        warnings.extend(route.warnings.iter().cloned());
        laps.lap("consistency");
        let tier = route.tier;
        let draft = self.draft_stage(tier, &a, opts, &mut r, &mut warnings);
        if draft.is_some() {
            laps.lap("draft");
        }
        let mut ranking = self.rank(tier, opts.fixed_top, &r, &route.links, &a.question);
        laps.lap("tier");
        let judgement = self.judge_stage(tier, &a, opts, &mut ranking.ranked, &mut warnings);
        if judgement.is_some() {
            laps.lap("judge");
        }
        let judged_keep = judgement.as_ref().map(|j| j.kept);
        let (context, ranked) =
            self.context(&a, tier, &ranking.ranked, opts.fixed_top.or(judged_keep));
        laps.lap("context");
        let exists = |law: &str, label: &str| self.article_exists(law, label);
        let written = answer::write(
            self.chat.as_deref().filter(|_| !opts.extractive),
            &a.question,
            context,
            &exists,
            &mut warnings,
        );
        if written.generated_by.is_some() {
            laps.lap("generate");
        }
        // What the graph tier walked from (the links less the headings it left out).
        let explicit = ranking
            .walked_links
            .iter()
            .any(|l| l.kind != crate::link::LinkKind::Topic);
        if !explicit
            && route.complexity.intrinsic.question_type != QuestionType::ArticleLookup
            && tier >= 3
        {
            warnings.push(
                "the question links to no node of the graph by name (law, article, concept, entity or heading); the graph tier walked from its best text matches and nearest topics only".into(),
            );
        }
        let k = self.cfg.consistency_k;
        trace.complexity = Some(route.complexity);
        trace.links = route.links;
        trace.draft = draft;
        trace.judged_keep = judged_keep;
        trace.judged = judgement.map(|j| j.judged).unwrap_or_default();
        trace.removed_citations = written.removed;
        trace.bm25 = r.bm25.into_iter().take(k).collect();
        trace.bigram = r.bigram.into_iter().take(k).collect();
        trace.dense = r.dense.into_iter().take(k).collect();
        trace.paragraphs = r.paragraphs.into_iter().take(k).collect();
        trace.hybrid = r.hybrid.into_iter().take(k).collect();
        trace.reranked = r.reranked.into_iter().take(k).collect();
        trace.graph = ranking.graph.into_iter().take(k).collect();
        trace.paths = ranking.paths;
        trace.unconfirmed_headings = ranking.unconfirmed_headings;
        trace.dropped = ranking.dropped;
        trace.kept = ranking.kept;
        // The ranking is not read past the context stage: its head moves into the trace.
        trace.tier_ranking = ranking
            .ranked
            .into_iter()
            .take(TIER_RANKING_KEPT)
            .map(|r| (r.iri, r.score))
            .collect();
        trace.ranked = ranked;
        trace.timings_ms = laps.timings;
        let mut answer = Answer::new(
            a.question,
            tier,
            AnswerKind::ApplicableArticles,
            written.answer,
            written.context,
            warnings,
            trace,
        );
        answer.generated_by = written.generated_by;
        Ok(answer)
    }
}
