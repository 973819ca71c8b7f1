//! Writing a build's BM25 index, whole or as a change of the base build's.
//!
//! The laws are split into a fixed number of groups (by a hash of their work IRI) and
//! each group is written as its own segment, never merged with another group's. An
//! incremental build copies the base index (its segment files are immutable: hard links)
//! and rewrites only the groups holding a changed, added or removed law: it deletes all
//! of such a group's documents, so that its old segment disappears whole, and indexes the
//! group again. Deleting only the changed law's documents would leave a segment with
//! deleted documents, and tantivy's merge of such a segment estimates its token count
//! from the lossy field norms: the BM25 scores would drift from a fresh index's. This
//! way every segment's statistics are exact, and an extended index scores every article
//! exactly as one written from scratch.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use tantivy::index::SegmentId;
use tantivy::{Index, IndexWriter, TantivyDocument, Term};

use super::{Fields, IndexedArticle, bigram_text, register_tokenizer, schema, tantivy_err};
use crate::error::{Result, StoreError};

/// Beside the index (`bm25-laws.json` in the build folder): the number of groups and each
/// law's versions and digest of its indexed articles.
const LAWS_FILE: &str = "bm25-laws.json";

/// Bumped when the file's meaning or the grouping changes: a base with another format is
/// not extended.
const LAWS_FORMAT: u32 = 2;

/// A group of about this many articles, at most [`MAX_GROUPS`] groups: a change re-indexes
/// one group (an eighth of the whole corpus, ~18k articles, a few seconds), and a search
/// visits one segment per group. Measured on the whole corpus (`coal eval retrieval
/// --bm25-only`, four dev sets): 15 groups made BM25 1.2-1.4x and bigram search 1.6x
/// slower than tantivy's own merging (4 segments), for 2.5 s per rebuild.
const ARTICLES_PER_GROUP: usize = 20_000;
const MAX_GROUPS: usize = 8;

/// Files of a tantivy index that change in place; the rest (segment files) never do.
const MUTABLE_FILES: [&str; 2] = ["meta.json", ".managed.json"];

/// One law's articles, every version's, as the index gets them.
pub struct LawArticles {
    /// The law's work IRI.
    pub work: String,
    pub versions: Vec<String>,
    pub articles: Vec<IndexedArticle>,
}

#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
struct IndexedLaws {
    format: u32,
    groups: usize,
    /// Work IRI → its entry.
    laws: BTreeMap<String, IndexedLaw>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
struct IndexedLaw {
    digest: String,
    versions: Vec<String>,
}

impl IndexedLaws {
    fn path(index: &Path) -> PathBuf {
        index.parent().unwrap_or(index).join(LAWS_FILE)
    }

    /// `None` when the file is missing or of another format.
    fn read(index: &Path) -> Option<IndexedLaws> {
        let laws: IndexedLaws =
            serde_json::from_slice(&std::fs::read(Self::path(index)).ok()?).ok()?;
        (laws.format == LAWS_FORMAT && laws.groups > 0).then_some(laws)
    }

    fn write(&self, index: &Path) -> Result<()> {
        let path = Self::path(index);
        let json = serde_json::to_vec(self).map_err(|e| StoreError::Serialize(e.to_string()))?;
        std::fs::write(&path, json).map_err(|e| StoreError::io(&path, e))
    }

    /// The laws of one group.
    fn group(&self, group: usize) -> BTreeMap<&str, &IndexedLaw> {
        self.laws
            .iter()
            .filter(|(work, _)| group_of(work, self.groups) == group)
            .map(|(w, l)| (w.as_str(), l))
            .collect()
    }
}

/// A law's group: a hash of its work IRI (stable across builds and machines).
pub(super) fn group_of(work: &str, groups: usize) -> usize {
    use sha2::{Digest, Sha256};
    let h = Sha256::digest(work.as_bytes());
    (u64::from_le_bytes(h[..8].try_into().expect("8 bytes")) % groups as u64) as usize
}

/// The digest of a law's indexed articles: every stored field of every article, in order.
fn articles_digest(articles: &[IndexedArticle]) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for a in articles {
        for field in [
            &a.iri,
            &a.version_iri,
            &a.law_title,
            &a.version_date,
            &a.label,
            &a.hierarchy,
            &a.text,
        ] {
            h.update(field.as_bytes());
            h.update([0x1f]);
        }
        h.update([u8::from(a.latest), 0x1e]);
    }
    hex::encode(h.finalize())
}

