//! `ask`: score a question's complexity, route it to one of four retrieval tiers, filter
//! the context by score cliff and answer extractively with the articles it rests on.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Instant;

use coal_models::Embedder;
use kg_store::Store;
use serde::Serialize;

use crate::QueryError;
use crate::complexity::{self, Complexity, EntityKind, Lexicon, QuestionType};
use crate::context::cliff_cut;
use crate::graph::{Relation, StatuteGraph};
use crate::method::MethodConfig;
use crate::retrieve::{Fusion, HYBRID_CANDIDATES, Hit, Retriever};

/// Characters of a question the engine reads (the rest is dropped with a warning).
pub const MAX_QUESTION_CHARS: usize = 2_000;

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
}

/// When a law version is in force: from its date until the next version's.
#[derive(Debug, Clone)]
struct Validity {
    /// The law's work IRI.
    work: String,
    from: Option<String>,
    until: Option<String>,
}

impl Validity {
    fn covers(&self, date: &str) -> bool {
        self.from.as_deref().is_some_and(|f| f <= date)
            && self.until.as_deref().is_none_or(|u| date < u)
    }
}

/// `…/劳动合同法/2012-12-28/art_47` → `…/劳动合同法/2012-12-28`.
fn version_of(article_iri: &str) -> &str {
    article_iri
        .rsplit_once("/art_")
        .map(|(v, _)| v)
        .unwrap_or(article_iri)
}

