//! The BM25 index of articles (tantivy with jieba segmentation), one per build.
//!
//! Each article is indexed with its law's title and its place in the hierarchy, because
//! questions name laws and chapters far more often than they quote article text.

use std::path::Path;

use tantivy::collector::TopDocs;
use tantivy::columnar::Column;
use tantivy::query::{BooleanQuery, BoostQuery, ConstScoreQuery, Occur, TermQuery};
use tantivy::schema::{
    FAST, Field, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions, Value,
};
use tantivy::tokenizer::{LowerCaser, TextAnalyzer};
use tantivy::{DocAddress, Index, Searcher, TantivyDocument, Term};

use crate::error::{Result, StoreError};

mod writer;
pub use writer::{LawArticles, TextIndexWriter};

const TOKENIZER: &str = "jieba";
const BIGRAM_TOKENIZER: &str = "bigram";

/// One article as the text index sees it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct IndexedArticle {
    pub iri: String,
    pub version_iri: String,
    pub law_title: String,
    pub version_date: String,
    pub label: String,
    pub hierarchy: String,
    pub text: String,
    /// Whether this article belongs to the latest version of its law.
    pub latest: bool,
}

#[derive(Clone, Copy)]
struct Fields {
    iri: Field,
    version_iri: Field,
    law_title: Field,
    version_date: Field,
    label: Field,
    hierarchy: Field,
    text: Field,
    latest: Field,
    /// Character bigrams of the law's name and the article's body; `None` in indexes
    /// written before the field existed (bigram search then finds nothing).
    bigrams: Option<Field>,
}

fn schema() -> (Schema, Fields) {
    let mut sb = Schema::builder();
    let indexed = TextOptions::default()
        .set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(TOKENIZER)
                .set_index_option(IndexRecordOption::WithFreqsAndPositions),
        )
        .set_stored();
    let fields = Fields {
        // A fast field too: a hit's IRI is then read from its column, not from the
        // compressed document store (a block decompressed per hit, ~1 ms per question).
        iri: sb.add_text_field("iri", STRING | STORED | FAST),
        version_iri: sb.add_text_field("version_iri", STRING | STORED),
        law_title: sb.add_text_field("law_title", indexed.clone()),
        version_date: sb.add_text_field("version_date", STRING | STORED),
        label: sb.add_text_field("label", indexed.clone()),
        hierarchy: sb.add_text_field("hierarchy", indexed.clone()),
        text: sb.add_text_field("text", indexed),
        latest: sb.add_text_field("latest", STRING | STORED),
        bigrams: Some(
            sb.add_text_field(
                "bigrams",
                TextOptions::default().set_indexing_options(
                    TextFieldIndexing::default()
                        .set_tokenizer(BIGRAM_TOKENIZER)
                        .set_index_option(IndexRecordOption::WithFreqs),
                ),
            ),
        ),
    };
    (sb.build(), fields)
}

fn register_tokenizer(index: &Index) {
    // The stock dictionary. Law names added as words were measured: no recall gain on
    // the dev sets and 6x slower queries (the custom segmenter is rebuilt per query).
    let analyzer = TextAnalyzer::builder(tantivy_jieba::JiebaTokenizer::new())
        .filter(LowerCaser)
        .build();
    index.tokenizers().register(TOKENIZER, analyzer);
    index
        .tokenizers()
        .register(BIGRAM_TOKENIZER, crate::bigrams::BigramTokenizer);
}

/// What the bigram field holds: the law's name without the state's name every national
/// law shares, and the article's text without its label (第四十六条 would make 第四, 四十, …).
fn bigram_text(a: &IndexedArticle) -> String {
    let name = a.law_title.trim_start_matches("中华人民共和国");
    let body = a.text.strip_prefix(a.label.as_str()).unwrap_or(&a.text);
    format!("{name} {body}")
}

/// Keeps only articles of latest versions, without changing scores, unless `include_old`.
fn latest_only(
    query: Box<dyn tantivy::query::Query>,
    latest: Field,
    include_old: bool,
) -> Box<dyn tantivy::query::Query> {
    if include_old {
        return query;
    }
    Box::new(BooleanQuery::new(vec![
        (Occur::Must, query),
        // A zero-score clause filters without changing BM25 scores.
        (
            Occur::Must,
            Box::new(ConstScoreQuery::new(
                Box::new(TermQuery::new(
                    Term::from_field_text(latest, "1"),
                    IndexRecordOption::Basic,
                )),
                0.0,
            )),
        ),
    ]))
}

