//! The build's stages past the graph: the BM25 index, LLM triple extraction, domain
//! clustering (with LLM summaries) and entity fusion. Each turns the corpus and what the
//! store's caches hold into a report and quads; `lib.rs` runs them in order.

use std::collections::{BTreeMap, HashMap};

use coal_corpus::Corpus;
use kg_store::BuildWriter;

use crate::embed::Encoder;
use crate::{
    BuildError, BuildObserver, Extraction, domains, embed, extract, fusion, placed_articles, rdf,
    summaries, text_hash,
};

/// The chat model with the store's reply cache, opened once per build.
pub(crate) struct Llm<'a> {
    pub chat: &'a dyn coal_models::ChatModel,
    pub concurrency: usize,
    pub select: crate::ExtractSelection,
    pub verify: Option<f64>,
    pub skip_relations: Vec<String>,
    pub replies: extract::ReplyCache,
}

impl<'a> Llm<'a> {
    pub fn open(writer: &BuildWriter, llm: &Extraction<'a>) -> Result<Self, BuildError> {
        let path = writer.cache_dir().join("llm-replies.jsonl");
        let replies = extract::ReplyCache::open(&path)
            .map_err(|e| BuildError::Store(kg_store::StoreError::Io { path, source: e }))?;
        Ok(Llm {
            chat: llm.chat,
            concurrency: llm.concurrency,
            select: llm.select.clone(),
            verify: llm.verify,
            skip_relations: llm.skip_relations.clone(),
            replies,
        })
    }
}

/// Fuses concepts of different laws (embeddings of label and definition when the build
/// has a model, the LLM for unsure pairs when one is configured).
pub(crate) fn fusion_stage(
    writer: &BuildWriter,
    concepts: &[fusion::ConceptRecord],
    encoder: Option<&mut Encoder<'_>>,
    llm: Option<&Llm<'_>>,
    observer: &dyn BuildObserver,
) -> Result<(fusion::FusionReport, rdf::QuadSink), BuildError> {
    observer.stage("fusion", None);
    let vectors = match encoder {
        Some(e) => {
            let texts: Vec<String> = concepts.iter().map(fusion::embedded_text).collect();
            Some(embed::cached_vectors(writer, e, &texts, observer)?)
        }
        None => None,
    };
    let (decisions, entities, report) = match llm {
        Some(llm) => {
            let arbiter = fusion::LlmArbiter {
                chat: llm.chat,
                cache: &llm.replies,
            };
            fusion::fuse(concepts, vectors.as_deref(), &arbiter)
        }
        None => fusion::fuse(concepts, vectors.as_deref(), &fusion::NoArbiter),
    };
    Ok((report, fusion::quads(concepts, &decisions, &entities)))
}

/// The latest articles that have embeddings: the points the domains cluster, with what
/// the clusters are measured against (corpus folder, law and chapter).
struct ArticlePoints {
    iris: Vec<String>,
    /// Each article's passages averaged and normalised.
    vectors: Vec<Vec<f32>>,
    hashes: Vec<String>,
    texts: Vec<String>,
    folders: Vec<String>,
    /// (law short name, chapter label when the article is in a chapter)
    chapters: Vec<(String, Option<String>)>,
}

impl ArticlePoints {
    fn collect(
        corpus: &Corpus,
        encoder: &Encoder<'_>,
        passage_keys: &[Vec<kg_store::TextKey>],
    ) -> ArticlePoints {
        let cache = &encoder.cache;
        let mut p = ArticlePoints {
            iris: Vec::new(),
            vectors: Vec::new(),
            hashes: Vec::new(),
            texts: Vec::new(),
            folders: Vec::new(),
            chapters: Vec::new(),
        };
        for (a, keys) in placed_articles(corpus).zip(passage_keys) {
            if !a.latest {
                continue;
            }
            let found: Vec<&[f32]> = keys.iter().filter_map(|k| cache.get(k)).collect();
            if found.is_empty() {
                continue;
            }
            let mut v = vec![0f32; encoder.model.dim()];
            for f in &found {
                v.iter_mut().zip(*f).for_each(|(a, b)| *a += b);
            }
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
            v.iter_mut().for_each(|x| *x /= norm);
            p.vectors.push(v);
            p.iris.push(a.iri.clone());
            p.hashes.push(text_hash(&a.article.text()));
            p.texts.push(a.article.body());
            p.folders.push(
                a.version.files[0]
                    .path
                    .split('/')
                    .next()
                    .unwrap_or_default()
                    .to_owned(),
            );
            let chapter = a
                .version
                .division_path(a.article.division)
                .iter()
                .find(|d| d.kind == coal_corpus::DivisionKind::Chapter)
                .map(|d| d.label.clone());
            p.chapters.push((a.version.short_name.clone(), chapter));
        }
        p
    }
}

