//! The statute structure as RDF quads, one named graph per law version and one per work.

use std::collections::BTreeMap;

use coal_corpus::{Article, DivisionKind, Law, LawVersion};
use coal_ontology::{iri, vocab};
use kg_store::oxigraph::model::{GraphName, Literal, NamedNode, Quad, Term};
use sha2::{Digest, Sha256};

/// Counts of what was written, by ontology class and property local name.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct GraphCounts {
    pub nodes_by_type: BTreeMap<String, usize>,
    pub edges_by_type: BTreeMap<String, usize>,
    pub triples: usize,
}

impl GraphCounts {
    pub fn add(&mut self, other: &GraphCounts) {
        for (k, v) in &other.nodes_by_type {
            *self.nodes_by_type.entry(k.clone()).or_default() += v;
        }
        for (k, v) in &other.edges_by_type {
            *self.edges_by_type.entry(k.clone()).or_default() += v;
        }
        self.triples += other.triples;
    }

    pub fn nodes(&self) -> usize {
        self.nodes_by_type.values().sum()
    }

    pub fn edges(&self) -> usize {
        self.edges_by_type.values().sum()
    }
}

fn local(iri: &str) -> &str {
    iri.rsplit('#').next().unwrap_or(iri)
}

/// Collects quads for one named graph, counts them and digests them.
pub struct QuadSink {
    graph: GraphName,
    pub quads: Vec<Quad>,
    pub counts: GraphCounts,
    /// Order-independent digest of the triples (see [`triple_digest`]): equal digests mean
    /// the same graph content, which lets an incremental build keep a graph.
    pub digest: u128,
}

impl QuadSink {
    pub fn new(graph_iri: &str) -> QuadSink {
        QuadSink {
            graph: GraphName::NamedNode(node(graph_iri)),
            quads: Vec::new(),
            counts: GraphCounts::default(),
            digest: 0,
        }
    }

    /// The graph's IRI.
    pub fn graph_iri(&self) -> &str {
        match &self.graph {
            GraphName::NamedNode(n) => n.as_str(),
            _ => unreachable!("sinks are made for named graphs"),
        }
    }

    /// Adds another sink's quads for the same graph (its digest and counts too).
    pub fn append(&mut self, other: QuadSink) {
        debug_assert_eq!(self.graph, other.graph);
        self.quads.extend(other.quads);
        self.counts.add(&other.counts);
        self.digest = self.digest.wrapping_add(other.digest);
    }

    fn push(&mut self, s: &str, p: &str, o: Term) {
        self.digest = self.digest.wrapping_add(triple_digest(s, p, &o));
        self.quads
            .push(Quad::new(node(s), node(p), o, self.graph.clone()));
        self.counts.triples += 1;
    }

    /// A typed node.
    pub fn node(&mut self, s: &str, class: &str) {
        self.push(s, vocab::RDF_TYPE, node(class).into());
        *self
            .counts
            .nodes_by_type
            .entry(local(class).to_owned())
            .or_default() += 1;
    }

    /// An edge between two nodes.
    pub fn edge(&mut self, s: &str, p: &str, o: &str) {
        self.push(s, p, node(o).into());
        *self
            .counts
            .edges_by_type
            .entry(local(p).to_owned())
            .or_default() += 1;
    }

    pub fn zh(&mut self, s: &str, p: &str, text: &str) {
        let lit = Literal::new_language_tagged_literal_unchecked(text, "zh");
        self.push(s, p, lit.into());
    }

    pub fn string(&mut self, s: &str, p: &str, text: &str) {
        self.push(s, p, Literal::new_simple_literal(text).into());
    }

    pub fn int(&mut self, s: &str, p: &str, n: i64) {
        self.push(s, p, Literal::from(n).into());
    }

    pub fn double(&mut self, s: &str, p: &str, value: f64) {
        self.push(s, p, Literal::from(value).into());
    }

    pub fn boolean(&mut self, s: &str, p: &str, value: bool) {
        self.push(s, p, Literal::from(value).into());
    }

    pub fn date(&mut self, s: &str, p: &str, date: &str) {
        self.push(
            s,
            p,
            Literal::new_typed_literal(date, node(vocab::XSD_DATE)).into(),
        );
    }
}

