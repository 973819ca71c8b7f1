//! Retrieval evaluation: gold articles of a question set mapped to article IRIs, and
//! Recall@k, MRR@10, nDCG@10 and article precision/recall/F1@k over ranked lists.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use kg_store::{ArticleRow, LawVersionRow};
use serde::{Deserialize, Serialize};

use crate::QueryError;

#[derive(Debug, Clone, Deserialize)]
pub struct GoldCitation {
    pub law: String,
    pub article: String,
    pub file: String,
}

/// One question of an evaluation set. Retrieval never reads the reference answer; only
/// answer scoring compares with it.
#[derive(Debug, Clone, Deserialize)]
pub struct EvalItem {
    pub id: String,
    pub question: String,
    pub gold: Vec<GoldCitation>,
    #[serde(default)]
    pub answer: String,
}

/// Reads a JSONL set; a bad line is an error naming file and line.
pub fn load_set(path: &Path) -> Result<Vec<EvalItem>, QueryError> {
    let text = std::fs::read_to_string(path).map_err(|e| QueryError::BadEvalSet {
        path: path.to_owned(),
        line: None,
        message: e.to_string(),
    })?;
    let mut items = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let item: EvalItem = serde_json::from_str(line).map_err(|e| QueryError::BadEvalSet {
            path: path.to_owned(),
            line: Some(i + 1),
            message: e.to_string(),
        })?;
        items.push(item);
    }
    Ok(items)
}

/// Maps gold citations to article IRIs of a build. An article counts as found when the
/// retrieved article is the gold one, or the same article (law and number) with the same
/// text in another version — retrieval searches the latest versions by default.
pub struct GoldMap {
    by_version_label: HashMap<(String, String), usize>,
    articles: Vec<ArticleRow>,
    file_to_version: HashMap<String, String>,
    equivalent: HashMap<(String, String), Vec<String>>,
    /// (work, label) → the article in every version, for [`GoldMatch::Number`].
    same_number: HashMap<(String, String), Vec<String>>,
    pub matching: GoldMatch,
}

/// When a retrieved article counts as the gold one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GoldMatch {
    /// The gold article, or the same article in another version with the same text.
    #[default]
    Text,
    /// The same law and article number in any version (what the eval pack's README
    /// allows when an index holds only current versions).
    Number,
}

/// Per item, per gold article: the IRIs that count as that article.
pub type GoldSets = Vec<Vec<HashSet<String>>>;

impl GoldMap {
    pub fn new(versions: &[LawVersionRow], articles: Vec<ArticleRow>) -> GoldMap {
        let mut file_to_version = HashMap::new();
        for v in versions {
            for f in &v.files {
                file_to_version.insert(f.clone(), v.iri.clone());
            }
        }
        let mut by_version_label = HashMap::new();
        let mut equivalent: HashMap<(String, String), Vec<String>> = HashMap::new();
        let mut same_number: HashMap<(String, String), Vec<String>> = HashMap::new();
        for (i, a) in articles.iter().enumerate() {
            by_version_label.insert((a.version_iri.clone(), a.label.clone()), i);
            same_number
                .entry((a.work_iri.clone(), a.label.clone()))
                .or_default()
                .push(a.iri.clone());
            equivalent
                .entry((a.work_iri.clone(), a.text_hash.clone()))
                .or_default()
                .push(a.iri.clone());
        }
        GoldMap {
            by_version_label,
            articles,
            file_to_version,
            equivalent,
            same_number,
            matching: GoldMatch::Text,
        }
    }

    /// The IRIs that satisfy one gold citation; an unmappable gold is an error naming it.
    pub fn resolve(&self, item: &EvalItem, gold: &GoldCitation) -> Result<Vec<String>, QueryError> {
        let unmappable = |why: &'static str| QueryError::UnmappableGold {
            item: item.id.clone(),
            law: gold.law.clone(),
            article: gold.article.clone(),
            file: gold.file.clone(),
            why,
        };
        let version = self
            .file_to_version
            .get(&gold.file)
            .ok_or_else(|| unmappable("is not in this store"))?;
        let &i = self
            .by_version_label
            .get(&(version.clone(), gold.article.clone()))
            .ok_or_else(|| unmappable("names no article of that version"))?;
        let a = &self.articles[i];
        let key = match self.matching {
            GoldMatch::Text => &self.equivalent,
            GoldMatch::Number => &self.same_number,
        };
        let second = match self.matching {
            GoldMatch::Text => a.text_hash.clone(),
            GoldMatch::Number => a.label.clone(),
        };
        Ok(key
            .get(&(a.work_iri.clone(), second))
            .cloned()
            .unwrap_or_else(|| vec![a.iri.clone()]))
    }

    /// One set of acceptable IRIs per gold article of each item; an unmappable gold
    /// article is an error naming it.
    pub fn gold_sets(&self, items: &[EvalItem]) -> Result<GoldSets, QueryError> {
        items.iter().map(|it| self.item_gold(it)).collect()
    }

    fn item_gold(&self, item: &EvalItem) -> Result<Vec<HashSet<String>>, QueryError> {
        item.gold
            .iter()
            .map(|g| self.resolve(item, g).map(|v| v.into_iter().collect()))
            .collect()
    }

    /// The items whose every gold article is in this build, with their gold sets (the
    /// paper's setting: a set's items on a smaller corpus). Items without gold articles
    /// are left out too.
    pub fn within_store(&self, items: Vec<EvalItem>) -> (Vec<EvalItem>, GoldSets) {
        let mut kept = Vec::new();
        let mut gold = Vec::new();
        for it in items {
            if let Ok(g) = self.item_gold(&it)
                && !g.is_empty()
            {
                kept.push(it);
                gold.push(g);
            }
        }
        (kept, gold)
    }
}