/// Topic and domain labels kept from the previous build when its clusters are reused.
type KeptLabels = Option<(Vec<String>, Vec<String>)>;

/// The previous build's clusters when few articles changed since, else a new clustering;
/// with the share of articles that changed.
fn clustering(
    writer: &BuildWriter,
    points: &ArticlePoints,
    recluster_share: Option<f64>,
) -> (domains::Clustering, f64, KeptLabels) {
    let items: Vec<(String, String, &[f32])> = points
        .iris
        .iter()
        .zip(&points.hashes)
        .zip(&points.vectors)
        .map(|((i, h), v)| (i.clone(), h.clone(), v.as_slice()))
        .collect();
    let previous = writer
        .previous_build_dir()
        .filter(|_| recluster_share.is_some())
        .and_then(|d| domains::Stored::read(&d));
    let reused = previous.as_ref().and_then(|p| {
        p.reuse(&items, recluster_share.unwrap_or(0.0))
            .map(|(topic, share)| (p, topic, share))
    });
    match reused {
        Some((p, topic, share)) => (
            domains::Clustering {
                topic,
                domain: p.domain_of_topic.clone(),
                topic_bic: p.report.topic_bic.clone(),
                domain_bic: p.report.domain_bic.clone(),
                sampled: p.report.sampled,
            },
            share,
            Some((p.topic_labels.clone(), p.domain_labels.clone())),
        ),
        None => (domains::cluster(&points.vectors), 1.0, None),
    }
}

/// Dense ids for names, in order of first appearance.
fn dense_ids(names: &[String]) -> Vec<usize> {
    let mut map = HashMap::new();
    names
        .iter()
        .map(|n| {
            let k = map.len();
            *map.entry(n.clone()).or_insert(k)
        })
        .collect()
}

/// How well the topics match the corpus folders and, within each law of 30+ articles in
/// 2+ chapters (weighted by its size), the chapters; a shuffled clustering beside each.
fn measure(
    points: &ArticlePoints,
    c: &domains::Clustering,
    topics: usize,
    n_domains: usize,
) -> domains::DomainReport {
    let folder_ids = dense_ids(&points.folders);
    let random = domains::shuffled(&c.topic);
    let article_domain: Vec<usize> = c
        .topic
        .iter()
        .map(|&t| c.domain.get(t).copied().unwrap_or(0))
        .collect();
    let chapters = &points.chapters;
    let mut by_law: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, (law, ch)) in chapters.iter().enumerate() {
        if ch.is_some() {
            by_law.entry(law.as_str()).or_default().push(i);
        }
    }
    let (mut chap, mut chap_rand, mut weight) = (0.0, 0.0, 0.0);
    let (mut chap_ari, mut chap_ari_rand) = (0.0, 0.0);
    for members in by_law.values().filter(|m| m.len() >= 30) {
        let labels: Vec<String> = members
            .iter()
            .map(|&i| chapters[i].1.clone().unwrap_or_default())
            .collect();
        let truth = dense_ids(&labels);
        if truth.iter().max().copied().unwrap_or(0) == 0 {
            continue;
        }
        let pick = |l: &[usize]| members.iter().map(|&i| l[i]).collect::<Vec<_>>();
        let w = members.len() as f64;
        chap += w * domains::nmi(&pick(&c.topic), &truth);
        chap_rand += w * domains::nmi(&pick(&random), &truth);
        chap_ari += w * domains::ari(&pick(&c.topic), &truth);
        chap_ari_rand += w * domains::ari(&pick(&random), &truth);
        weight += w;
    }
    domains::DomainReport {
        articles: points.iris.len(),
        topics,
        domains: n_domains,
        topic_bic: c.topic_bic.clone(),
        domain_bic: c.domain_bic.clone(),
        nmi_folders: domains::nmi(&c.topic, &folder_ids),
        ari_folders: domains::ari(&c.topic, &folder_ids),
        nmi_folders_random: domains::nmi(&random, &folder_ids),
        ari_folders_random: domains::ari(&random, &folder_ids),
        nmi_chapters: chap / weight.max(1.0),
        nmi_chapters_random: chap_rand / weight.max(1.0),
        ari_chapters: chap_ari / weight.max(1.0),
        ari_chapters_random: chap_ari_rand / weight.max(1.0),
        nmi_domains_folders: domains::nmi(&article_domain, &folder_ids),
        nmi_domains_folders_random: domains::nmi(&domains::shuffled(&article_domain), &folder_ids),
        ..Default::default()
    }
}