/// A triple's share of a graph digest: the first 128 bits of sha256 over its N-Triples
/// terms. Digests of a graph's triples are added (wrapping), so a graph's digest does not
/// depend on the order its triples were made in; a repeated triple counts twice, which
/// only makes a rebuild reload a graph it could have kept.
pub fn triple_digest(s: &str, p: &str, o: &Term) -> u128 {
    use std::io::Write;
    let mut h = Sha256::new();
    h.update(s.as_bytes());
    h.update([0]);
    h.update(p.as_bytes());
    h.update([0]);
    write!(h, "{o}").expect("hashing does not fail");
    let bytes: [u8; 32] = h.finalize().into();
    u128::from_le_bytes(bytes[..16].try_into().expect("16 bytes"))
}

fn node(iri: &str) -> NamedNode {
    // Every IRI here is minted by coal_ontology::iri, which escapes what IRIs forbid.
    NamedNode::new_unchecked(iri)
}

pub fn text_hash(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

fn division_class(kind: DivisionKind) -> &'static str {
    match kind {
        DivisionKind::Preamble => vocab::PREAMBLE,
        DivisionKind::Part => vocab::PART,
        DivisionKind::SubPart => vocab::SUB_PART,
        DivisionKind::Chapter => vocab::CHAPTER,
        DivisionKind::Section => vocab::SECTION,
        DivisionKind::Appendix => vocab::APPENDIX,
        DivisionKind::Other => vocab::DIVISION,
    }
}

/// IRIs of one version's divisions, in the version's division order.
pub fn division_iris(version_iri: &str, v: &LawVersion) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(v.divisions.len());
    let mut used = std::collections::HashSet::new();
    for d in &v.divisions {
        let parent = d.parent.map(|p| out[p].as_str()).unwrap_or(version_iri);
        let label = if d.label.is_empty() {
            &d.title
        } else {
            &d.label
        };
        let mut candidate = iri::division(parent, d.kind.slug(), d.number, label);
        // Malformed input can repeat a heading; keep IRIs unique.
        let base = candidate.clone();
        let mut n = 2;
        while !used.insert(candidate.clone()) {
            candidate = format!("{base}-{n}");
            n += 1;
        }
        out.push(candidate);
    }
    out
}

/// The IRIs of a law and its versions.
pub struct LawIris {
    pub work: String,
    pub versions: Vec<String>,
}

pub fn law_iris(law: &Law) -> LawIris {
    let work = iri::work(&law.short_name);
    let versions = law
        .versions
        .iter()
        .map(|v| {
            iri::version(
                &work,
                v.version_date.map(|d| d.to_string()).as_deref(),
                &v.content_hash(),
            )
        })
        .collect();
    LawIris { work, versions }
}

/// Quads of the work graph: the law as a work, its versions and its articles as works.
pub fn work_quads(law: &Law, iris: &LawIris) -> QuadSink {
    let mut g = QuadSink::new(&iris.work);
    let latest = law.latest();
    g.node(&iris.work, vocab::LAW_WORK);
    g.zh(&iris.work, vocab::TITLE, &latest.title);
    g.zh(&iris.work, vocab::SHORT_NAME, &law.short_name);
    g.zh(&iris.work, vocab::LABEL, &law.short_name);
    let mut seen = std::collections::HashSet::new();
    for (v, viri) in law.versions.iter().zip(&iris.versions) {
        g.edge(&iris.work, vocab::HAS_VERSION, viri);
        for a in &v.articles {
            if seen.insert(a.number) {
                let aw = iri::article_work(&iris.work, a.number.main, a.number.suffix);
                g.node(&aw, vocab::ARTICLE_WORK);
                g.zh(&aw, vocab::LABEL, &a.number.label());
                g.edge(&iris.work, vocab::CONTAINS, &aw);
            }
        }
    }
    g
}

