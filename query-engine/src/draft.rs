//! Draft-answer retrieval (HyDE): a chat model writes a short answer to the question, and
//! the articles near that draft's embedding join those near the question's. A layperson's
//! question names the situation; the draft names the law and the rule, which is what the
//! articles' text says. Measured with `coal eval retrieval --draft` (README).

use coal_models::ChatModel;
use rustc_hash::FxHashMap as HashMap;

use crate::QueryError;
use crate::retrieve::{Hit, ParagraphHit};

/// What the model is asked for: two or three sentences naming the law and the rule.
pub const DRAFT_SYSTEM: &str =
    "你是中国律师。用两三句话简要回答用户的法律问题，写出适用的法律名称和相关规定的内容。";

/// The draft is embedded up to this many characters (a small model may repeat itself
/// until its token limit).
const DRAFT_CHARS: usize = 300;

/// How drafts are made: the model, the draft's weight in the fused dense list and how
/// many questions are drafted side by side.
#[derive(Clone, Copy)]
pub struct Drafting<'a> {
    pub chat: &'a dyn ChatModel,
    /// w in (sim(question) + w·sim(draft)) / (1 + w).
    pub weight: f32,
    /// Questions drafted together ([`ChatModel::complete_many`]: a local model decodes
    /// them as one batch).
    pub batch: usize,
}

/// What is embedded of a reply.
fn cut(reply: &str) -> String {
    reply.trim().chars().take(DRAFT_CHARS).collect()
}

/// The model's draft answer to `question`, cut to what is embedded.
pub fn draft_answer(chat: &dyn ChatModel, question: &str) -> Result<String, QueryError> {
    Ok(cut(&chat.complete(DRAFT_SYSTEM, question)?))
}

/// Draft answers to `questions`, in order, generated side by side where the model can.
pub fn draft_answers(chat: &dyn ChatModel, questions: &[&str]) -> Result<Vec<String>, QueryError> {
    Ok(chat
        .complete_many(DRAFT_SYSTEM, questions)?
        .iter()
        .map(|r| cut(r))
        .collect())
}