fn tantivy_err(path: &Path) -> impl Fn(tantivy::TantivyError) -> StoreError + '_ {
    move |e| StoreError::TextIndex(format!("{}: {e}", path.display()))
}

/// How much each field's BM25 score counts. Measured on the four dev sets (eval profile,
/// `coal eval retrieval --bm25-only`): the law title at full weight helps recitation
/// questions (lawbench-1-1 R@10 .952) but drowns consultations in every article of the
/// law they name (lecoqa .450, sociallawqa .537); at 0.5, without the hierarchy path,
/// lecoqa .471, lawbench-3-8 .208, lawbench-1-1 .918, sociallawqa .581.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FieldWeights {
    pub law_title: f32,
    pub hierarchy: f32,
    pub label: f32,
    pub text: f32,
}

impl Default for FieldWeights {
    fn default() -> Self {
        FieldWeights {
            law_title: 0.5,
            hierarchy: 0.0,
            label: 1.0,
            text: 1.0,
        }
    }
}

/// A segment's IRIs by document, held in memory: the fast field's term ordinals and its
/// dictionary read out once at open, because a dictionary lookup per hit cost more than
/// the document store it replaces (bm25 3.9 ms p50 against 1.7 on the eval profile).
struct IriColumn {
    ords: Column<u64>,
    iris: Vec<Box<str>>,
}

impl IriColumn {
    fn read(segment: &tantivy::SegmentReader) -> tantivy::Result<Option<IriColumn>> {
        let Some(column) = segment.fast_fields().str("iri")? else {
            return Ok(None);
        };
        let (dictionary, ords) = column.into_parts();
        let mut iris = Vec::with_capacity(dictionary.num_terms());
        let mut terms = dictionary.stream()?;
        while terms.advance() {
            iris.push(String::from_utf8_lossy(terms.key()).into());
        }
        Ok(Some(IriColumn { ords, iris }))
    }

    fn iri(&self, doc: tantivy::DocId) -> &str {
        self.ords
            .first(doc)
            .and_then(|ord| self.iris.get(ord as usize))
            .map_or("", |iri| iri)
    }
}

/// An opened index, ready to search.
pub struct TextIndex {
    weights: FieldWeights,
    index: Index,
    /// A build's index never changes once written: one searcher serves every query.
    searcher: Searcher,
    /// Per segment, the IRI column (`None`: an index written before the IRI was a fast
    /// field, whose IRIs are read from the document store).
    iri_columns: Vec<Option<IriColumn>>,
    fields: Fields,
    path: std::path::PathBuf,
}

impl TextIndex {
    pub fn open(path: &Path) -> Result<TextIndex> {
        if !path.join("meta.json").exists() {
            return Err(StoreError::TextIndex(format!(
                "{}: no BM25 index in this build; rebuild the store with `coal build`",
                path.display()
            )));
        }
        let index = Index::open_in_dir(path).map_err(tantivy_err(path))?;
        register_tokenizer(&index);
        // jieba loads its dictionary on first use (~150 ms): at open it overlaps with the
        // rest of start-up instead of delaying the first question.
        if let Some(mut analyzer) = index.tokenizers().get(TOKENIZER) {
            let mut stream = analyzer.token_stream("劳动合同");
            while stream.advance() {}
        }
        // Fields by name, not by the position `schema()` would give them: an index written
        // by another version of this code may have fewer or other fields.
        let on_disk = index.schema();
        let field = |name: &str| {
            on_disk.get_field(name).map_err(|_| {
                StoreError::TextIndex(format!(
                    "{}: the BM25 index has no field `{name}`; rebuild the store with `coal build`",
                    path.display()
                ))
            })
        };
        let fields = Fields {
            iri: field("iri")?,
            version_iri: field("version_iri")?,
            law_title: field("law_title")?,
            version_date: field("version_date")?,
            label: field("label")?,
            hierarchy: field("hierarchy")?,
            text: field("text")?,
            latest: field("latest")?,
            bigrams: on_disk.get_field("bigrams").ok(),
        };
        let reader = index
            .reader_builder()
            .reload_policy(tantivy::ReloadPolicy::Manual)
            .try_into()
            .map_err(tantivy_err(path))?;
        let searcher = reader.searcher();
        let iri_is_fast = on_disk.get_field_entry(fields.iri).is_fast();
        let iri_columns = searcher
            .segment_readers()
            .iter()
            .map(|s| match iri_is_fast {
                true => IriColumn::read(s),
                false => Ok(None),
            })
            .collect::<tantivy::Result<Vec<_>>>()
            .map_err(tantivy_err(path))?;
        Ok(TextIndex {
            weights: FieldWeights::default(),
            index,
            searcher,
            iri_columns,
            fields,
            path: path.to_owned(),
        })
    }