/// Writes a build's index: a fresh one, or a copy of the base build's to change.
pub struct TextIndexWriter {
    writer: IndexWriter,
    fields: Fields,
    path: PathBuf,
    /// What the base index holds (no laws for a fresh index).
    base_laws: IndexedLaws,
    /// What this index holds.
    laws: IndexedLaws,
    /// Which groups were put.
    put: Vec<bool>,
}

impl TextIndexWriter {
    /// A fresh index for about `articles` articles.
    pub fn create(path: &Path, articles: usize) -> Result<TextIndexWriter> {
        Self::create_with_groups(
            path,
            articles.div_ceil(ARTICLES_PER_GROUP).clamp(1, MAX_GROUPS),
        )
    }

    /// A fresh index whose laws fall into `groups` groups.
    pub fn create_with_groups(path: &Path, groups: usize) -> Result<TextIndexWriter> {
        std::fs::create_dir_all(path).map_err(|e| StoreError::io(path, e))?;
        let (schema, fields) = schema();
        let index = Index::create_in_dir(path, schema).map_err(tantivy_err(path))?;
        let laws = IndexedLaws {
            format: LAWS_FORMAT,
            groups: groups.max(1),
            laws: BTreeMap::new(),
        };
        Self::open_writer(index, fields, path, laws.clone(), laws)
    }

    /// Starts from the index of another build at `base`, for an incremental build (see
    /// the module's comment). Segment files are hard links to the base's (copies where
    /// links fail); the meta files are copied. `None` when the base index was written with
    /// another schema or grouping, or without its record of what it holds.
    pub fn extend(base: &Path, path: &Path) -> Result<Option<TextIndexWriter>> {
        let Some(base_laws) = IndexedLaws::read(base) else {
            return Ok(None);
        };
        std::fs::create_dir_all(path).map_err(|e| StoreError::io(path, e))?;
        for entry in std::fs::read_dir(base).map_err(|e| StoreError::io(base, e))? {
            let entry = entry.map_err(|e| StoreError::io(base, e))?;
            let name = entry.file_name();
            let Some(text) = name.to_str() else { continue };
            if text.starts_with(".tantivy") {
                continue; // the base writer's lock files
            }
            let (from, to) = (entry.path(), path.join(&name));
            let linked = !MUTABLE_FILES.contains(&text) && std::fs::hard_link(&from, &to).is_ok();
            if !linked {
                std::fs::copy(&from, &to).map_err(|e| StoreError::io(&from, e))?;
            }
        }
        let index = Index::open_in_dir(path).map_err(tantivy_err(path))?;
        let (schema, fields) = schema();
        if index.schema() != schema {
            return Ok(None);
        }
        let laws = IndexedLaws {
            format: LAWS_FORMAT,
            groups: base_laws.groups,
            laws: BTreeMap::new(),
        };
        Self::open_writer(index, fields, path, base_laws, laws).map(Some)
    }

    fn open_writer(
        index: Index,
        fields: Fields,
        path: &Path,
        base_laws: IndexedLaws,
        laws: IndexedLaws,
    ) -> Result<TextIndexWriter> {
        register_tokenizer(&index);
        let writer: IndexWriter = index.writer(64_000_000).map_err(tantivy_err(path))?;
        // Segments are merged only within a group, by `put_group`.
        writer.set_merge_policy(Box::new(tantivy::indexer::NoMergePolicy));
        Ok(TextIndexWriter {
            writer,
            fields,
            path: path.to_owned(),
            base_laws,
            put: vec![false; laws.groups],
            laws,
        })
    }

    /// How many groups the laws fall into; every one must be put, in any order.
    pub fn groups(&self) -> usize {
        self.laws.groups
    }