#[derive(Debug, Clone, Serialize)]
pub struct ContextArticle {
    pub iri: String,
    pub law_title: String,
    pub version_date: String,
    pub label: String,
    pub text: String,
    pub score: f64,
    /// Which retriever or graph path brought it.
    pub via: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Dropped {
    pub iri: String,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Citation {
    pub law_title: String,
    pub version_date: String,
    pub label: String,
    pub iri: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AnswerKind {
    /// The question asked for an article and the graph has it: the answer is its text.
    ArticleText,
    /// The question asked for an article that the graph does not have.
    NoSuchArticle,
    /// The applicable articles, most relevant first.
    ApplicableArticles,
}

#[derive(Debug, Clone, Serialize)]
pub struct Trace {
    pub complexity: Option<Complexity>,
    /// Who decomposed the question: `rules` or the chat model's id.
    pub decomposed_by: String,
    /// Citations cut from a generated answer, with the reason.
    pub removed_citations: Vec<crate::generate::RemovedCitation>,
    pub bm25: Vec<Hit>,
    /// BM25 over character bigrams.
    pub bigram: Vec<Hit>,
    pub dense: Vec<Hit>,
    /// The method's fusion, 0.7·dense + 0.3·BM25.
    pub hybrid: Vec<Hit>,
    /// Tier 2's re-ranking of all three lists with the graph's signals (`rerank.rs`),
    /// which tiers 2–4 start from.
    pub reranked: Vec<Hit>,
    pub graph: Vec<Hit>,
    pub dropped: Vec<Dropped>,
    /// The first [`RANKED_KEPT`] articles of the routed ranking (named articles first),
    /// before the score cliff cuts the context: what routed Recall@10 measures.
    pub ranked: Vec<String>,
    pub timings_ms: BTreeMap<String, f64>,
}

/// Articles of the routed ranking kept in the trace.
pub const RANKED_KEPT: usize = 10;

#[derive(Debug, Clone, Serialize)]
pub struct Answer {
    pub question: String,
    /// The chat model that wrote the answer; `None` for the offline, extractive answer.
    pub generated_by: Option<String>,
    pub tier: u8,
    pub kind: AnswerKind,
    pub answer: String,
    pub citations: Vec<Citation>,
    pub context: Vec<ContextArticle>,
    pub warnings: Vec<String>,
    pub trace: Trace,
}

pub struct Engine {
    retriever: Retriever,
    graph: StatuteGraph,
    lexicon: Lexicon,
    cfg: MethodConfig,
    /// Laws by normalized short name and title (see [`coal_corpus::question_name`]).
    law_names: HashMap<String, usize>,
    /// Every version of every law (not only the latest), by version IRI.
    validity: HashMap<String, Validity>,
    chat: Option<Box<dyn coal_models::ChatModel>>,
    longest_law_name: usize,
}

/// `第N条` with the law named right before it, in a question.
struct ArticleMention {
    law: usize,
    label: String,
    main: u32,
}

impl Engine {
    pub fn open(
        store: &Store,
        embedder: Option<Box<dyn Embedder>>,
        cfg: MethodConfig,
    ) -> Result<Engine, QueryError> {
        cfg.validate().map_err(QueryError::BadInput)?;
        let retriever = Retriever::open(store, embedder)?;
        let mut rg = store.retrieval_graph()?;
        let versions = match std::mem::take(&mut rg.versions) {
            v if v.is_empty() => {
                kg_store::retrieval_graph::RetrievalGraph::extract_versions(store.graph())?
            }
            v => v,
        };
        let validity = versions
            .into_iter()
            .map(|v| {
                (
                    v.iri,
                    Validity {
                        work: v.work,
                        from: v.valid_from,
                        until: v.valid_until,
                    },
                )
            })
            .collect();
        let graph = StatuteGraph::new(rg);
        let mut lexicon = Lexicon::default();
        for l in &graph.laws {
            lexicon.add(&l.short_name, EntityKind::Law, &l.short_name, &l.domain);
            lexicon.add(&l.title, EntityKind::Law, &l.short_name, &l.domain);
        }
        let domain_of: HashMap<&str, &str> = graph
            .laws
            .iter()
            .map(|l| (l.short_name.as_str(), l.domain.as_str()))
            .collect();
        for (label, nodes) in &graph.concepts {
            if let Some(law) = nodes.first().and_then(|&n| graph.law_of(n)) {
                let domain = domain_of.get(law).copied().unwrap_or_default();
                lexicon.add(label, EntityKind::Concept, law, domain);
            }
        }
        let mut law_names = HashMap::new();
        for (i, l) in graph.laws.iter().enumerate() {
            law_names
                .entry(coal_corpus::question_name(&l.short_name))
                .or_insert(i);
            law_names
                .entry(coal_corpus::question_name(&l.title))
                .or_insert(i);
        }
        let longest_law_name = law_names
            .keys()
            .map(|k| k.chars().count())
            .max()
            .unwrap_or(0);
        Ok(Engine {
            retriever,
            graph,
            lexicon,
            cfg,
            law_names,
            longest_law_name,
            validity,
            chat: None,
        })
    }

    /// Answers are written by this chat model from the context (checked citations);
    /// without one they are extractive.
    pub fn set_chat(&mut self, chat: Box<dyn coal_models::ChatModel>) {
        self.chat = Some(chat);
    }

    /// Does `label` (第N条, 第N条之M) exist in the current version of the law named `law`?
    fn article_exists(&self, law: &str, label: &str) -> bool {
        let Some(&l) = self.law_names.get(&coal_corpus::question_name(law)) else {
            return false;
        };
        let re = article_label_re();
        let Some(c) = re.captures(label) else {
            return false;
        };
        let main = coal_corpus_numeral(&c[1]);
        let suffix = c.get(2).and_then(|m| coal_corpus_numeral(m.as_str()));
        let Some(main) = main else { return false };
        let slug = match suffix {
            Some(s) => format!("{main}-{s}"),
            None => main.to_string(),
        };
        let iri = format!("{}/art_{slug}", self.graph.laws[l].version_iri);
        self.is_article(&iri)
    }

    pub fn config(&self) -> &MethodConfig {
        &self.cfg
    }

    pub fn set_config(&mut self, cfg: MethodConfig) -> Result<(), QueryError> {
        cfg.validate().map_err(QueryError::BadInput)?;
        self.cfg = cfg;
        Ok(())
    }

    /// Is `iri` an article of the store (any version)?
    pub fn is_article(&self, iri: &str) -> bool {
        matches!(self.retriever.article(iri), Ok(Some(_)))
    }

    /// Articles and concepts the graph tiers walk.
    pub fn graph_size(&self) -> (usize, usize) {
        (self.graph.article_count(), self.graph.concepts.len())
    }

    fn clean(question: &str, warnings: &mut Vec<String>) -> Result<String, QueryError> {
        let q: String = question
            .trim()
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        let q = q.trim().to_owned();
        if q.is_empty() {
            return Err(QueryError::BadInput("the question is empty".into()));
        }
        // The statutes are Chinese: a question without a Chinese character matches them
        // only by accident (numbers, the multilingual embedding's rough alignment).
        if !q.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)) {
            warnings.push(
                "the question has no Chinese characters; the statutes are Chinese, so the articles found may not concern it (ask in Chinese)".into(),
            );
        }
        let n = q.chars().count();
        if n > MAX_QUESTION_CHARS {
            warnings.push(format!(
                "the question has {n} characters; only the first {MAX_QUESTION_CHARS} were read"
            ));
            return Ok(q.chars().take(MAX_QUESTION_CHARS).collect());
        }
        Ok(q)
    }

    /// `X法第N条` in the question: the law by the longest name ending right before 第.
    fn article_mentions(&self, q: &str) -> Vec<ArticleMention> {
        let re = article_mention_re();
        let mut out = Vec::new();
        for m in re.captures_iter(q) {
            let whole = m.get(0).unwrap();
            let before: Vec<char> = coal_corpus::question_name(&q[..whole.start()])
                .chars()
                .collect();
            let law = (2..=before.len().min(self.longest_law_name))
                .rev()
                .find_map(|len| {
                    let name: String = before[before.len() - len..].iter().collect();
                    self.law_names.get(&name).copied()
                });
            let digits = &m[1];
            let main = if digits.chars().all(|c| c.is_ascii_digit()) {
                digits.parse().ok()
            } else {
                coal_corpus_numeral(digits)
            };
            if let (Some(law), Some(main)) = (law, main) {
                out.push(ArticleMention {
                    law,
                    label: format!("第{}条", to_chinese(main)),
                    main,
                });
            }
        }
        out
    }

    /// The version of the mentioned law in force on `as_of` (the latest without a date);
    /// `None` when the law was not yet in force then.
    fn version_for(&self, m: &ArticleMention, as_of: Option<&str>) -> Option<String> {
        let latest = &self.graph.laws[m.law].version_iri;
        let Some(date) = as_of else {
            return Some(latest.clone());
        };
        let work = &self.validity.get(latest)?.work;
        self.validity
            .iter()
            .find(|(_, v)| &v.work == work && v.covers(date))
            .map(|(iri, _)| iri.clone())
    }

    fn article_iri(&self, m: &ArticleMention, as_of: Option<&str>) -> Option<String> {
        self.version_for(m, as_of)
            .map(|v| format!("{v}/art_{}", m.main))
    }

    /// A retriever's list restricted to the versions in force on `as_of`.
    fn in_force(&self, hits: Vec<Hit>, as_of: Option<&str>, k: usize) -> Vec<Hit> {
        let Some(date) = as_of else {
            return hits;
        };
        hits.into_iter()
            .filter(|h| {
                self.validity
                    .get(version_of(&h.iri))
                    .is_some_and(|v| v.covers(date))
            })
            .take(k)
            .collect()
    }

    fn context_article(&self, iri: &str, score: f64, via: &str) -> Option<ContextArticle> {
        let a = self.retriever.article(iri).ok().flatten()?;
        Some(ContextArticle {
            iri: iri.to_owned(),
            law_title: a.law_title,
            version_date: a.version_date,
            label: a.label,
            text: a.text,
            score,
            via: via.to_owned(),
        })
    }

    pub fn ask(&self, question: &str, opts: &AskOptions) -> Result<Answer, QueryError> {
        let t0 = Instant::now();
        let mut timings = BTreeMap::new();
        let mut lap = |name: &str, t: &mut Instant| {
            timings.insert(name.to_owned(), t.elapsed().as_secs_f64() * 1e3);
            *t = Instant::now();
        };
        let mut t = t0;
        let mut warnings = Vec::new();
        let q = Self::clean(question, &mut warnings)?;
        let as_of = opts.as_of.as_deref();
        if let Some(d) = as_of
            && !(d.len() == 10 && d.as_bytes()[4] == b'-' && d.as_bytes()[7] == b'-')
        {
            return Err(QueryError::BadInput(format!(
                "--as-of {d}: expected YYYY-MM-DD"
            )));
        }
        // With a chat model the LLM decomposes the question; the rules do otherwise, and
        // when the LLM fails.
        let (intrinsic, decomposed_by) = match &self.chat {
            Some(chat) => match complexity::llm::decompose(chat.as_ref(), &q, &self.lexicon) {
                Ok(d) => (
                    complexity::intrinsic::from_decomposition(&q, d, &self.cfg),
                    chat.id().to_owned(),
                ),
                Err(e) => {
                    warnings.push(format!(
                        "the LLM decomposition failed ({e}); the rules decomposed the question"
                    ));
                    (
                        complexity::intrinsic(&q, &self.lexicon, &self.cfg),
                        "rules".to_owned(),
                    )
                }
            },
            None => (
                complexity::intrinsic(&q, &self.lexicon, &self.cfg),
                "rules".to_owned(),
            ),
        };
        let mentions = self.article_mentions(&q);
        lap("intrinsic", &mut t);

        // An article lookup is answered from the graph, exactly.
        if intrinsic.question_type == QuestionType::ArticleLookup
            && opts.force_tier.is_none()
            && opts.fixed_top.is_none()
            && let Some(m) = mentions.first()
        {
            let law = &self.graph.laws[m.law];
            let found = self
                .article_iri(m, as_of)
                .and_then(|iri| self.context_article(&iri, 1.0, "graph lookup"));
            let (kind, answer, context) = match (found, as_of) {
                (Some(a), _) => (AnswerKind::ArticleText, a.text.clone(), vec![a]),
                (None, Some(d)) if self.version_for(m, as_of).is_none() => (
                    AnswerKind::NoSuchArticle,
                    format!("《{}》在{d}尚未施行。", law.title),
                    Vec::new(),
                ),
                (None, _) => (
                    AnswerKind::NoSuchArticle,
                    format!(
                        "《{}》（{}）没有{}。",
                        law.title,
                        self.version_for(m, as_of)
                            .and_then(|v| self.validity.get(&v).and_then(|x| x.from.clone()))
                            .unwrap_or_else(|| "未注明日期".into()),
                        m.label
                    ),
                    Vec::new(),
                ),
            };
            lap("lookup", &mut t);
            return Ok(self.finish(
                q,
                1,
                kind,
                answer,
                context,
                warnings,
                Trace {
                    complexity: None,
                    decomposed_by,
                    removed_citations: Vec::new(),
                    bm25: Vec::new(),
                    bigram: Vec::new(),
                    dense: Vec::new(),
                    hybrid: Vec::new(),
                    reranked: Vec::new(),
                    graph: Vec::new(),
                    dropped: Vec::new(),
                    ranked: Vec::new(),
                    timings_ms: timings,
                },
            ));
        }
        for m in &mentions {
            let exists = self
                .article_iri(m, as_of)
                .is_some_and(|iri| self.retriever.article(&iri).ok().flatten().is_some());
            if !exists {
                warnings.push(format!(
                    "《{}》 has no {} in the version {}",
                    self.graph.laws[m.law].title,
                    m.label,
                    as_of
                        .map(|d| format!("in force on {d}"))
                        .unwrap_or_else(|| "in force".into())
                ));
            }
        }

        // Each retriever once: consistency, the tiers and the trace all use these lists.
        // With --as-of, every version is searched and those not in force are left out.
        let (n, old_too) = match as_of {
            Some(_) => (HYBRID_CANDIDATES * 4, true),
            None => (HYBRID_CANDIDATES, false),
        };
        let bm25 = self.in_force(
            self.retriever.bm25(&q, n, old_too)?,
            as_of,
            HYBRID_CANDIDATES,
        );
        lap("bm25", &mut t);
        let bigram = self.in_force(
            self.retriever.bigram(&q, n, old_too)?,
            as_of,
            HYBRID_CANDIDATES,
        );
        warnings.extend(self.retriever.bigram_warning());
        lap("bigram", &mut t);
        let dense = self.in_force(
            self.retriever.dense(&q, n, old_too)?,
            as_of,
            HYBRID_CANDIDATES,
        );
        lap("dense", &mut t);
        let k = self.cfg.consistency_k;
        let top = |l: &[Hit]| l.iter().take(k).map(|h| h.iri.clone()).collect::<Vec<_>>();
        let (tb, td) = (top(&bm25), top(&dense));
        let consistency = complexity::consistency(
            bm25.first().map(|h| h.score as f64).unwrap_or(0.0),
            &tb.iter().map(String::as_str).collect::<Vec<_>>(),
            &td.iter().map(String::as_str).collect::<Vec<_>>(),
            &self.cfg,
        );
        let cx = complexity::combine(
            intrinsic,
            consistency,
            &self.cfg,
            !opts.without_intrinsic,
            !opts.without_consistency,
        );
        let hybrid = Retriever::fuse(&bm25, &dense, Fusion::Weighted, HYBRID_CANDIDATES);
        lap("consistency", &mut t);
        // The graph holds the current versions only: with --as-of, an article of a law
        // amended since would miss the graph's signals that an unchanged law's articles get.
        let graph = as_of.is_none().then_some(&self.graph);
        let reranked = crate::rerank::rerank(&dense, &bm25, &bigram, graph, &self.cfg);
        lap("rerank", &mut t);

        let mut tier = opts.force_tier.unwrap_or(cx.tier).clamp(1, 4);
        if as_of.is_some() && tier >= 3 {
            warnings.push(format!(
                "tier {tier} walks the graph of the current versions; with --as-of tier 2 (re-ranked hybrid) answered"
            ));
            tier = 2;
        }
        let mut dropped = Vec::new();
        let mut graph_hits = Vec::new();
        let ranked: Vec<(String, f64, &str)> = if let Some(n) = opts.fixed_top {
            hybrid
                .iter()
                .take(n)
                .map(|h| (h.iri.clone(), h.score as f64, "hybrid"))
                .collect()
        } else {
            match tier {
                1 => dense
                    .iter()
                    .map(|h| (h.iri.clone(), h.score as f64, "dense"))
                    .collect(),
                2 => self.refine(&reranked),
                3 => {
                    graph_hits = self.graph_retrieval(&cx, &mentions, &reranked);
                    graph_hits
                        .iter()
                        .map(|h| (h.iri.clone(), h.score as f64, "graph"))
                        .collect()
                }
                _ => {
                    graph_hits = self.graph_retrieval(&cx, &mentions, &reranked);
                    self.verify(&cx, &mentions, &reranked, &graph_hits, &mut dropped)
                }
            }
        };
        lap("tier", &mut t);

        let scores: Vec<f64> = ranked.iter().map(|r| r.1).collect();
        let ti = tier as usize - 1;
        let keep = match opts.fixed_top {
            Some(n) => n.min(ranked.len()),
            None => cliff_cut(
                &scores,
                self.cfg.cliff_sigma,
                self.cfg.context_min[ti],
                self.cfg.context_max[ti],
            ),
        };
        let mut context: Vec<ContextArticle> = ranked
            .iter()
            .take(keep)
            .filter_map(|(iri, s, via)| self.context_article(iri, *s, via))
            .collect();
        // An article the question names is always in the context, first.
        for m in mentions.iter().rev() {
            let Some(iri) = self.article_iri(m, as_of) else {
                continue;
            };
            context.retain(|c| c.iri != iri);
            if let Some(a) = self.context_article(&iri, f64::INFINITY, "named in the question") {
                context.insert(0, a);
            }
        }
        lap("context", &mut t);
        let mut routed_top: Vec<String> = Vec::with_capacity(RANKED_KEPT);
        let named = context
            .iter()
            .take_while(|c| c.score == f64::INFINITY)
            .map(|c| c.iri.clone());
        for iri in named.chain(ranked.iter().map(|r| r.0.clone())) {
            if routed_top.len() == RANKED_KEPT {
                break;
            }
            if !routed_top.contains(&iri) {
                routed_top.push(iri);
            }
        }
        let mut removed_citations = Vec::new();
        let mut generated_by = None;
        let mut answer = structured_answer(&q, &context);
        if let Some(chat) = &self.chat
            && !context.is_empty()
        {
            let user = crate::generate::user_prompt(&q, &context);
            match chat.complete(crate::generate::system_prompt(), &user) {
                Ok(out) => {
                    let g = crate::generate::validate(&out, &context, &|law, label| {
                        self.article_exists(law, label)
                    });
                    if g.cited.is_empty() {
                        warnings.push("the generated answer cites no article; the context articles are listed".into());
                    } else {
                        context = g.cited.iter().map(|&i| context[i].clone()).collect();
                    }
                    answer = g.text;
                    removed_citations = g.removed;
                    generated_by = Some(chat.id().to_owned());
                }
                Err(e) => warnings.push(format!("{e}; the answer is extractive")),
            }
            lap("generate", &mut t);
        }
        let trace = Trace {
            complexity: Some(cx),
            decomposed_by,
            removed_citations,
            bm25: bm25.into_iter().take(k).collect(),
            bigram: bigram.into_iter().take(k).collect(),
            dense: dense.into_iter().take(k).collect(),
            hybrid: hybrid.into_iter().take(k).collect(),
            reranked: reranked.into_iter().take(k).collect(),
            graph: graph_hits.into_iter().take(k).collect(),
            dropped,
            ranked: routed_top,
            timings_ms: timings,
        };
        let mut a = self.finish(
            q,
            tier,
            AnswerKind::ApplicableArticles,
            answer,
            context,
            warnings,
            trace,
        );
        a.generated_by = generated_by;
        Ok(a)
    }

    #[allow(clippy::too_many_arguments)]
    fn finish(
        &self,
        question: String,
        tier: u8,
        kind: AnswerKind,
        answer: String,
        context: Vec<ContextArticle>,
        warnings: Vec<String>,
        mut trace: Trace,
    ) -> Answer {
        if trace.ranked.is_empty() {
            // A lookup: the article looked up is the whole ranking.
            trace.ranked = context.iter().map(|c| c.iri.clone()).collect();
        }
        let citations = context
            .iter()
            .map(|c| Citation {
                law_title: c.law_title.clone(),
                version_date: c.version_date.clone(),
                label: c.label.clone(),
                iri: c.iri.clone(),
            })
            .collect();
        Answer {
            question,
            generated_by: None,
            tier,
            kind,
            answer,
            citations,
            context,
            warnings,
            trace,
        }
    }

    /// Tier 2: the re-ranked list, refined once: the articles the top five cite join with
    /// a share of their citer's score, then everything is sorted again.
    fn refine(&self, candidates: &[Hit]) -> Vec<(String, f64, &'static str)> {
        let mut scores: HashMap<String, (f64, &'static str)> = candidates
            .iter()
            .map(|h| (h.iri.clone(), (h.score as f64, "re-ranked")))
            .collect();
        for h in candidates.iter().take(5) {
            let Some(n) = self.graph.get(&h.iri) else {
                continue;
            };
            for (m, rel) in self.graph.steps(n) {
                if rel != Relation::Cites {
                    continue;
                }
                let s = h.score as f64 * rel.weight();
                let e = scores
                    .entry(self.graph.iri(m).to_owned())
                    .or_insert((0.0, "cited by a re-ranked hit"));
                e.0 = e.0.max(s);
            }
        }
        sorted(scores)
    }

    /// Tier 3: evidence flows from the question's concepts, named articles and the top
    /// re-ranked hits along the graph (definitions, mentions, citations, siblings), two steps.
    fn graph_retrieval(
        &self,
        cx: &Complexity,
        mentions: &[ArticleMention],
        candidates: &[Hit],
    ) -> Vec<Hit> {
        let mut seeds: Vec<(petgraph::graph::NodeIndex, f64)> = Vec::new();
        for e in &cx.intrinsic.decomposition.entities {
            if e.kind == EntityKind::Concept
                && let Some(nodes) = self.graph.concepts.get(&e.name)
            {
                seeds.extend(nodes.iter().map(|&n| (n, 1.0)));
            }
        }
        for m in mentions {
            if let Some(n) = self
                .article_iri(m, None)
                .and_then(|iri| self.graph.get(&iri))
            {
                seeds.push((n, 1.0));
            }
        }
        for h in candidates.iter().take(10) {
            if let Some(n) = self.graph.get(&h.iri) {
                seeds.push((n, h.score as f64));
            }
        }
        let mut evidence: HashMap<petgraph::graph::NodeIndex, f64> = HashMap::new();
        let mut frontier = seeds.clone();
        for (n, s) in &seeds {
            *evidence.entry(*n).or_default() += s;
        }
        for _ in 0..2 {
            let mut next = Vec::new();
            for (n, s) in frontier {
                // A concept mentioned everywhere spreads thin.
                let fan = self.graph.steps(n).count().max(1) as f64;
                let damp = if self.graph.is_article(n) {
                    1.0
                } else {
                    1.0 / fan.sqrt()
                };
                for (m, rel) in self.graph.steps(n) {
                    let add = s * rel.weight() * damp * 0.5;
                    if add < 0.01 {
                        continue;
                    }
                    *evidence.entry(m).or_default() += add;
                    next.push((m, add));
                }
            }
            frontier = next;
        }
        let candidate_score: HashMap<&str, f32> = candidates
            .iter()
            .map(|h| (h.iri.as_str(), h.score))
            .collect();
        let mut hits: Vec<Hit> = evidence
            .into_iter()
            .filter(|(n, _)| self.graph.is_article(*n))
            .map(|(n, e)| {
                let iri = self.graph.iri(n).to_owned();
                let h = candidate_score.get(iri.as_str()).copied().unwrap_or(0.0);
                Hit {
                    score: (e + h as f64) as f32,
                    bm25: None,
                    dense: None,
                    iri,
                }
            })
            .collect();
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.iri.cmp(&b.iri)));
        hits.truncate(HYBRID_CANDIDATES);
        hits
    }