    /// Whether the index has the bigram field (builds written before it existed do not).
    pub fn has_bigrams(&self) -> bool {
        self.fields.bigrams.is_some()
    }

    pub fn set_weights(&mut self, weights: FieldWeights) {
        self.weights = weights;
    }

    /// The stored fields of one article.
    pub fn get(&self, iri: &str) -> Result<Option<IndexedArticle>> {
        let q = TermQuery::new(
            Term::from_field_text(self.fields.iri, iri),
            IndexRecordOption::Basic,
        );
        let top = self
            .searcher
            .search(&q, &TopDocs::with_limit(1).order_by_score())
            .map_err(tantivy_err(&self.path))?;
        match top.first() {
            Some(&(_, addr)) => {
                let doc: TantivyDocument =
                    self.searcher.doc(addr).map_err(tantivy_err(&self.path))?;
                Ok(Some(self.article_of(&doc)))
            }
            None => Ok(None),
        }
    }

    fn article_of(&self, doc: &TantivyDocument) -> IndexedArticle {
        let f = self.fields;
        let get = |field: Field| {
            doc.get_first(field)
                .and_then(|v| v.as_str())
                .unwrap_or_default()
                .to_owned()
        };
        IndexedArticle {
            iri: get(f.iri),
            version_iri: get(f.version_iri),
            law_title: get(f.law_title),
            version_date: get(f.version_date),
            label: get(f.label),
            hierarchy: get(f.hierarchy),
            text: get(f.text),
            latest: get(f.latest) == "1",
        }
    }

    /// The question's distinct index terms, in order of first appearance.
    pub fn tokens(&self, question: &str) -> Vec<String> {
        self.distinct_tokens(TOKENIZER, question)
    }

    fn distinct_tokens(&self, tokenizer: &str, question: &str) -> Vec<String> {
        let mut analyzer = self
            .index
            .tokenizers()
            .get(tokenizer)
            .expect("tokenizers registered at open");
        let mut stream = analyzer.token_stream(question);
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::new();
        while let Some(tok) = stream.next() {
            let t = tok.text.trim();
            let is_punct = t.chars().all(|c| !c.is_alphanumeric());
            if !t.is_empty() && !is_punct && seen.insert(t.to_owned()) {
                out.push(t.to_owned());
            }
        }
        out
    }

    pub fn num_docs(&self) -> u64 {
        self.searcher.num_docs()
    }

    /// The IRIs and scores of the best `k` documents for a disjunction of `clauses`
    /// (none: nothing found), of latest versions only unless `include_old`.
    fn top_iris(
        &self,
        clauses: Vec<(Occur, Box<dyn tantivy::query::Query>)>,
        k: usize,
        include_old: bool,
    ) -> Result<Vec<(String, f32)>> {
        if clauses.is_empty() {
            return Ok(Vec::new());
        }
        let query = latest_only(
            Box::new(BooleanQuery::new(clauses)),
            self.fields.latest,
            include_old,
        );
        let top = self
            .searcher
            .search(&query, &TopDocs::with_limit(k.max(1)).order_by_score())
            .map_err(tantivy_err(&self.path))?;
        top.into_iter()
            .map(|(score, addr)| Ok((self.iri_of(addr)?, score)))
            .collect()
    }