/// Retrieval metrics over a set.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RetrievalMetrics {
    /// Questions scored: those with at least one gold article.
    pub questions: usize,
    /// Questions without gold articles (kept in sets for answer scoring), left out.
    pub without_gold: usize,
    pub recall_at: BTreeMap<usize, f64>,
    pub mrr_at_10: f64,
    pub ndcg_at_10: f64,
    pub precision_at: BTreeMap<usize, f64>,
    pub f1_at: BTreeMap<usize, f64>,
}

/// `ranked[q]`: retrieved IRIs in rank order; `gold[q]`: one set of acceptable IRIs per
/// gold article. A question without gold articles (a definition or list question kept
/// for answer scoring) has nothing to retrieve and is left out of every average.
pub fn score(
    ranked: &[Vec<String>],
    gold: &[Vec<HashSet<String>>],
    ks: &[usize],
) -> RetrievalMetrics {
    let scored = gold.iter().filter(|g| !g.is_empty()).count();
    let n = scored.max(1) as f64;
    let mut m = RetrievalMetrics {
        questions: scored,
        without_gold: ranked.len() - scored,
        ..Default::default()
    };
    for (list, golds) in ranked.iter().zip(gold) {
        if golds.is_empty() {
            continue;
        }
        // The rank (0-based) at which each gold article is first found.
        let ranks: Vec<Option<usize>> = golds
            .iter()
            .map(|g| list.iter().position(|iri| g.contains(iri)))
            .collect();
        let g = golds.len().max(1) as f64;
        for &k in ks {
            let found = ranks.iter().filter(|r| r.is_some_and(|r| r < k)).count() as f64;
            let recall = found / g;
            let precision = found / (k.min(list.len()).max(1)) as f64;
            let f1 = if recall + precision > 0.0 {
                2.0 * recall * precision / (recall + precision)
            } else {
                0.0
            };
            *m.recall_at.entry(k).or_default() += recall / n;
            *m.precision_at.entry(k).or_default() += precision / n;
            *m.f1_at.entry(k).or_default() += f1 / n;
        }
        if let Some(first) = ranks.iter().flatten().min().filter(|&&r| r < 10) {
            m.mrr_at_10 += 1.0 / (*first as f64 + 1.0) / n;
        }
        let dcg: f64 = ranks
            .iter()
            .flatten()
            .filter(|&&r| r < 10)
            .map(|&r| 1.0 / ((r as f64) + 2.0).log2())
            .sum();
        let ideal: f64 = (0..golds.len().min(10))
            .map(|r| 1.0 / ((r as f64) + 2.0).log2())
            .sum();
        if ideal > 0.0 {
            m.ndcg_at_10 += dcg / ideal / n;
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(v: &[&str]) -> HashSet<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn metrics_on_a_hand_computed_example() {
        let ranked = vec![
            vec!["a".to_owned(), "x".to_owned(), "b".to_owned()],
            vec!["y".to_owned(), "z".to_owned()],
        ];
        let gold = vec![vec![set(&["a"]), set(&["b", "b-old"])], vec![set(&["c"])]];
        let m = score(&ranked, &gold, &[1, 3]);
        assert!((m.recall_at[&1] - 0.25).abs() < 1e-9); // q1: 1/2, q2: 0
        assert!((m.recall_at[&3] - 0.5).abs() < 1e-9); // q1: 2/2
        assert!((m.mrr_at_10 - 0.5).abs() < 1e-9);
        assert!((m.precision_at[&3] - (2.0 / 3.0) / 2.0).abs() < 1e-9);
        let ndcg_q1 = (1.0 + 1.0 / 4f64.log2()) / (1.0 + 1.0 / 3f64.log2());
        assert!((m.ndcg_at_10 - ndcg_q1 / 2.0).abs() < 1e-9);
        // A third question without gold articles changes no average.
        let mut ranked3 = ranked.clone();
        ranked3.push(vec!["a".to_owned()]);
        let mut gold3 = gold.clone();
        gold3.push(Vec::new());
        let m3 = score(&ranked3, &gold3, &[1, 3]);
        assert_eq!((m3.questions, m3.without_gold), (2, 1));
        assert_eq!(m3.recall_at, m.recall_at);
        assert_eq!(m3.precision_at, m.precision_at);
        assert!((m3.mrr_at_10 - m.mrr_at_10).abs() < 1e-12);
    }

    #[test]
    fn an_equivalent_older_version_counts() {
        let m = score(
            &[vec!["b-old".to_owned()]],
            &[vec![set(&["b", "b-old"])]],
            &[1],
        );
        assert_eq!(m.recall_at[&1], 1.0);
    }
}