/// Each key of either list scored (sim(question) + w·sim(draft)) / (1 + w), a key missing
/// from a list taking that list's lowest similarity, so the scores stay on the similarity
/// scale the re-ranking's features were fitted on; an empty list leaves the other as it
/// is. Unordered.
fn blend<'a>(
    question: &[(&'a str, f32)],
    draft: &[(&'a str, f32)],
    weight: f32,
) -> Vec<(&'a str, f32)> {
    if question.is_empty() || draft.is_empty() {
        return [question, draft].concat();
    }
    let floor = |l: &[(&str, f32)]| l.iter().map(|h| h.1).fold(f32::INFINITY, f32::min);
    let (q_floor, d_floor) = (floor(question), floor(draft));
    let q: HashMap<&str, f32> = question.iter().copied().collect();
    let d: HashMap<&str, f32> = draft.iter().copied().collect();
    let keys: rustc_hash::FxHashSet<&str> = q.keys().chain(d.keys()).copied().collect();
    keys.into_iter()
        .map(|k| {
            let sq = q.get(k).copied().unwrap_or(q_floor);
            let sd = d.get(k).copied().unwrap_or(d_floor);
            (k, (sq + weight * sd) / (1.0 + weight))
        })
        .collect()
}

fn hit_pairs(l: &[Hit]) -> Vec<(&str, f32)> {
    l.iter().map(|h| (h.iri.as_str(), h.score)).collect()
}

fn paragraph_pairs(l: &[ParagraphHit]) -> Vec<(&str, f32)> {
    l.iter().map(|p| (p.iri.as_str(), p.score)).collect()
}

/// The question's and the draft's dense lists as one ([`blend`]). Best first (ties by
/// IRI), at most `k`.
pub fn fuse_with_draft(question: &[Hit], draft: &[Hit], weight: f32, k: usize) -> Vec<Hit> {
    let (q, d) = (hit_pairs(question), hit_pairs(draft));
    // ranked_dense_hits orders them (score, then IRI).
    let scored = blend(&q, &d, weight)
        .into_iter()
        .map(|(iri, s)| (iri.to_owned(), s));
    crate::retrieve::ranked_dense_hits(scored, k)
}

/// The question's and the draft's 款 lists as one, as [`fuse_with_draft`] does articles:
/// tier 3 blends each article's similarity with its best 款's, and a drafted article list
/// beside 款 ranked by the question alone would mix two scales. (Where the article vectors
/// already score an article by its best 款, the default build, the blend changes no
/// ranking; it matters for builds with whole-article vectors.) Best first (ties by IRI),
/// at most `k`.
pub fn fuse_paragraphs_with_draft(
    question: &[ParagraphHit],
    draft: &[ParagraphHit],
    weight: f32,
    k: usize,
) -> Vec<ParagraphHit> {
    let article: HashMap<&str, &str> = question
        .iter()
        .chain(draft)
        .map(|p| (p.iri.as_str(), p.article.as_str()))
        .collect();
    let (q, d) = (paragraph_pairs(question), paragraph_pairs(draft));
    let mut out: Vec<ParagraphHit> = blend(&q, &d, weight)
        .into_iter()
        .map(|(iri, score)| ParagraphHit {
            iri: iri.to_owned(),
            article: article[iri].to_owned(),
            score,
        })
        .collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.iri.cmp(&b.iri)));
    out.truncate(k);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(iri: &str, score: f32) -> Hit {
        Hit {
            iri: iri.to_owned(),
            score,
            bm25: None,
            dense: Some(score),
        }
    }

    #[test]
    fn an_article_near_the_draft_overtakes_one_near_the_question_alone() {
        let question = [hit("a", 0.90), hit("b", 0.86), hit("c", 0.80)];
        let draft = [hit("b", 0.95), hit("d", 0.93), hit("a", 0.70)];
        let fused = fuse_with_draft(&question, &draft, 1.0, 10);
        let order: Vec<&str> = fused.iter().map(|h| h.iri.as_str()).collect();
        // b (.86+.95)/2 = .905; d (.80 floor + .93)/2 = .865; a (.90+.70)/2 = .80;
        // c (.80 + .70 floor)/2 = .75.
        assert_eq!(order, ["b", "d", "a", "c"]);
        assert!((fused[0].score - 0.905).abs() < 1e-6);
        // Weight 0 is the question's list (its order; the draft's articles at its floor).
        let alone = fuse_with_draft(&question, &draft, 0.0, 3);
        let order: Vec<&str> = alone.iter().map(|h| h.iri.as_str()).collect();
        assert_eq!(order, ["a", "b", "c"]);
        assert_eq!(fuse_with_draft(&question, &draft, 1.0, 2).len(), 2);
    }

    #[test]
    fn an_empty_draft_list_leaves_the_question_order() {
        let question = [hit("a", 0.9), hit("b", 0.8)];
        let fused = fuse_with_draft(&question, &[], 1.0, 10);
        let order: Vec<&str> = fused.iter().map(|h| h.iri.as_str()).collect();
        assert_eq!(order, ["a", "b"]);
        assert_eq!(fused[0].score, 0.9);
    }

    #[test]
    fn paragraphs_fuse_like_articles_and_keep_their_article() {
        let par = |iri: &str, article: &str, score: f32| ParagraphHit {
            iri: iri.to_owned(),
            article: article.to_owned(),
            score,
        };
        let question = [par("a/par_1", "a", 0.90), par("b/par_2", "b", 0.80)];
        let draft = [par("b/par_2", "b", 0.96), par("c/par_1", "c", 0.94)];
        let fused = fuse_paragraphs_with_draft(&question, &draft, 1.0, 10);
        let got: Vec<(&str, &str)> = fused
            .iter()
            .map(|p| (p.iri.as_str(), p.article.as_str()))
            .collect();
        // b (.80+.96)/2 = .88; c (.80 floor + .94)/2 = .87; a (.90 + .94 floor)/2 = .92.
        assert_eq!(got, [("a/par_1", "a"), ("b/par_2", "b"), ("c/par_1", "c")]);
        assert!((fused[1].score - 0.88).abs() < 1e-6);
        assert_eq!(
            fuse_paragraphs_with_draft(&question, &draft, 1.0, 1).len(),
            1
        );
        assert_eq!(fuse_paragraphs_with_draft(&question, &[], 1.0, 10).len(), 2);
    }
}