    /// A document's IRI: from the IRI column, or from the document store in indexes
    /// written before it was a fast field.
    fn iri_of(&self, addr: DocAddress) -> Result<String> {
        if let Some(column) = &self.iri_columns[addr.segment_ord as usize] {
            return Ok(column.iri(addr.doc_id).to_owned());
        }
        let doc: TantivyDocument = self.searcher.doc(addr).map_err(tantivy_err(&self.path))?;
        Ok(doc
            .get_first(self.fields.iri)
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_owned())
    }

    /// BM25 search over title, hierarchy, label and text: the IRIs and scores of the best
    /// `k` articles. Query syntax characters are treated as text. Articles of older
    /// versions are left out unless `include_old`.
    pub fn search(
        &self,
        question: &str,
        k: usize,
        include_old: bool,
    ) -> Result<Vec<(String, f32)>> {
        let f = self.fields;
        // A bag of jieba terms over every field, disjunctive: tantivy's query parser would
        // turn a run of Chinese into a phrase query, which questions almost never match.
        let terms = self.tokens(question);
        let mut clauses: Vec<(Occur, Box<dyn tantivy::query::Query>)> = Vec::new();
        let w = self.weights;
        for (field, boost) in [
            (f.law_title, w.law_title),
            (f.hierarchy, w.hierarchy),
            (f.label, w.label),
            (f.text, w.text),
        ] {
            if boost == 0.0 {
                continue;
            }
            for t in &terms {
                let q = TermQuery::new(
                    Term::from_field_text(field, t),
                    IndexRecordOption::WithFreqs,
                );
                clauses.push((Occur::Should, Box::new(BoostQuery::new(Box::new(q), boost))));
            }
        }
        self.top_iris(clauses, k, include_old)
    }