    /// Tier 4: the re-ranked candidates checked against the graph: dropped when outside
    /// every reasoning path of the question (when it links to the graph at all), or on
    /// the yielding side of an override clause whose law is also in play.
    fn verify(
        &self,
        cx: &Complexity,
        mentions: &[ArticleMention],
        candidates: &[Hit],
        graph_hits: &[Hit],
        dropped: &mut Vec<Dropped>,
    ) -> Vec<(String, f64, &'static str)> {
        let linked = cx
            .intrinsic
            .decomposition
            .entities
            .iter()
            .any(|e| e.kind == EntityKind::Concept)
            || !mentions.is_empty();
        let on_path: HashSet<&str> = graph_hits.iter().take(30).map(|h| h.iri.as_str()).collect();
        let laws_in_play: HashSet<&str> = candidates
            .iter()
            .take(20)
            .filter_map(|h| self.graph.get(&h.iri).and_then(|n| self.graph.law_of(n)))
            .collect();
        let version_of_law: HashMap<&str, &str> = self
            .graph
            .laws
            .iter()
            .map(|l| (l.version_iri.as_str(), l.short_name.as_str()))
            .collect();
        let mut kept = Vec::new();
        for (rank, h) in candidates.iter().take(20).enumerate() {
            if self.graph.get(&h.iri).is_none() {
                dropped.push(Dropped {
                    iri: h.iri.clone(),
                    reason: "not in the current version of its law".into(),
                });
                continue;
            }
            if linked && rank >= 3 && !on_path.contains(h.iri.as_str()) {
                dropped.push(Dropped {
                    iri: h.iri.clone(),
                    reason: "outside every graph path from the question's entities".into(),
                });
                continue;
            }
            if let Some(targets) = self.graph.defers_to.get(&h.iri)
                && let Some(law) = targets
                    .iter()
                    .filter_map(|v| version_of_law.get(v.as_str()))
                    .find(|l| laws_in_play.contains(**l))
            {
                dropped.push(Dropped {
                    iri: h.iri.clone(),
                    reason: format!(
                        "yields to 《{law}》 (另有规定的，依照其规定), which is also in play"
                    ),
                });
                continue;
            }
            kept.push((h.iri.clone(), h.score as f64, "re-ranked, verified"));
        }
        kept
    }
}

