//! A law's versions and the article-level diff between two of them, read from the graph
//! (the build aligns every pair of versions: `coal:VersionDiff`, `coal:ArticleChange`).

use kg_store::oxigraph::model::Term;
use kg_store::{GraphBackend, SparqlOutput};
use serde::Serialize;

use crate::{QueryError, literal_escape};

#[derive(Debug, Clone, Serialize)]
pub struct VersionInfo {
    pub iri: String,
    pub title: String,
    pub version_date: Option<String>,
    pub valid_until: Option<String>,
    pub articles: usize,
    /// Changes from the previous version, by kind (empty for the first version).
    pub changes_from_previous: Vec<(String, usize)>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ArticleSide {
    pub iri: String,
    pub label: String,
    pub text: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct ArticleDiff {
    pub kind: String,
    pub similarity: f64,
    pub from: Option<ArticleSide>,
    pub to: Option<ArticleSide>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Diff {
    pub from: VersionInfo,
    pub to: VersionInfo,
    pub counts: Vec<(String, usize)>,
    pub changes: Vec<ArticleDiff>,
}

fn rows(g: &dyn GraphBackend, q: &str) -> Result<Vec<Vec<Option<String>>>, QueryError> {
    let SparqlOutput::Solutions { rows, .. } = g.query(q)? else {
        unreachable!("SELECT")
    };
    Ok(rows
        .iter()
        .map(|r| {
            r.iter()
                .map(|t| match t {
                    Some(Term::Literal(l)) => Some(l.value().to_owned()),
                    Some(Term::NamedNode(n)) => Some(n.as_str().to_owned()),
                    _ => None,
                })
                .collect()
        })
        .collect())
}

/// Every version of a law (full title or short name, with or without 《》), oldest first.
pub fn history(g: &dyn GraphBackend, law: &str) -> Result<Vec<VersionInfo>, QueryError> {
    let name = law.trim().trim_start_matches('《').trim_end_matches('》');
    let short = coal_corpus::typed_law_name(law);
    let short = short.as_str();
    if short.is_empty() {
        return Err(QueryError::NoLawName);
    }
    let q = format!(
        // Grouped by the version alone, never by an OPTIONAL's variable: Virtuoso splits
        // groups whose keys are unbound.
        r#"SELECT ?v ?title ?date ?until ?n WHERE {{
  ?v a coal:LawVersion ; coal:shortName "{s}"@zh ; coal:title ?title .
  OPTIONAL {{ ?v coal:versionDate ?date }} OPTIONAL {{ ?v coal:validUntil ?until }}
  {{ SELECT ?v (COUNT(?a) AS ?n) WHERE {{
      ?v a coal:LawVersion ; coal:shortName "{s}"@zh .
      OPTIONAL {{ ?a coal:inLaw ?v ; a coal:Article }}
  }} GROUP BY ?v }}
}} ORDER BY ?date ?v"#,
        s = literal_escape(short)
    );
    let mut out: Vec<VersionInfo> = rows(g, &q)?
        .into_iter()
        .map(|r| VersionInfo {
            iri: r[0].clone().unwrap_or_default(),
            title: r[1].clone().unwrap_or_default(),
            version_date: r[2].clone(),
            valid_until: r[3].clone(),
            articles: r[4].as_deref().and_then(|n| n.parse().ok()).unwrap_or(0),
            changes_from_previous: Vec::new(),
        })
        .collect();
    if out.is_empty() {
        return Err(QueryError::UnknownLaw(name.to_owned()));
    }
    for i in 1..out.len() {
        out[i].changes_from_previous = counts(g, &out[i - 1].iri, &out[i].iri)?;
    }
    Ok(out)
}

fn diff_iri(from: &str, to: &str) -> String {
    coal_ontology::iri::version_diff(to, from)
}

fn counts(g: &dyn GraphBackend, from: &str, to: &str) -> Result<Vec<(String, usize)>, QueryError> {
    let q = format!(
        "SELECT ?kind (COUNT(?c) AS ?n) WHERE {{ ?c coal:inDiff <{}> ; coal:changeKind ?kind }} GROUP BY ?kind ORDER BY ?kind",
        diff_iri(from, to)
    );
    Ok(rows(g, &q)?
        .into_iter()
        .map(|r| {
            (
                r[0].clone().unwrap_or_default(),
                r[1].as_deref().and_then(|n| n.parse().ok()).unwrap_or(0),
            )
        })
        .collect())
}

/// Picks a version: an exact version date or IRI, else the version in force on a date
/// (`YYYY-MM-DD`).
pub fn pick(versions: &[VersionInfo], spec: &str) -> Result<usize, QueryError> {
    let spec = spec.trim();
    if let Some(i) = versions
        .iter()
        .position(|v| v.iri == spec || v.version_date.as_deref() == Some(spec))
    {
        return Ok(i);
    }
    let is_date = spec.len() == 10 && spec.as_bytes()[4] == b'-' && spec.as_bytes()[7] == b'-';
    if !is_date {
        return Err(QueryError::BadVersion(spec.to_owned()));
    }
    versions
        .iter()
        .rposition(|v| v.version_date.as_deref().is_some_and(|d| d <= spec))
        .ok_or_else(|| QueryError::NoVersionInForce {
            date: spec.to_owned(),
            first: versions[0]
                .version_date
                .as_deref()
                .unwrap_or("an unknown date")
                .to_owned(),
        })
}

/// The article-level diff between two versions of a law (default: the last two).
pub fn diff(
    g: &dyn GraphBackend,
    law: &str,
    from: Option<&str>,
    to: Option<&str>,
) -> Result<Diff, QueryError> {
    let versions = history(g, law)?;
    if versions.len() < 2 {
        return Err(QueryError::OneVersion(versions[0].title.clone()));
    }
    let t = match to {
        Some(s) => pick(&versions, s)?,
        None => versions.len() - 1,
    };
    let f = match from {
        Some(s) => pick(&versions, s)?,
        None => t.saturating_sub(1),
    };
    if f >= t {
        return Err(QueryError::VersionsOutOfOrder);
    }
    let (fv, tv) = (&versions[f], &versions[t]);
    let q = format!(
        r#"SELECT ?kind ?sim ?f ?fl ?ft ?t ?tl ?tt WHERE {{
  ?c coal:inDiff <{d}> ; coal:changeKind ?kind ; coal:similarity ?sim .
  OPTIONAL {{ ?c coal:fromArticle ?f . ?f coal:label ?fl ; coal:text ?ft }}
  OPTIONAL {{ ?c coal:toArticle ?t . ?t coal:label ?tl ; coal:text ?tt }}
}} ORDER BY ?c"#,
        d = diff_iri(&fv.iri, &tv.iri)
    );
    let side = |iri: &Option<String>, l: &Option<String>, t: &Option<String>| {
        iri.as_ref().map(|i| ArticleSide {
            iri: i.clone(),
            label: l.clone().unwrap_or_default(),
            text: t.clone().unwrap_or_default(),
        })
    };
    let mut changes: Vec<ArticleDiff> = rows(g, &q)?
        .into_iter()
        .map(|r| ArticleDiff {
            kind: r[0].clone().unwrap_or_default(),
            similarity: r[1].as_deref().and_then(|s| s.parse().ok()).unwrap_or(0.0),
            from: side(&r[2], &r[3], &r[4]),
            to: side(&r[5], &r[6], &r[7]),
        })
        .collect();
    // Reading order of the newer version (第一百三十三条之一 after 第一百三十三条),
    // removed articles where they stood.
    let order = |c: &ArticleDiff| {
        let num = |s: &Option<ArticleSide>| {
            s.as_ref()
                .and_then(|a| coal_ontology::iri::parse_article(&a.iri))
        };
        (
            num(&c.to).or(num(&c.from)).unwrap_or((0, 0)),
            c.to.is_none(),
        )
    };
    changes.sort_by_key(order);
    Ok(Diff {
        counts: counts(g, &fv.iri, &tv.iri)?,
        from: fv.clone(),
        to: tv.clone(),
        changes,
    })
}
