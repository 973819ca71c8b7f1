//! What the rules read in the statutes' text, as RDF: resolved cross-references
//! (`cites`, `Reference` nodes with provenance), defined concepts (`defines`,
//! `mentions`), override clauses (`OverrideClause`, `defersTo`) and newer article
//! versions over older ones (`overrides`).

mod references;

use std::collections::{BTreeMap, HashSet};

use coal_corpus::{Corpus, Law};
use coal_ontology::{iri, vocab};
use coal_refs::{ClauseKind, DefinitionKind};
use serde::Serialize;

use crate::rdf::{LawIris, QuadSink};
pub use references::{LawNames, Place, Resolved, Resolver, version_in_force};

/// What the knowledge stage found, for the build summary.
#[derive(Debug, Default, Clone, Serialize)]
pub struct KnowledgeReport {
    pub references: usize,
    pub references_resolved: usize,
    /// References written with an article number (本法第X条, 第X条, 《…》第X条).
    pub numbered_references: usize,
    pub numbered_resolved: usize,
    /// Numbered references into the citing law itself, and how many resolved.
    pub numbered_same_law: usize,
    pub numbered_same_law_resolved: usize,
    pub whole_law_references: usize,
    pub generic_references: usize,
    /// Named laws that are not in the corpus, with how often they are cited.
    pub laws_not_in_corpus: BTreeMap<String, usize>,
    pub concepts: usize,
    pub definitions: usize,
    pub mentions: usize,
    pub clauses_defers: usize,
    pub clauses_prevails: usize,
    pub defers_to_laws: usize,
    pub overrides: usize,
    /// Article changes between consecutive versions, by kind.
    pub changes: BTreeMap<String, usize>,
}

impl KnowledgeReport {
    pub fn add(&mut self, o: &KnowledgeReport) {
        self.references += o.references;
        self.references_resolved += o.references_resolved;
        self.numbered_references += o.numbered_references;
        self.numbered_resolved += o.numbered_resolved;
        self.numbered_same_law += o.numbered_same_law;
        self.numbered_same_law_resolved += o.numbered_same_law_resolved;
        self.whole_law_references += o.whole_law_references;
        self.generic_references += o.generic_references;
        for (k, v) in &o.laws_not_in_corpus {
            *self.laws_not_in_corpus.entry(k.clone()).or_default() += v;
        }
        self.concepts += o.concepts;
        self.definitions += o.definitions;
        self.mentions += o.mentions;
        self.clauses_defers += o.clauses_defers;
        self.clauses_prevails += o.clauses_prevails;
        self.defers_to_laws += o.defers_to_laws;
        self.overrides += o.overrides;
        for (k, v) in &o.changes {
            *self.changes.entry(k.clone()).or_default() += v;
        }
    }
}

/// One provision's text as the rules read it.
struct Provision<'a> {
    iri: String,
    text: &'a str,
    /// Characters at the start that are the article's label, not its words.
    offset: usize,
    paragraph: usize,
}

fn provisions<'a>(article: &'a coal_corpus::Article, airi: &str) -> Vec<Provision<'a>> {
    let mut out = Vec::new();
    for (pi, p) in article.paragraphs.iter().enumerate() {
        let piri = iri::paragraph(airi, p.number);
        let offset = if pi == 0 && p.text.starts_with(&article.label) {
            let rest = &p.text[article.label.len()..];
            article.label.chars().count()
                + rest
                    .chars()
                    .take_while(|c| c.is_whitespace() || *c == '\u{3000}')
                    .count()
        } else {
            0
        };
        out.push(Provision {
            iri: piri.clone(),
            text: &p.text,
            offset,
            paragraph: pi,
        });
        for it in &p.items {
            out.push(Provision {
                iri: iri::item(&piri, it.number),
                text: &it.text,
                offset: 0,
                paragraph: pi,
            });
        }
    }
    out
}

fn cut(text: &str, chars: usize) -> &str {
    let at = text
        .char_indices()
        .nth(chars)
        .map(|(i, _)| i)
        .unwrap_or(text.len());
    &text[at..]
}