fn sorted(scores: HashMap<String, (f64, &'static str)>) -> Vec<(String, f64, &'static str)> {
    let mut v: Vec<(String, f64, &'static str)> = scores
        .into_iter()
        .map(|(k, (s, via))| (k, s, via))
        .collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v
}

/// 《law》（version）label — how every answer names an article.
fn cite_head(c: &ContextArticle) -> String {
    format!(
        "《{}》（{}）{}",
        c.law_title,
        if c.version_date.is_empty() {
            "未注明日期"
        } else {
            &c.version_date
        },
        c.label
    )
}

fn body(c: &ContextArticle) -> &str {
    c.text.strip_prefix(&c.label).unwrap_or(&c.text).trim()
}

/// An article named with its whole text (the numbered context of a prompt).
pub(crate) fn cite_line(c: &ContextArticle) -> String {
    format!("{}：{}", cite_head(c), body(c))
}

/// The offline answer: the applicable articles in order, each with its law, version and
/// the 款/项 that concern the question (`excerpt.rs`). Nothing is said that the context
/// does not hold.
fn structured_answer(question: &str, context: &[ContextArticle]) -> String {
    if context.is_empty() {
        return "没有找到可适用的条文。".into();
    }
    let mut out = String::from("可适用的条文（按相关性排序）：\n");
    for (i, c) in context.iter().enumerate() {
        let text = crate::excerpt::relevant_text(question, body(c));
        out.push_str(&format!("{}. {}：{}\n", i + 1, cite_head(c), text));
    }
    out
}

/// `第N条` anywhere in a question (compiled once: `ask` is on the hot path).
fn article_mention_re() -> &'static regex::Regex {
    static R: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    R.get_or_init(|| regex::Regex::new("第([零〇一二三四五六七八九十百千两0-9]+)条").unwrap())
}

/// A whole article label, `第N条` or `第N条之M`.
fn article_label_re() -> &'static regex::Regex {
    static R: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    R.get_or_init(|| {
        regex::Regex::new(
            "^第([零〇一二三四五六七八九十百千两]+)条(?:之([一二三四五六七八九十]+))?$",
        )
        .unwrap()
    })
}