    /// The group of a law (its work IRI).
    pub fn group_of(&self, work: &str) -> usize {
        group_of(work, self.laws.groups)
    }

    /// Indexes one group's laws (all of them, perhaps none), unless the base index holds
    /// exactly these; otherwise the base's documents of the group are deleted (its segment
    /// goes whole) and the group is indexed again, into one segment. Returns whether the
    /// group was written.
    pub fn put_group(&mut self, group: usize, laws: Vec<LawArticles>) -> Result<bool> {
        if group >= self.laws.groups {
            return Err(StoreError::TextIndex(format!(
                "{}: group {group} of {}",
                self.path.display(),
                self.laws.groups
            )));
        }
        let entries: BTreeMap<String, IndexedLaw> = laws
            .iter()
            .map(|l| {
                debug_assert_eq!(
                    self.group_of(&l.work),
                    group,
                    "{} put in group {group}",
                    l.work
                );
                let entry = IndexedLaw {
                    digest: articles_digest(&l.articles),
                    versions: l.versions.clone(),
                };
                (l.work.clone(), entry)
            })
            .collect();
        let before = self.base_laws.group(group);
        let same = before.len() == entries.len()
            && entries
                .iter()
                .all(|(w, e)| before.get(w.as_str()) == Some(&e));
        if !same {
            let old_versions: Vec<String> = before
                .values()
                .flat_map(|l| l.versions.iter().cloned())
                .collect();
            self.rewrite_group(&old_versions, &laws)?;
        }
        self.laws.laws.extend(entries);
        self.put[group] = true;
        Ok(!same)
    }

    fn rewrite_group(&mut self, old_versions: &[String], laws: &[LawArticles]) -> Result<()> {
        for v in old_versions {
            self.writer
                .delete_term(Term::from_field_text(self.fields.version_iri, v));
        }
        let segments_before = self.segment_ids()?;
        for law in laws {
            for a in &law.articles {
                self.add(a)?;
            }
        }
        // The commit drops the group's old segment (all its documents deleted) and writes
        // the new documents, one segment per indexing thread: merged into one.
        let path = self.path.clone();
        let err = tantivy_err(&path);
        self.writer.commit().map_err(&err)?;
        let new: Vec<SegmentId> = self
            .segment_ids()?
            .into_iter()
            .filter(|s| !segments_before.contains(s))
            .collect();
        if new.len() > 1 {
            self.writer.merge(&new).wait().map_err(&err)?;
        }
        Ok(())
    }

    fn segment_ids(&self) -> Result<HashSet<SegmentId>> {
        Ok(self
            .writer
            .index()
            .searchable_segment_ids()
            .map_err(tantivy_err(&self.path))?
            .into_iter()
            .collect())
    }

    fn add(&mut self, a: &IndexedArticle) -> Result<()> {
        let f = self.fields;
        let mut doc = TantivyDocument::default();
        doc.add_text(f.iri, &a.iri);
        doc.add_text(f.version_iri, &a.version_iri);
        doc.add_text(f.law_title, &a.law_title);
        doc.add_text(f.version_date, &a.version_date);
        doc.add_text(f.label, &a.label);
        doc.add_text(f.hierarchy, &a.hierarchy);
        doc.add_text(f.text, &a.text);
        doc.add_text(f.latest, if a.latest { "1" } else { "0" });
        if let Some(bigrams) = f.bigrams {
            doc.add_text(bigrams, bigram_text(a));
        }
        self.writer
            .add_document(doc)
            .map_err(tantivy_err(&self.path))?;
        Ok(())
    }

    /// Commits and records what the index holds. Every group must have been put: a group
    /// left out would keep the base's documents without a record of them.
    pub fn commit(mut self) -> Result<()> {
        if let Some(g) = self.put.iter().position(|p| !p) {
            return Err(StoreError::TextIndex(format!(
                "{}: group {g} of {} was never put",
                self.path.display(),
                self.laws.groups
            )));
        }
        let err = tantivy_err(&self.path);
        self.writer.commit().map_err(&err)?;
        self.writer.wait_merging_threads().map_err(&err)?;
        self.laws.write(&self.path)
    }
}