    /// BM25 over the character bigrams of the law's name and the article's body: the
    /// IRIs and scores of the best `k` articles (older versions only with `include_old`).
    pub fn search_bigrams(
        &self,
        question: &str,
        k: usize,
        include_old: bool,
    ) -> Result<Vec<(String, f32)>> {
        let Some(field) = self.fields.bigrams else {
            return Ok(Vec::new());
        };
        let clauses: Vec<(Occur, Box<dyn tantivy::query::Query>)> = self
            .distinct_tokens(BIGRAM_TOKENIZER, question)
            .iter()
            .map(|t| {
                let q = TermQuery::new(
                    Term::from_field_text(field, t),
                    IndexRecordOption::WithFreqs,
                );
                (Occur::Should, Box::new(q) as Box<dyn tantivy::query::Query>)
            })
            .collect();
        self.top_iris(clauses, k, include_old)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn article(iri: &str, title: &str, label: &str, text: &str, latest: bool) -> IndexedArticle {
        IndexedArticle {
            iri: iri.into(),
            version_iri: format!("{iri}-v"),
            law_title: title.into(),
            version_date: "2020-01-01".into(),
            label: label.into(),
            hierarchy: "第一章 总则".into(),
            text: format!("{label} {text}"),
            latest,
        }
    }

    /// Documents for a one-group index, written at `commit` as one law.
    struct Docs {
        path: std::path::PathBuf,
        docs: Vec<IndexedArticle>,
    }

    impl Docs {
        fn add(&mut self, a: &IndexedArticle) -> Result<()> {
            self.docs.push(a.clone());
            Ok(())
        }

        fn commit(self) -> Result<()> {
            let mut w = TextIndexWriter::create_with_groups(&self.path, 1)?;
            let law = law_of("test", self.docs);
            w.put_group(0, vec![law])?;
            w.commit()
        }
    }

    fn writer(path: &Path) -> Docs {
        Docs {
            path: path.to_owned(),
            docs: Vec::new(),
        }
    }

    fn law_of(work: &str, articles: Vec<IndexedArticle>) -> LawArticles {
        let mut versions: Vec<String> = articles.iter().map(|a| a.version_iri.clone()).collect();
        versions.sort();
        versions.dedup();
        LawArticles {
            work: work.to_owned(),
            versions,
            articles,
        }
    }

    /// Puts every group of `laws` (work, articles); returns the laws of groups written.
    fn put_all(w: &mut TextIndexWriter, laws: &[(&str, Vec<IndexedArticle>)]) -> Vec<String> {
        let mut written = Vec::new();
        for g in 0..w.groups() {
            let members: Vec<LawArticles> = laws
                .iter()
                .filter(|(work, _)| w.group_of(work) == g)
                .map(|(work, a)| law_of(work, a.clone()))
                .collect();
            let works: Vec<String> = members.iter().map(|l| l.work.clone()).collect();
            if w.put_group(g, members).unwrap() {
                written.extend(works);
            }
        }
        written.sort();
        written
    }

    /// Every hit (ties at a cut-off may fall either way), by article.
    fn scores(index: &TextIndex, q: &str) -> Vec<(String, f32)> {
        let mut hits: Vec<(String, f32)> = index.search(q, 100, true).unwrap();
        hits.sort_by(|a, b| a.0.cmp(&b.0));
        hits
    }

    fn segments(path: &Path) -> usize {
        Index::open_in_dir(path)
            .unwrap()
            .searchable_segment_ids()
            .unwrap()
            .len()
    }

    #[test]
    fn an_extended_index_scores_exactly_as_a_fresh_one_after_laws_change() {
        let dir = tempfile::tempdir().unwrap();
        // Ten laws of three articles over three groups; the words repeat across laws so
        // that every score depends on the whole index's statistics.
        let law = |n: usize, extra: &str| -> (String, Vec<IndexedArticle>) {
            let work = format!("w{n}");
            let articles = (0..3)
                .map(|i| {
                    article(
                        &format!("{work}/a{i}"),
                        &format!("中华人民共和国第{n}号法"),
                        "第一条",
                        &format!(
                            "用人单位应当与劳动者订立书面劳动合同{}。{extra}",
                            "，劳动者".repeat(i + n % 3)
                        ),
                        true,
                    )
                })
                .collect();
            (work, articles)
        };
        let base_laws: Vec<(String, Vec<IndexedArticle>)> = (0..10).map(|n| law(n, "")).collect();
        let put = |w: &mut TextIndexWriter, laws: &[(String, Vec<IndexedArticle>)]| {
            let borrowed: Vec<(&str, Vec<IndexedArticle>)> =
                laws.iter().map(|(w, a)| (w.as_str(), a.clone())).collect();
            put_all(w, &borrowed)
        };
        let base = dir.path().join("base/bm25");
        let mut w = TextIndexWriter::create_with_groups(&base, 3).unwrap();
        assert_eq!(put(&mut w, &base_laws).len(), 10);
        w.commit().unwrap();
        assert!(segments(&base) <= 3, "one segment per group at most");

        // Law 4 reworded, law 7 removed, law 10 added.
        let mut now = base_laws.clone();
        now[4] = law(4, "劳动合同解除后应当支付经济补偿。");
        now.remove(7);
        now.push(law(10, ""));
        let extended = dir.path().join("next/bm25");
        let mut w = TextIndexWriter::extend(&base, &extended).unwrap().unwrap();
        let written = put(&mut w, &now);
        w.commit().unwrap();
        let changed_groups: std::collections::BTreeSet<usize> = ["w4", "w7", "w10"]
            .iter()
            .map(|l| super::writer::group_of(l, 3))
            .collect();
        let expected: Vec<String> = {
            let mut v: Vec<String> = now
                .iter()
                .map(|(w, _)| w.clone())
                .filter(|w| changed_groups.contains(&super::writer::group_of(w, 3)))
                .collect();
            v.sort();
            v
        };
        assert_eq!(
            written, expected,
            "only the groups of changed laws are written"
        );
        assert!(written.len() < now.len());
        let fresh = dir.path().join("fresh/bm25");
        let mut w = TextIndexWriter::create_with_groups(&fresh, 3).unwrap();
        put(&mut w, &now);
        w.commit().unwrap();

        let (ext, fresh_index) = (
            TextIndex::open(&extended).unwrap(),
            TextIndex::open(&fresh).unwrap(),
        );
        assert_eq!(ext.num_docs(), 30);
        for q in ["劳动合同", "用人单位劳动者", "经济补偿", "第7号法"] {
            // Whole segments replaced, none merged with deleted documents: the same
            // statistics, bit for bit the same scores.
            assert_eq!(scores(&ext, q), scores(&fresh_index, q), "{q}");
        }
        assert!(
            scores(&ext, "第7号法")
                .iter()
                .all(|(iri, _)| !iri.starts_with("w7/"))
        );
        assert!(segments(&extended) <= 3);
        // The base build's index is untouched.
        let base_index = TextIndex::open(&base).unwrap();
        assert_eq!(base_index.num_docs(), 30);
        assert!(
            scores(&base_index, "第7号法")
                .iter()
                .any(|(iri, _)| iri.starts_with("w7/"))
        );
        // An index without its record of laws cannot be extended (nothing to delete by).
        std::fs::remove_file(dir.path().join("fresh").join("bm25-laws.json")).unwrap();
        assert!(
            TextIndexWriter::extend(&fresh, &dir.path().join("x/bm25"))
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn every_group_must_be_put() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = TextIndexWriter::create_with_groups(&dir.path().join("bm25"), 2).unwrap();
        w.put_group(0, Vec::new()).unwrap();
        let err = w.commit().unwrap_err().to_string();
        assert!(err.contains("group 1 of 2 was never put"), "{err}");
    }

    #[test]
    fn round_trip_after_reopening_with_old_versions_filtered() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bm25");
        let mut w = writer(&path);
        w.add(&article(
            "a1",
            "中华人民共和国劳动合同法",
            "第三十六条",
            "用人单位与劳动者协商一致，可以解除劳动合同。",
            true,
        ))
        .unwrap();
        w.add(&article(
            "a2",
            "中华人民共和国劳动合同法",
            "第十条",
            "建立劳动关系，应当订立书面劳动合同。",
            true,
        ))
        .unwrap();
        w.add(&article(
            "a0",
            "中华人民共和国劳动合同法",
            "第三十六条",
            "协商一致解除劳动合同的旧文本。",
            false,
        ))
        .unwrap();
        w.add(&article(
            "b1",
            "中华人民共和国道路交通安全法",
            "第七十六条",
            "机动车发生交通事故造成人身伤亡的，由保险公司赔偿。",
            true,
        ))
        .unwrap();
        w.commit().unwrap();

        let index = TextIndex::open(&path).unwrap();
        assert_eq!(index.num_docs(), 4);
        // Questions are segmented as articles were: reopening registers the same tokenizer.
        assert!(
            index
                .tokens("协商一致解除劳动合同")
                .contains(&"劳动合同".to_owned())
        );
        let hits = index.search("协商一致解除劳动合同", 10, false).unwrap();
        assert_eq!(hits[0].0, "a1");
        assert!(
            hits.iter()
                .all(|(iri, _)| index.get(iri).unwrap().unwrap().latest),
            "old versions are filtered out"
        );
        assert!(hits.windows(2).all(|w| w[0].1 >= w[1].1));
        let with_old = index.search("协商一致解除劳动合同", 10, true).unwrap();
        assert!(with_old.iter().any(|(iri, _)| iri == "a0"));
        // The law title is indexed: a question naming only the law finds its articles.
        let by_title = index.search("道路交通安全法", 1, false).unwrap();
        assert_eq!(by_title[0].0, "b1");
        assert_eq!(index.get("b1").unwrap().unwrap().label, "第七十六条");
        // Query-language characters are plain text.
        assert!(
            index
                .search("劳动合同: (解除) AND \"协商\" ~2 ^3 [x TO y]", 5, false)
                .is_ok()
        );
    }

    #[test]
    fn bigram_search_keeps_a_compound_that_words_lose() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bm25");
        let mut w = writer(&path);
        let title = "中华人民共和国民法典";
        w.add(&article(
            "dev",
            title,
            "第八百五十二条",
            "委托开发合同的委托人应当按照约定支付研究开发经费和报酬。",
            true,
        ))
        .unwrap();
        w.add(&article(
            "agency",
            title,
            "第九百一十九条",
            "委托合同是委托人和受托人约定，由受托人处理委托人事务的合同。",
            true,
        ))
        .unwrap();
        w.add(&article(
            "dev-old",
            title,
            "第三百三十五条",
            "委托开发合同的委托人应当按照约定支付研究开发经费。",
            false,
        ))
        .unwrap();
        w.commit().unwrap();
        let index = TextIndex::open(&path).unwrap();
        let q = "委托开发合同的委托人有什么义务？";
        let hits = index.search_bigrams(q, 10, false).unwrap();
        assert_eq!(hits[0].0, "dev", "{hits:?}");
        assert!(
            hits.iter().all(|(iri, _)| iri != "dev-old"),
            "old versions filtered: {hits:?}"
        );
        assert!(hits.windows(2).all(|w| w[0].1 >= w[1].1));
        let with_old = index.search_bigrams(q, 10, true).unwrap();
        assert!(with_old.iter().any(|(iri, _)| iri == "dev-old"));
        // The law's name is in the field, its article labels are not.
        assert_eq!(index.search_bigrams("民法典", 10, false).unwrap().len(), 2);
        assert!(
            index
                .search_bigrams("第八百五十二条", 10, false)
                .unwrap()
                .is_empty()
        );
        assert!(index.search_bigrams("，。", 10, false).unwrap().is_empty());
    }