/// The knowledge quads of one law version, in that version's named graph.
/// `concepts_seen` holds the law's concept IRIs already typed by an earlier version.
pub fn version_knowledge(
    resolver: &Resolver<'_>,
    corpus: &Corpus,
    law_index: usize,
    version_index: usize,
    iris: &LawIris,
    concepts_seen: &mut HashSet<String>,
) -> (QuadSink, KnowledgeReport, Vec<crate::fusion::ConceptRecord>) {
    let law: &Law = &corpus.laws[law_index];
    let v = &law.versions[version_index];
    let viri = &iris.versions[version_index];
    let mut g = QuadSink::new(viri);
    let mut rep = KnowledgeReport::default();
    let mut defined: Vec<(String, String)> = Vec::new(); // (term, concept IRI)
    let mut records = Vec::new();
    let mut defining_articles: HashSet<String> = HashSet::new();
    for (ai, a) in v.articles.iter().enumerate() {
        let airi = iri::article(viri, a.number.main, a.number.suffix);
        let mut cited = HashSet::new();
        for prov in provisions(a, &airi) {
            let place = Place {
                law: law_index,
                version: version_index,
                article: ai,
                paragraph: prov.paragraph,
            };
            let words = cut(prov.text, prov.offset);
            for (n, r) in resolver
                .resolve(place, words, prov.offset)
                .into_iter()
                .enumerate()
            {
                reference_quads(&mut g, &mut rep, &prov.iri, n, &r, law_index, resolver);
                for t in &r.targets {
                    if cited.insert(t.clone()) {
                        g.edge(&airi, vocab::CITES, t);
                    }
                }
            }
            for d in coal_refs::definitions(words) {
                let record =
                    definition_quads(&mut g, &mut rep, concepts_seen, iris, law, &airi, &d);
                defining_articles.insert(airi.clone());
                defined.push((d.term, record.iri.clone()));
                records.push(record);
            }
            for (n, cl) in coal_refs::clauses(words).into_iter().enumerate() {
                let deferred = match cl.kind {
                    ClauseKind::Defers => deferred_law(resolver, corpus, &cl.subject, law_index, v),
                    ClauseKind::Prevails => None,
                };
                clause_quads(&mut g, &mut rep, &prov, n, &cl, &airi, deferred);
            }
        }
    }
    // Mentions of this version's concepts in its other articles.
    defined.sort();
    defined.dedup();
    for a in &v.articles {
        let airi = iri::article(viri, a.number.main, a.number.suffix);
        if defining_articles.contains(&airi) {
            continue;
        }
        let body = a.body();
        for (term, c) in &defined {
            if body.contains(term.as_str()) {
                g.edge(&airi, vocab::MENTIONS, c);
                rep.mentions += 1;
            }
        }
    }
    // Article-level diffs from every older version; overrides from the previous one.
    for from in 0..version_index {
        diff_quads(&mut g, &mut rep, law, iris, from, version_index);
    }
    (g, rep, records)
}

/// A definition's concept (typed once per law), its text and kind, and the article's
/// `defines` edge; the concept's record for fusion.
fn definition_quads(
    g: &mut QuadSink,
    rep: &mut KnowledgeReport,
    concepts_seen: &mut HashSet<String>,
    iris: &LawIris,
    law: &Law,
    airi: &str,
    d: &coal_refs::Definition,
) -> crate::fusion::ConceptRecord {
    let c = iri::concept(&iris.work, &d.term);
    if concepts_seen.insert(c.clone()) {
        g.node(&c, vocab::CONCEPT);
        g.zh(&c, vocab::LABEL, &d.term);
        rep.concepts += 1;
    }
    g.zh(&c, vocab::DEFINITION_TEXT, &d.sentence);
    let mut alt_labels = Vec::new();
    let kind = match &d.kind {
        DefinitionKind::Meaning => "meaning",
        DefinitionKind::Abbreviation { long_form } => {
            if !long_form.is_empty() {
                g.zh(&c, vocab::SKOS_ALT_LABEL, long_form);
                alt_labels.push(long_form.clone());
            }
            "abbreviation"
        }
        DefinitionKind::Enumeration => "enumeration",
    };
    g.string(&c, vocab::DEFINITION_KIND, kind);
    g.edge(airi, vocab::DEFINES, &c);
    rep.definitions += 1;
    crate::fusion::ConceptRecord {
        iri: c,
        term: d.term.clone(),
        alt_labels,
        definition: d.sentence.clone(),
        kind: kind.to_owned(),
        law: law.short_name.clone(),
    }
}

/// An override clause of a provision (the `n`th), and the article's `defersTo` edge when
/// it defers to a law the corpus has.
fn clause_quads(
    g: &mut QuadSink,
    rep: &mut KnowledgeReport,
    prov: &Provision<'_>,
    n: usize,
    cl: &coal_refs::Clause,
    airi: &str,
    deferred: Option<String>,
) {
    let ciri = iri::clause(&prov.iri, n);
    g.node(&ciri, vocab::OVERRIDE_CLAUSE);
    g.edge(&ciri, vocab::FROM_PROVISION, &prov.iri);
    g.string(
        &ciri,
        vocab::CLAUSE_KIND,
        match cl.kind {
            ClauseKind::Defers => "defers",
            ClauseKind::Prevails => "prevails",
        },
    );
    g.zh(&ciri, vocab::RAW_TEXT, &cl.text);
    g.int(
        &ciri,
        vocab::SPAN_START,
        (cl.span.start + prov.offset) as i64,
    );
    g.int(&ciri, vocab::SPAN_END, (cl.span.end + prov.offset) as i64);
    if !cl.subject.is_empty() {
        g.zh(&ciri, vocab::SUBJECT_TEXT, &cl.subject);
    }
    match cl.kind {
        ClauseKind::Defers => {
            rep.clauses_defers += 1;
            if let Some(target) = deferred {
                g.edge(airi, vocab::DEFERS_TO, &target);
                rep.defers_to_laws += 1;
            }
        }
        ClauseKind::Prevails => rep.clauses_prevails += 1,
    }
}