/// One-line LLM summaries: of each topic (from its label and the articles nearest its
/// centre) and of each domain (from its label and its topics' summaries). `None` where
/// the model gave none.
#[derive(Default)]
struct Summaries {
    topics: Vec<Option<String>>,
    domains: Vec<Option<String>>,
    failures: usize,
}

struct Labels<'a> {
    topics: &'a [String],
    domains: &'a [String],
}

fn summarise(
    llm: &Llm<'_>,
    points: &ArticlePoints,
    c: &domains::Clustering,
    centroids: &[Vec<f32>],
    labels: &Labels<'_>,
    observer: &dyn BuildObserver,
) -> Summaries {
    let (topics, n_domains) = (labels.topics.len(), labels.domains.len());
    observer.stage("domain summaries", Some((topics + n_domains) as u64));
    let cache = &llm.replies;
    let prompts: Vec<String> = (0..topics)
        .map(|t| {
            let mut members: Vec<usize> = (0..points.iris.len())
                .filter(|&i| c.topic[i] == t)
                .collect();
            let closeness = |i: usize| -> f32 {
                points.vectors[i]
                    .iter()
                    .zip(&centroids[t])
                    .map(|(a, b)| a * b)
                    .sum()
            };
            members.sort_by(|&x, &y| closeness(y).total_cmp(&closeness(x)));
            let samples: Vec<&str> = members
                .iter()
                .take(3)
                .map(|&i| points.texts[i].as_str())
                .collect();
            summaries::topic_prompt(&labels.topics[t], &samples)
        })
        .collect();
    let (topic_summaries, failed) =
        summaries::ask_all(llm.chat, cache, &prompts, &|n| observer.progress(n as u64));
    let prompts: Vec<String> = (0..n_domains)
        .map(|d| {
            let parts: Vec<&str> = (0..topics)
                .filter(|&t| c.domain[t] == d)
                .map(|t| {
                    topic_summaries[t]
                        .as_deref()
                        .unwrap_or(labels.topics[t].as_str())
                })
                .collect();
            summaries::domain_prompt(&labels.domains[d], &parts)
        })
        .collect();
    let (domain_summaries, failed_domains) = summaries::ask_all(llm.chat, cache, &prompts, &|n| {
        observer.progress((topics + n) as u64)
    });
    Summaries {
        topics: topic_summaries,
        domains: domain_summaries,
        failures: failed + failed_domains,
    }
}

/// The domains graph: domains and topics with labels and summaries, topic → domain, and
/// article → topic.
fn domain_quads(
    iris: &[String],
    c: &domains::Clustering,
    labels: &Labels<'_>,
    summaries: &Summaries,
) -> rdf::QuadSink {
    use coal_ontology::{iri, vocab};
    let mut g = rdf::QuadSink::new(iri::DOMAINS_GRAPH);
    for (d, label) in labels.domains.iter().enumerate() {
        let diri = iri::domain("domain", d);
        g.node(&diri, vocab::DOMAIN);
        g.zh(&diri, vocab::LABEL, label);
        if let Some(Some(summary)) = summaries.domains.get(d) {
            g.zh(&diri, vocab::SUMMARY, summary);
        }
    }
    for (t, label) in labels.topics.iter().enumerate() {
        let tiri = iri::domain("topic", t);
        g.node(&tiri, vocab::DOMAIN);
        g.zh(&tiri, vocab::LABEL, label);
        if let Some(Some(summary)) = summaries.topics.get(t) {
            g.zh(&tiri, vocab::SUMMARY, summary);
        }
        g.edge(
            &tiri,
            vocab::SKOS_BROADER,
            &iri::domain("domain", c.domain[t]),
        );
    }
    for (a, &t) in iris.iter().zip(&c.topic) {
        g.edge(a, vocab::IN_DOMAIN, &iri::domain("topic", t));
    }
    g
}