    #[test]
    fn an_index_written_before_the_bigram_field_still_answers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bm25");
        std::fs::create_dir_all(&path).unwrap();
        // The schema as it was: the same fields, no `bigrams`, `latest` before `label`
        // (another order than today's, so positions cannot be relied on).
        let mut sb = Schema::builder();
        let indexed = TextOptions::default()
            .set_indexing_options(
                TextFieldIndexing::default()
                    .set_tokenizer(TOKENIZER)
                    .set_index_option(IndexRecordOption::WithFreqsAndPositions),
            )
            .set_stored();
        let iri = sb.add_text_field("iri", STRING | STORED);
        let version_iri = sb.add_text_field("version_iri", STRING | STORED);
        let latest = sb.add_text_field("latest", STRING | STORED);
        let law_title = sb.add_text_field("law_title", indexed.clone());
        let version_date = sb.add_text_field("version_date", STRING | STORED);
        let label = sb.add_text_field("label", indexed.clone());
        let hierarchy = sb.add_text_field("hierarchy", indexed.clone());
        let text = sb.add_text_field("text", indexed);
        let index = Index::create_in_dir(&path, sb.build()).unwrap();
        register_tokenizer(&index);
        let mut w: tantivy::IndexWriter = index.writer(15_000_000).unwrap();
        let mut doc = TantivyDocument::default();
        for (f, v) in [
            (iri, "a1"),
            (version_iri, "v"),
            (latest, "1"),
            (law_title, "中华人民共和国劳动合同法"),
            (version_date, "2012-12-28"),
            (label, "第三十六条"),
            (hierarchy, "第四章"),
            (
                text,
                "第三十六条 用人单位与劳动者协商一致，可以解除劳动合同。",
            ),
        ] {
            doc.add_text(f, v);
        }
        w.add_document(doc).unwrap();
        w.commit().unwrap();
        drop(w);