/// The alignment of version `from` to version `to` as a `VersionDiff` with one
/// `ArticleChange` per pair or lone article; for consecutive versions, `overrides` from
/// each changed article to its older text, and counts in the report.
fn diff_quads(
    g: &mut QuadSink,
    rep: &mut KnowledgeReport,
    law: &Law,
    iris: &LawIris,
    from: usize,
    to: usize,
) {
    let (old, new) = (&law.versions[from], &law.versions[to]);
    let (fv, tv) = (&iris.versions[from], &iris.versions[to]);
    let diff = iri::version_diff(tv, fv);
    g.node(&diff, vocab::VERSION_DIFF);
    g.edge(&diff, vocab::FROM_VERSION, fv);
    g.edge(&diff, vocab::TO_VERSION, tv);
    let consecutive = to == from + 1;
    for (n, c) in crate::align::align(&old.articles, &new.articles)
        .iter()
        .enumerate()
    {
        let ciri = iri::article_change(&diff, n);
        g.node(&ciri, vocab::ARTICLE_CHANGE);
        g.edge(&ciri, vocab::IN_DIFF, &diff);
        g.string(&ciri, vocab::CHANGE_KIND, c.kind.name());
        g.double(&ciri, vocab::SIMILARITY, c.similarity);
        let old_iri = c.old.map(|i| {
            let a = &old.articles[i];
            iri::article(fv, a.number.main, a.number.suffix)
        });
        let new_iri = c.new.map(|j| {
            let a = &new.articles[j];
            iri::article(tv, a.number.main, a.number.suffix)
        });
        if let Some(o) = &old_iri {
            g.edge(&ciri, vocab::FROM_ARTICLE, o);
        }
        if let Some(t) = &new_iri {
            g.edge(&ciri, vocab::TO_ARTICLE, t);
        }
        if consecutive {
            *rep.changes.entry(c.kind.name().to_owned()).or_default() += 1;
            if let (Some(o), Some(t)) = (&old_iri, &new_iri)
                && c.similarity < 1.0
            {
                g.edge(t, vocab::OVERRIDES, o);
                rep.overrides += 1;
            }
        }
    }
}

/// The law version an override clause's subject names (《X》, or a law's name), if any.
fn deferred_law(
    resolver: &Resolver<'_>,
    corpus: &Corpus,
    subject: &str,
    law_index: usize,
    here: &coal_corpus::LawVersion,
) -> Option<String> {
    let named = subject
        .split_once('《')
        .and_then(|(_, rest)| rest.split_once('》'))
        .map(|(name, _)| name.to_owned())
        .unwrap_or_else(|| subject.to_owned());
    let l = resolver.names().lookup(&named)?;
    if l == law_index {
        return None;
    }
    let v = version_in_force(&corpus.laws[l], here.version_date);
    Some(resolver.version_iri(l, v).to_owned())
}

fn reference_quads(
    g: &mut QuadSink,
    rep: &mut KnowledgeReport,
    provision: &str,
    n: usize,
    r: &Resolved,
    law_index: usize,
    resolver: &Resolver<'_>,
) {
    let riri = iri::reference(provision, n);
    let reference = &r.reference;
    g.node(&riri, vocab::REFERENCE);
    g.edge(&riri, vocab::FROM_PROVISION, provision);
    g.zh(&riri, vocab::RAW_TEXT, &reference.text);
    g.int(&riri, vocab::SPAN_START, reference.span.start as i64);
    g.int(&riri, vocab::SPAN_END, reference.span.end as i64);
    let resolved = !r.targets.is_empty();
    g.boolean(&riri, vocab::RESOLVED, resolved);
    for t in &r.targets {
        g.edge(&riri, vocab::REFERS_TO, t);
    }
    if let Some(why) = &r.unresolved {
        g.string(&riri, vocab::UNRESOLVED_REASON, why);
    }
    rep.references += 1;
    rep.references_resolved += usize::from(resolved);
    match &reference.law {
        coal_refs::LawSpec::Generic => rep.generic_references += 1,
        coal_refs::LawSpec::Named(name) if reference.targets.is_empty() => {
            rep.whole_law_references += 1;
            if !resolved {
                *rep.laws_not_in_corpus.entry(name.clone()).or_default() += 1;
            }
        }
        coal_refs::LawSpec::Named(name) if !resolved && resolver.names().lookup(name).is_none() => {
            *rep.laws_not_in_corpus.entry(name.clone()).or_default() += 1;
        }
        _ => {}
    }
    if r.numbered {
        rep.numbered_references += 1;
        rep.numbered_resolved += usize::from(resolved && r.unresolved.is_none());
        let same_law = match &reference.law {
            coal_refs::LawSpec::This | coal_refs::LawSpec::Unstated => true,
            coal_refs::LawSpec::Named(name) => resolver.names().lookup(name) == Some(law_index),
            coal_refs::LawSpec::Generic => false,
        };
        if same_law {
            rep.numbered_same_law += 1;
            rep.numbered_same_law_resolved += usize::from(resolved && r.unresolved.is_none());
        }
    }
}