/// Clusters the latest articles by their embeddings into topics and domains, labels them,
/// measures them against the corpus folders and chapters, and writes them as RDF.
pub(crate) fn domain_stage(
    writer: &BuildWriter,
    corpus: &Corpus,
    encoder: &Encoder<'_>,
    passage_keys: &[Vec<kg_store::TextKey>],
    recluster_share: Option<f64>,
    llm: Option<&Llm<'_>>,
    observer: &dyn BuildObserver,
) -> Result<
    (
        domains::DomainReport,
        rdf::QuadSink,
        kg_store::statute_graph::Centroids,
    ),
    BuildError,
> {
    observer.stage("domains", None);
    let points = ArticlePoints::collect(corpus, encoder, passage_keys);
    let (c, changed_share, kept_labels) = clustering(writer, &points, recluster_share);
    let was_reused = kept_labels.is_some();
    let topics = c
        .domain
        .len()
        .max(c.topic.iter().max().map_or(0, |m| m + 1));
    let n_domains = c.domain.iter().max().map_or(0, |m| m + 1);
    let mut report = measure(&points, &c, topics, n_domains);
    report.reused = was_reused;
    report.sampled = c.sampled;
    report.changed_share = changed_share;
    let (topic_labels, domain_labels) = kept_labels.unwrap_or_else(|| {
        // The texts are cut once: a domain's words are its topics' words.
        let counts = domains::word_counts(&points.texts, &c.topic, topics);
        let topic_labels = domains::labels_of_counts(&counts, 3);
        let by_domain = domains::group_counts(counts, &c.domain, n_domains);
        (topic_labels, domains::labels_of_counts(&by_domain, 3))
    });
    let labels = Labels {
        topics: &topic_labels,
        domains: &domain_labels,
    };
    let centroids = domains::centroids(&points.vectors, &c.topic, topics);
    let summaries = match llm {
        Some(llm) => {
            let s = summarise(llm, &points, &c, &centroids, &labels, observer);
            report.summary_failures = s.failures;
            report.summaries = s.topics.iter().chain(&s.domains).flatten().count();
            s
        }
        None => Summaries::default(),
    };
    let stored = domains::Stored {
        articles: points
            .iris
            .iter()
            .zip(&points.hashes)
            .zip(&c.topic)
            .map(|((i, h), &t)| (i.clone(), h.clone(), t))
            .collect(),
        centroids: centroids.clone(),
        domain_of_topic: c.domain.clone(),
        topic_labels: topic_labels.clone(),
        domain_labels: domain_labels.clone(),
        report: report.clone(),
    };
    let dir = writer.build_dir();
    stored.write(&dir).map_err(|e| {
        BuildError::Store(kg_store::StoreError::Io {
            path: dir.join(domains::STORED_FILE),
            source: e,
        })
    })?;
    let g = domain_quads(&points.iris, &c, &labels, &summaries);
    // The query side links questions to topics by these vectors.
    let by_topic = centroids
        .into_iter()
        .enumerate()
        .map(|(t, v)| (coal_ontology::iri::domain("topic", t), v))
        .collect();
    Ok((report, g, by_topic))
}