        let index = TextIndex::open(&path).unwrap();
        assert!(!index.has_bigrams());
        let hits = index.search("协商一致解除劳动合同", 5, false).unwrap();
        // Its IRIs come from the document store: the IRI was not a fast field then.
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].0, "a1");
        let article = index.get("a1").unwrap().unwrap();
        assert_eq!(article.label, "第三十六条");
        assert!(article.latest);
        assert!(
            index
                .search_bigrams("协商一致解除劳动合同", 5, false)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn an_index_without_a_required_field_names_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bm25");
        std::fs::create_dir_all(&path).unwrap();
        let mut sb = Schema::builder();
        sb.add_text_field("iri", STRING | STORED);
        Index::create_in_dir(&path, sb.build()).unwrap();
        let Err(err) = TextIndex::open(&path) else {
            panic!("opened an index without the article fields")
        };
        let msg = err.to_string();
        assert!(
            msg.contains("no field `version_iri`") && msg.contains("coal build"),
            "{msg}"
        );
    }

    #[test]
    fn opening_a_missing_index_says_how_to_build_it() {
        let dir = tempfile::tempdir().unwrap();
        let Err(err) = TextIndex::open(&dir.path().join("bm25")) else {
            panic!("opened a missing index")
        };
        assert!(err.to_string().contains("coal build"), "{err}");
    }
}