fn coal_corpus_numeral(s: &str) -> Option<u32> {
    coal_corpus::parse_chinese_numeral(&s.replace('两', "二"))
}

fn to_chinese(n: u32) -> String {
    coal_corpus::to_chinese_numeral(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_offline_answer_lists_each_article_once_with_its_law_and_version() {
        let c = |label: &str, text: &str| ContextArticle {
            iri: format!("x/{label}"),
            law_title: "中华人民共和国示范法".into(),
            version_date: "2020-01-01".into(),
            label: label.into(),
            text: text.into(),
            score: 1.0,
            via: "test".into(),
        };
        let a = structured_answer(
            "保护",
            &[
                c("第一条", "第一条 为了保护。"),
                c("第二条", "适用于境内。"),
            ],
        );
        assert_eq!(
            a,
            "可适用的条文（按相关性排序）：\n1. 《中华人民共和国示范法》（2020-01-01）第一条：为了保护。\n2. 《中华人民共和国示范法》（2020-01-01）第二条：适用于境内。\n"
        );
        assert_eq!(structured_answer("保护", &[]), "没有找到可适用的条文。");
        // A long article is cut to the 款 that concern the question.
        let long = c(
            "第三条",
            "第三条 国家实行劳动合同制度。\n用人单位应当建立职工名册备查。\n劳动者有权拒绝违章指挥。",
        );
        let a = structured_answer("职工名册要备查吗", &[long]);
        assert!(
            a.ends_with("第三条：……\n用人单位应当建立职工名册备查。\n……\n"),
            "{a}"
        );
    }
}