/// Asks the LLM for the triples of every article (cached replies are reused) and turns
/// them into quads, each triple in its article's version graph with its provenance.
pub(crate) fn extract_stage(
    corpus: &Corpus,
    llm: &Llm<'_>,
    observer: &dyn BuildObserver,
) -> Result<(extract::ExtractReport, HashMap<String, rdf::QuadSink>), BuildError> {
    let cache = &llm.replies;
    let mut jobs = Vec::new();
    let mut version_of = HashMap::new();
    for a in placed_articles(corpus) {
        if !llm.select.takes_law(&a.version.title)
            || llm.select.limit.is_some_and(|n| jobs.len() >= n)
        {
            continue;
        }
        version_of.insert(a.iri.clone(), a.version_iri.to_string());
        jobs.push(extract::Job {
            user: extract::user_prompt(&a.version.title, &a.article.label, &a.article.body()),
            article: a.article.body(),
            statute: a.version.title.clone(),
            iri: a.iri,
        });
    }
    observer.stage("extract", Some(jobs.len() as u64));
    let (mut found, mut report) =
        extract::extract(llm.chat, &jobs, cache, llm.concurrency, &|done| {
            observer.progress(done)
        });
    for (_, triples) in &mut found {
        let before = triples.len();
        triples.retain(|t| !llm.skip_relations.contains(&t.relation));
        report.left_out_triples += before - triples.len();
    }
    report.triples -= report.left_out_triples;
    if let Some(threshold) = llm.verify {
        let kept = found.iter().map(|(_, t)| t.len() as u64).sum();
        observer.stage("verify triples", Some(kept));
        let verified = crate::verify::verify(llm.chat, cache, &jobs, &mut found, threshold, &|n| {
            observer.progress(n)
        });
        report.triples -= verified.refused;
        report.verification = Some(verified);
    }
    let mut sinks: HashMap<String, rdf::QuadSink> = HashMap::new();
    for (iri, triples) in found {
        let g = sinks
            .entry(version_of[&iri].clone())
            .or_insert_with_key(|v| rdf::QuadSink::new(v));
        for (n, t) in triples.iter().enumerate() {
            let node = format!("{iri}/triple_{n}");
            g.node(&node, coal_ontology::vocab::EXTRACTED_TRIPLE);
            g.edge(&node, coal_ontology::vocab::FROM_PROVISION, &iri);
            g.zh(&node, coal_ontology::vocab::TRIPLE_SUBJECT, &t.subject);
            g.zh(&node, coal_ontology::vocab::TRIPLE_RELATION, &t.relation);
            g.zh(&node, coal_ontology::vocab::TRIPLE_OBJECT, &t.object);
            g.string(&node, coal_ontology::vocab::EXTRACTED_BY, llm.chat.id());
        }
    }
    Ok((report, sinks))
}

/// Indexes every article of every version for BM25; older versions are marked so that
/// searches leave them out unless asked. An incremental build starts from the base
/// build's index and re-indexes only the groups of laws holding a change. Returns how many
/// laws were (re-)indexed when the index was extended (`None`: written whole).
pub(crate) fn write_text_index(
    writer: &BuildWriter,
    corpus: &Corpus,
    incremental: bool,
    observer: &dyn BuildObserver,
) -> Result<Option<usize>, BuildError> {
    observer.stage("bm25", Some(corpus.article_count() as u64));
    let base = match incremental {
        true => writer.text_index_extending_base()?,
        false => None,
    };
    let extended = base.is_some();
    let mut index = match base {
        Some(index) => index,
        None => writer.text_index_writer(corpus.article_count())?,
    };
    let mut groups: Vec<Vec<usize>> = vec![Vec::new(); index.groups()];
    for (i, law) in corpus.laws.iter().enumerate() {
        groups[index.group_of(&coal_ontology::iri::work(&law.short_name))].push(i);
    }
    let (mut done, mut reindexed) = (0u64, 0);
    for (group, members) in groups.iter().enumerate() {
        let laws: Vec<kg_store::LawArticles> = members
            .iter()
            .map(|&i| law_articles(&corpus.laws[i]))
            .collect();
        let articles: usize = laws.iter().map(|l| l.articles.len()).sum();
        if index.put_group(group, laws)? {
            reindexed += members.len();
        }
        done += articles as u64;
        observer.progress(done);
    }
    index.commit()?;
    Ok(extended.then_some(reindexed))
}

/// A law's articles, every version's, as the BM25 index holds them.
fn law_articles(law: &coal_corpus::Law) -> kg_store::LawArticles {
    let iris = rdf::law_iris(law);
    let articles = crate::placed_articles_of(law)
        .map(|a| kg_store::IndexedArticle {
            iri: a.iri,
            version_iri: a.version_iri.to_string(),
            law_title: a.version.title.clone(),
            version_date: a
                .version
                .version_date
                .map(|d| d.to_string())
                .unwrap_or_default(),
            label: a.article.label.clone(),
            hierarchy: a.version.hierarchy_label(a.article.division),
            text: a.article.text(),
            latest: a.latest,
        })
        .collect();
    kg_store::LawArticles {
        work: iris.work,
        versions: iris.versions,
        articles,
    }
}
