//! What the query side's graph tiers need from the RDF graph, extracted once at build time
//! and stored beside the indexes (`retrieval-graph.json`), so that `ask` starts in
//! milliseconds instead of running the same SPARQL joins at every start: the latest
//! version of every law with its domain (corpus folder), its articles with their parent
//! division and order, citations between articles, concepts with the articles that define
//! and mention them, and the laws articles yield to.

use std::collections::HashMap;
use std::path::Path;

use oxigraph::model::Term;
use serde::{Deserialize, Serialize};

use crate::{GraphBackend, Result, SparqlOutput, StoreError};

pub const FILE_NAME: &str = "retrieval-graph.json";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RetrievalGraph {
    pub laws: Vec<LawEntry>,
    pub articles: Vec<ArticleEntry>,
    /// (citing article, cited article), indexes into `articles`.
    pub cites: Vec<(u32, u32)>,
    pub concepts: Vec<ConceptEntry>,
    /// (article, law version IRI it yields to).
    pub defers_to: Vec<(u32, String)>,
    /// Every version of every law (not only the latest) with its validity, for `--as-of`.
    /// Empty in files written before it existed.
    #[serde(default)]
    pub versions: Vec<VersionEntry>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VersionEntry {
    pub iri: String,
    /// The law's work IRI.
    pub work: String,
    pub valid_from: Option<String>,
    pub valid_until: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LawEntry {
    pub short_name: String,
    pub title: String,
    pub version_iri: String,
    pub version_date: Option<String>,
    /// The first folder of the law's source file (社会法, 民法商法, …).
    pub domain: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArticleEntry {
    pub iri: String,
    /// Index into `laws`.
    pub law: u32,
    /// The division (or version) that contains the article.
    pub parent: String,
    pub order: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConceptEntry {
    pub iri: String,
    pub label: String,
    /// Index into `laws` (the law of the first article linked to it).
    pub law: u32,
    pub defined_by: Vec<u32>,
    pub mentioned_by: Vec<u32>,
}

fn rows(g: &dyn GraphBackend, q: &str) -> Result<Vec<Vec<String>>> {
    let SparqlOutput::Solutions { rows, .. } = g.query(q)? else {
        unreachable!("a SELECT query returns solutions")
    };
    Ok(rows
        .iter()
        .map(|r| {
            r.iter()
                .map(|t| match t {
                    Some(Term::Literal(l)) => l.value().to_owned(),
                    Some(Term::NamedNode(n)) => n.as_str().to_owned(),
                    _ => String::new(),
                })
                .collect()
        })
        .collect())
}

/// `…/art_47/par_2/pnt_1` → `…/art_47`.
pub fn article_of(provision: &str) -> &str {
    match provision.find("/par_") {
        Some(i) => &provision[..i],
        None => provision,
    }
}

const LATEST: &str = "FILTER NOT EXISTS { ?newer coal:supersedes ?v }";

impl RetrievalGraph {
    /// Extracts the graph with SPARQL (latest versions only).
    pub fn extract(g: &dyn GraphBackend) -> Result<RetrievalGraph> {
        let mut rg = RetrievalGraph::default();
        let mut law_of_version = HashMap::new();
        for r in rows(
            g,
            &format!(
                "SELECT ?v ?short ?title ?date (SAMPLE(?file) AS ?f) WHERE {{
                   ?v a coal:LawVersion ; coal:shortName ?short ; coal:title ?title ; coal:sourceFile ?file .
                   OPTIONAL {{ ?v coal:versionDate ?date }} {LATEST} }}
                 GROUP BY ?v ?short ?title ?date ORDER BY ?v"
            ),
        )? {
            law_of_version.insert(r[0].clone(), rg.laws.len() as u32);
            rg.laws.push(LawEntry {
                version_iri: r[0].clone(),
                short_name: r[1].clone(),
                title: r[2].clone(),
                version_date: (!r[3].is_empty()).then(|| r[3].clone()),
                domain: r[4].split('/').next().unwrap_or_default().to_owned(),
            });
        }
        let mut index = HashMap::new();
        for r in rows(
            g,
            &format!(
                "SELECT ?a ?v ?parent ?order WHERE {{ ?a a coal:Article ; coal:inLaw ?v ; coal:order ?order .
                   ?parent coal:contains ?a . {LATEST} }} ORDER BY ?a"
            ),
        )? {
            let Some(&law) = law_of_version.get(&r[1]) else {
                continue;
            };
            index.insert(r[0].clone(), rg.articles.len() as u32);
            rg.articles.push(ArticleEntry {
                iri: r[0].clone(),
                law,
                parent: r[2].clone(),
                order: r[3].parse().unwrap_or(0),
            });
        }
        let mut cites = Vec::new();
        for r in rows(
            g,
            "SELECT DISTINCT ?a ?t WHERE { ?a a coal:Article ; coal:cites ?t }",
        )? {
            // Older versions and whole laws are not walked.
            if let (Some(&a), Some(&t)) = (index.get(&r[0]), index.get(article_of(&r[1])))
                && a != t
            {
                cites.push((a, t));
            }
        }
        cites.sort_unstable();
        cites.dedup();
        rg.cites = cites;
        let mut concepts: HashMap<String, usize> = HashMap::new();
        for r in rows(
            g,
            "SELECT ?a ?p ?c ?label WHERE { VALUES ?p { coal:defines coal:mentions }
               ?a ?p ?c . ?c coal:label ?label } ORDER BY ?c ?a",
        )? {
            let Some(&a) = index.get(&r[0]) else {
                continue;
            };
            let i = *concepts.entry(r[2].clone()).or_insert_with(|| {
                rg.concepts.push(ConceptEntry {
                    iri: r[2].clone(),
                    label: r[3].clone(),
                    law: rg.articles[a as usize].law,
                    defined_by: Vec::new(),
                    mentioned_by: Vec::new(),
                });
                rg.concepts.len() - 1
            });
            if r[1].ends_with("#defines") {
                rg.concepts[i].defined_by.push(a);
            } else {
                rg.concepts[i].mentioned_by.push(a);
            }
        }
        for r in rows(
            g,
            "SELECT ?a ?v WHERE { ?a coal:defersTo ?v } ORDER BY ?a ?v",
        )? {
            if let Some(&a) = index.get(&r[0]) {
                rg.defers_to.push((a, r[1].clone()));
            }
        }
        rg.versions = Self::extract_versions(g)?;
        Ok(rg)
    }

    /// Every law version with its validity (what files written before `versions`
    /// existed lack).
    pub fn extract_versions(g: &dyn GraphBackend) -> Result<Vec<VersionEntry>> {
        let some = |s: &String| (!s.is_empty()).then(|| s.clone());
        Ok(rows(
            g,
            "SELECT ?v ?w ?from ?until WHERE { ?v a coal:LawVersion ; coal:versionOf ?w .
               OPTIONAL { ?v coal:validFrom ?from } OPTIONAL { ?v coal:validUntil ?until } }
             ORDER BY ?v",
        )?
        .into_iter()
        .map(|r| VersionEntry {
            iri: r[0].clone(),
            work: r[1].clone(),
            valid_from: some(&r[2]),
            valid_until: some(&r[3]),
        })
        .collect())
    }

    pub fn write(&self, dir: &Path) -> Result<()> {
        let path = dir.join(FILE_NAME);
        let json = serde_json::to_vec(self).map_err(|e| StoreError::Serialize(e.to_string()))?;
        std::fs::write(&path, json).map_err(|e| StoreError::io(&path, e))
    }

    /// `None` when the build has no such file (built before it existed).
    pub fn read(dir: &Path) -> Result<Option<RetrievalGraph>> {
        let path = dir.join(FILE_NAME);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| StoreError::Serialize(format!("{}: {e}", path.display()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(StoreError::io(&path, e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_extracted_and_older_files_without_them_still_read() {
        let g = crate::LocalGraph::in_memory().unwrap();
        g.load_ontology().unwrap();
        let ttl = r#"
            @prefix coal: <https://w3id.org/coal/ontology#> .
            <http://ex/v1> a coal:LawVersion ; coal:versionOf <http://ex/w> ;
                coal:validFrom "2018-10-26" ; coal:validUntil "2022-10-30" .
            <http://ex/v2> a coal:LawVersion ; coal:versionOf <http://ex/w> ;
                coal:validFrom "2022-10-30" .
        "#;
        g.oxigraph()
            .load_from_reader(oxigraph::io::RdfFormat::Turtle, ttl.as_bytes())
            .unwrap();
        let v = RetrievalGraph::extract(&g).unwrap().versions;
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].valid_until.as_deref(), Some("2022-10-30"));
        assert_eq!(v[1].valid_until, None);
        assert_eq!(v[1].work, "http://ex/w");
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(FILE_NAME),
            r#"{"laws":[],"articles":[],"cites":[],"concepts":[],"defers_to":[]}"#,
        )
        .unwrap();
        let old = RetrievalGraph::read(dir.path()).unwrap().unwrap();
        assert!(old.versions.is_empty());
    }
}
