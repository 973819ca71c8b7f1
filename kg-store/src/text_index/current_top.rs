//! Top-k BM25 documents among current versions, with tantivy's Block-WAND kept.
//!
//! A filter clause (`+query +latest:1`) makes tantivy's Boolean scorer an intersection,
//! which it scores exhaustively: every document matching any question term is visited.
//! On the whole corpus (~240k articles, most questions matching a large share of them)
//! that was most of a BM25 search. This collector runs the plain disjunction through
//! `Weight::for_each_pruning` (Block-WAND for a union of terms) and skips old versions in
//! its callback, the way tantivy's own top-k collector skips deleted documents: a
//! skipped document never raises the threshold, so pruning stays exact.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use tantivy::collector::{Collector, SegmentCollector};
use tantivy::postings::SegmentPostings;
use tantivy::query::Weight;
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{DocAddress, DocId, DocSet, Score, SegmentOrdinal, SegmentReader, TERMINATED, Term};

/// The `k` best-scoring documents, leaving out those whose `latest` field is "0" when
/// `current_only`. Ties go to the lower document address, as with tantivy's `TopDocs`.
pub(super) struct CurrentTopDocs {
    pub k: usize,
    pub latest: Field,
    pub current_only: bool,
}

/// A document with its score, ordered best first for a min-heap of `Reverse`s.
#[derive(Debug, Clone, Copy)]
struct Scored {
    score: Score,
    doc: DocId,
}

impl PartialEq for Scored {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Scored {}
impl PartialOrd for Scored {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Scored {
    /// Greater is better: a higher score, then a lower document id.
    fn cmp(&self, other: &Self) -> Ordering {
        self.score
            .total_cmp(&other.score)
            .then_with(|| other.doc.cmp(&self.doc))
    }
}

pub(super) struct SegmentTop {
    k: usize,
    segment: SegmentOrdinal,
    /// The segment's old versions, visited in step with the ascending documents.
    old: Option<SegmentPostings>,
    heap: BinaryHeap<Reverse<Scored>>,
}

impl SegmentTop {
    fn is_old(&mut self, doc: DocId) -> bool {
        match &mut self.old {
            Some(old) => {
                if old.doc() < doc {
                    old.seek(doc);
                }
                old.doc() == doc
            }
            None => false,
        }
    }

    /// Offers a document (in ascending order) and returns the score a document must
    /// beat to enter.
    fn offer(&mut self, doc: DocId, score: Score) -> Score {
        if !self.is_old(doc) {
            if self.heap.len() < self.k {
                self.heap.push(Reverse(Scored { score, doc }));
            } else if self.heap.peek().is_some_and(|w| score > w.0.score) {
                self.heap.pop();
                self.heap.push(Reverse(Scored { score, doc }));
            }
        }
        self.threshold()
    }

    fn threshold(&self) -> Score {
        match self.heap.peek() {
            Some(worst) if self.heap.len() >= self.k => worst.0.score,
            _ => Score::MIN,
        }
    }
}

impl SegmentCollector for SegmentTop {
    type Fruit = Vec<(Score, DocAddress)>;

    fn collect(&mut self, doc: DocId, score: Score) {
        self.offer(doc, score);
    }

    fn harvest(self) -> Self::Fruit {
        let segment = self.segment;
        self.heap
            .into_iter()
            .map(|Reverse(s)| (s.score, DocAddress::new(segment, s.doc)))
            .collect()
    }
}

impl Collector for CurrentTopDocs {
    type Fruit = Vec<(Score, DocAddress)>;
    type Child = SegmentTop;

    fn for_segment(
        &self,
        segment: SegmentOrdinal,
        reader: &SegmentReader,
    ) -> tantivy::Result<SegmentTop> {
        let old = if self.current_only {
            let term = Term::from_field_text(self.latest, "0");
            reader
                .inverted_index(self.latest)?
                .read_postings(&term, IndexRecordOption::Basic)?
        } else {
            None
        };
        Ok(SegmentTop {
            k: self.k.max(1),
            segment,
            old: old.filter(|p| p.doc() != TERMINATED),
            heap: BinaryHeap::new(),
        })
    }

    fn requires_scoring(&self) -> bool {
        true
    }

    fn merge_fruits(&self, fruits: Vec<Self::Fruit>) -> tantivy::Result<Self::Fruit> {
        let mut all: Vec<(Score, DocAddress)> = fruits.into_iter().flatten().collect();
        all.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        all.truncate(self.k.max(1));
        Ok(all)
    }

    fn collect_segment(
        &self,
        weight: &dyn Weight,
        segment: u32,
        reader: &SegmentReader,
    ) -> tantivy::Result<Self::Fruit> {
        let mut top = self.for_segment(segment, reader)?;
        let alive = reader.alive_bitset();
        weight.for_each_pruning(Score::MIN, reader, &mut |doc, score| {
            if alive.is_some_and(|a| a.is_deleted(doc)) {
                return top.threshold();
            }
            top.offer(doc, score)
        })?;
        Ok(top.harvest())
    }
}