/// Quads of one version's named graph.
pub fn version_quads(law: &Law, iris: &LawIris, index: usize) -> QuadSink {
    let v = &law.versions[index];
    let viri = &iris.versions[index];
    let mut g = QuadSink::new(viri);
    g.node(viri, vocab::LAW_VERSION);
    g.edge(viri, vocab::VERSION_OF, &iris.work);
    g.zh(viri, vocab::TITLE, &v.title);
    g.zh(viri, vocab::SHORT_NAME, &v.short_name);
    g.string(viri, vocab::CONTENT_HASH, &v.content_hash());
    if let Some(d) = v.version_date {
        let d = d.to_string();
        g.date(viri, vocab::VERSION_DATE, &d);
        g.date(viri, vocab::VALID_FROM, &d);
    }
    if let Some(next) = law.versions.get(index + 1).and_then(|n| n.version_date) {
        g.date(viri, vocab::VALID_UNTIL, &next.to_string());
    }
    if index > 0 {
        g.edge(viri, vocab::SUPERSEDES, &iris.versions[index - 1]);
    }
    for h in &v.history {
        g.zh(viri, vocab::HISTORY_NOTE, &h.text);
    }
    for f in &v.files {
        g.string(viri, vocab::SOURCE_FILE, &f.path);
    }

    let div_iris = division_iris(viri, v);
    let mut child_order: BTreeMap<String, i64> = BTreeMap::new();
    let mut next_order = |parent: &str| {
        let n = child_order.entry(parent.to_owned()).or_insert(0);
        *n += 1;
        *n
    };
    for (d, diri) in v.divisions.iter().zip(&div_iris) {
        let parent = d.parent.map(|p| div_iris[p].as_str()).unwrap_or(viri);
        g.node(diri, division_class(d.kind));
        g.edge(parent, vocab::CONTAINS, diri);
        g.edge(diri, vocab::IN_LAW, viri);
        let order = next_order(parent);
        g.int(diri, vocab::ORDER, order);
        if !d.label.is_empty() {
            g.zh(diri, vocab::LABEL, &d.label);
        }
        if !d.title.is_empty() {
            g.zh(diri, vocab::HEADING, &d.title);
        }
        if let Some(n) = d.number {
            g.int(diri, vocab::NUMBER, n as i64);
        }
        g.int(diri, vocab::SOURCE_LINE, d.source.line as i64);
    }
    for p in &v.preamble {
        let piri = format!("{viri}/preamble/par_{}", p.number);
        g.node(&piri, vocab::PARAGRAPH);
        g.edge(viri, vocab::CONTAINS, &piri);
        g.int(&piri, vocab::NUMBER, p.number as i64);
        g.zh(&piri, vocab::TEXT, &p.text);
    }
    for a in &v.articles {
        let parent = a.division.map(|p| div_iris[p].as_str()).unwrap_or(viri);
        let order = next_order(parent);
        article_quads(&mut g, v, a, viri, &iris.work, parent, order);
    }
    g
}

fn article_quads(
    g: &mut QuadSink,
    v: &LawVersion,
    a: &Article,
    viri: &str,
    work: &str,
    parent: &str,
    order: i64,
) {
    let airi = iri::article(viri, a.number.main, a.number.suffix);
    let text = a.text();
    g.node(&airi, vocab::ARTICLE);
    g.edge(parent, vocab::CONTAINS, &airi);
    g.edge(&airi, vocab::IN_LAW, viri);
    g.edge(
        &airi,
        vocab::REALIZES_ARTICLE,
        &iri::article_work(work, a.number.main, a.number.suffix),
    );
    g.zh(&airi, vocab::LABEL, &a.label);
    g.int(&airi, vocab::NUMBER, a.number.main as i64);
    if a.number.suffix > 0 {
        g.int(&airi, vocab::SUFFIX, a.number.suffix as i64);
    }
    g.int(&airi, vocab::ORDER, order);
    g.zh(&airi, vocab::TEXT, &text);
    g.string(&airi, vocab::CONTENT_HASH, &text_hash(&text));
    let path = v.hierarchy_label(a.division);
    if !path.is_empty() {
        g.zh(&airi, vocab::HIERARCHY_PATH, &path);
    }
    g.string(&airi, vocab::SOURCE_FILE, &v.files[a.source.file].path);
    g.int(&airi, vocab::SOURCE_LINE, a.source.line as i64);
    for p in &a.paragraphs {
        let piri = iri::paragraph(&airi, p.number);
        g.node(&piri, vocab::PARAGRAPH);
        g.edge(&airi, vocab::CONTAINS, &piri);
        g.int(&piri, vocab::NUMBER, p.number as i64);
        g.zh(&piri, vocab::TEXT, &p.text);
        g.int(&piri, vocab::SOURCE_LINE, p.source.line as i64);
        for it in &p.items {
            let iiri = iri::item(&piri, it.number);
            g.node(&iiri, vocab::ITEM);
            g.edge(&piri, vocab::CONTAINS, &iiri);
            g.int(&iiri, vocab::NUMBER, it.number as i64);
            g.zh(&iiri, vocab::LABEL, &it.label);
            g.zh(&iiri, vocab::TEXT, &it.text);
            g.int(&iiri, vocab::SOURCE_LINE, it.source.line as i64);
        }
    }
}
