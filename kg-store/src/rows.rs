//! The metadata rows as plain values: what a build writes and a reader gets back. The
//! sea-orm entities behind them (`meta`) and the async runtime they need stay inside
//! this crate; [`Metadata`] is the blocking reader.

use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter};
use serde::{Deserialize, Serialize};

use crate::error::{Result, StoreError};
use crate::meta;

/// A law (its work, across versions).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LawRow {
    pub iri: String,
    pub short_name: String,
    pub title: String,
    pub version_count: i32,
}

/// One version of a law.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LawVersionRow {
    pub iri: String,
    pub law_iri: String,
    pub title: String,
    pub version_date: Option<String>,
    pub valid_until: Option<String>,
    pub content_hash: String,
    /// Source files, relative to the corpus root.
    pub files: Vec<String>,
    pub article_count: i32,
}

/// One article of one version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArticleRow {
    pub iri: String,
    pub work_iri: String,
    pub law_iri: String,
    pub version_iri: String,
    pub label: String,
    pub number: i32,
    pub suffix: i32,
    pub hierarchy_path: String,
    pub text_hash: String,
    pub source_file: String,
    pub source_line: i32,
}

impl From<meta::law::Model> for LawRow {
    fn from(m: meta::law::Model) -> LawRow {
        LawRow {
            iri: m.iri,
            short_name: m.short_name,
            title: m.title,
            version_count: m.version_count,
        }
    }
}

impl From<meta::law_version::Model> for LawVersionRow {
    fn from(m: meta::law_version::Model) -> LawVersionRow {
        LawVersionRow {
            iri: m.iri,
            law_iri: m.law_iri,
            title: m.title,
            version_date: m.version_date,
            valid_until: m.valid_until,
            content_hash: m.content_hash,
            files: m
                .files
                .split(';')
                .filter(|f| !f.is_empty())
                .map(str::to_owned)
                .collect(),
            article_count: m.article_count,
        }
    }
}

impl From<meta::article::Model> for ArticleRow {
    fn from(m: meta::article::Model) -> ArticleRow {
        ArticleRow {
            iri: m.iri,
            work_iri: m.work_iri,
            law_iri: m.law_iri,
            version_iri: m.version_iri,
            label: m.label,
            number: m.number,
            suffix: m.suffix,
            hierarchy_path: m.hierarchy_path,
            text_hash: m.text_hash,
            source_file: m.source_file,
            source_line: m.source_line,
        }
    }
}

/// Beside each build (`metadata-laws.json`): the digest of every law's rows, so that the
/// next build copies the rows of unchanged laws inside the database instead of sending
/// them again.
pub const LAWS_FILE: &str = "metadata-laws.json";

/// Past this many changed or removed laws, every row is sent (the copy's `NOT IN` list
/// stays short).
const MAX_LAWS_EXCEPTED: usize = 500;

/// Each law's rows' digest, by work IRI.
type LawDigests = std::collections::BTreeMap<String, String>;

fn law_digests(laws: &[LawRow], versions: &[LawVersionRow], articles: &[ArticleRow]) -> LawDigests {
    use sha2::{Digest, Sha256};
    fn feed<'r, T: Serialize>(
        hashers: &mut std::collections::BTreeMap<&'r str, Sha256>,
        law: &'r str,
        row: &T,
    ) {
        let h = hashers.entry(law).or_default();
        h.update(serde_json::to_vec(row).expect("rows serialize"));
        h.update([0x1e]);
    }
    let mut hashers = std::collections::BTreeMap::new();
    for r in laws {
        feed(&mut hashers, &r.iri, r);
    }
    for r in versions {
        feed(&mut hashers, &r.law_iri, r);
    }
    for r in articles {
        feed(&mut hashers, &r.law_iri, r);
    }
    hashers
        .into_iter()
        .map(|(law, h)| (law.to_owned(), hex::encode(h.finalize())))
        .collect()
}

fn read_digests(build_dir: &std::path::Path) -> Option<LawDigests> {
    serde_json::from_slice(&std::fs::read(build_dir.join(LAWS_FILE)).ok()?).ok()
}

/// Where a build's rows may come from besides the build itself.
pub(crate) struct RowsBase<'a> {
    pub id: &'a str,
    pub dir: &'a std::path::Path,
}

/// Writes a build's rows. With a base build whose digests are on record, the rows of
/// every law whose rows are the same are copied from the base's inside the database
/// (`INSERT … SELECT`), and only the others are sent. Returns how many laws were copied
/// (`None`: every row was sent).
pub(crate) async fn insert_reusing(
    db: &DatabaseConnection,
    build: &str,
    build_dir: &std::path::Path,
    base: Option<RowsBase<'_>>,
    laws: Vec<LawRow>,
    versions: Vec<LawVersionRow>,
    articles: Vec<ArticleRow>,
) -> Result<Option<usize>> {
    let digests = law_digests(&laws, &versions, &articles);
    let path = build_dir.join(LAWS_FILE);
    let json = serde_json::to_vec(&digests).map_err(|e| StoreError::Serialize(e.to_string()))?;
    let base_digests = base.as_ref().and_then(|b| read_digests(b.dir));
    let copied = match (base, base_digests) {
        (Some(base), Some(before)) => {
            let stale: Vec<String> = before
                .iter()
                .filter(|(law, d)| digests.get(*law) != Some(*d))
                .map(|(law, _)| law.clone())
                .collect();
            let kept: std::collections::HashSet<&str> = digests
                .iter()
                .filter(|(law, d)| before.get(*law) == Some(*d))
                .map(|(law, _)| law.as_str())
                .collect();
            let expected = laws
                .iter()
                .filter(|r| kept.contains(r.iri.as_str()))
                .count()
                + versions
                    .iter()
                    .filter(|r| kept.contains(r.law_iri.as_str()))
                    .count()
                + articles
                    .iter()
                    .filter(|r| kept.contains(r.law_iri.as_str()))
                    .count();
            if stale.len() <= MAX_LAWS_EXCEPTED
                && copy_rows(db, base.id, build, &stale).await? == expected as u64
            {
                let n = kept.len();
                insert(
                    db,
                    build,
                    laws.into_iter()
                        .filter(|r| !kept.contains(r.iri.as_str()))
                        .collect(),
                    versions
                        .into_iter()
                        .filter(|r| !kept.contains(r.law_iri.as_str()))
                        .collect(),
                    articles
                        .into_iter()
                        .filter(|r| !kept.contains(r.law_iri.as_str()))
                        .collect(),
                )
                .await?;
                Some(n)
            } else {
                // The base's rows are not where its record says (another database, or
                // removed by hand): send everything.
                crate::builds::forget_rows(db, &[build.to_owned()]).await?;
                insert(db, build, laws, versions, articles).await?;
                None
            }
        }
        _ => {
            insert(db, build, laws, versions, articles).await?;
            None
        }
    };
    std::fs::write(&path, json).map_err(|e| StoreError::io(&path, e))?;
    Ok(copied)
}

/// Copies the base build's law, version and article rows of every law but `except` (work
/// IRIs) to `build`, in one transaction. Returns the number of rows copied.
async fn copy_rows(
    db: &DatabaseConnection,
    base: &str,
    build: &str,
    except: &[String],
) -> Result<u64> {
    use sea_orm::sea_query::{Expr, ExprTrait, Query};
    use sea_orm::{ConnectionTrait, Iterable, TransactionTrait};
    let txn = db.begin().await?;
    let mut copied = 0;
    macro_rules! copy {
        ($entity:path, $columns:path, $law:expr) => {{
            // Every column but the row id, the build's id replaced.
            let columns: Vec<_> = <$columns>::iter()
                .filter(|c| !matches!(c, <$columns>::Id))
                .collect();
            let mut select = Query::select();
            for c in &columns {
                match c {
                    <$columns>::BuildId => select.expr(Expr::val(build)),
                    c => select.column(*c),
                };
            }
            select
                .from($entity)
                .and_where(Expr::col(<$columns>::BuildId).eq(base));
            if !except.is_empty() {
                select.and_where(Expr::col($law).is_not_in(except.iter().cloned()));
            }
            let insert = Query::insert()
                .into_table($entity)
                .columns(columns.clone())
                .select_from(select)
                .map_err(|e| StoreError::Db(sea_orm::DbErr::Custom(e.to_string())))?
                .to_owned();
            copied += txn.execute(&insert).await?.rows_affected();
        }};
    }
    copy!(meta::law::Entity, meta::law::Column, meta::law::Column::Iri);
    copy!(
        meta::law_version::Entity,
        meta::law_version::Column,
        meta::law_version::Column::LawIri
    );
    copy!(
        meta::article::Entity,
        meta::article::Column,
        meta::article::Column::LawIri
    );
    txn.commit().await?;
    Ok(copied)
}

/// Writes a build's rows (inside the build's own writer).
async fn insert(
    db: &DatabaseConnection,
    build: &str,
    laws: Vec<LawRow>,
    versions: Vec<LawVersionRow>,
    articles: Vec<ArticleRow>,
) -> Result<()> {
    use sea_orm::ActiveValue::{NotSet, Set};
    let b = || Set(build.to_owned());
    meta::insert_all(
        db,
        laws.into_iter()
            .map(|r| meta::law::ActiveModel {
                id: NotSet,
                build_id: b(),
                iri: Set(r.iri),
                short_name: Set(r.short_name),
                title: Set(r.title),
                version_count: Set(r.version_count),
            })
            .collect(),
    )
    .await?;
    meta::insert_all(
        db,
        versions
            .into_iter()
            .map(|r| meta::law_version::ActiveModel {
                id: NotSet,
                build_id: b(),
                iri: Set(r.iri),
                law_iri: Set(r.law_iri),
                title: Set(r.title),
                version_date: Set(r.version_date),
                valid_until: Set(r.valid_until),
                content_hash: Set(r.content_hash),
                files: Set(r.files.join(";")),
                article_count: Set(r.article_count),
            })
            .collect(),
    )
    .await?;
    meta::insert_all(
        db,
        articles
            .into_iter()
            .map(|r| meta::article::ActiveModel {
                id: NotSet,
                build_id: b(),
                iri: Set(r.iri),
                work_iri: Set(r.work_iri),
                law_iri: Set(r.law_iri),
                version_iri: Set(r.version_iri),
                label: Set(r.label),
                number: Set(r.number),
                suffix: Set(r.suffix),
                hierarchy_path: Set(r.hierarchy_path),
                text_hash: Set(r.text_hash),
                source_file: Set(r.source_file),
                source_line: Set(r.source_line),
            })
            .collect(),
    )
    .await
}

/// The metadata of one build, read without an async runtime of the caller's.
pub struct Metadata {
    runtime: tokio::runtime::Runtime,
    db: DatabaseConnection,
    build: String,
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| StoreError::Io {
            path: "(async runtime)".into(),
            source: e,
        })
}

impl Metadata {
    pub(crate) fn open(url: &str, build: &str) -> Result<Metadata> {
        let runtime = runtime()?;
        let db = runtime.block_on(meta::connect(url))?;
        Ok(Metadata {
            runtime,
            db,
            build: build.to_owned(),
        })
    }

    /// Laws (works) of the build.
    pub fn laws(&self) -> Result<Vec<LawRow>> {
        let rows = self.runtime.block_on(
            meta::law::Entity::find()
                .filter(meta::law::Column::BuildId.eq(self.build.clone()))
                .all(&self.db),
        )?;
        Ok(rows.into_iter().map(LawRow::from).collect())
    }

    /// Law versions of the build.
    pub fn law_versions(&self) -> Result<Vec<LawVersionRow>> {
        let rows = self.runtime.block_on(
            meta::law_version::Entity::find()
                .filter(meta::law_version::Column::BuildId.eq(self.build.clone()))
                .all(&self.db),
        )?;
        Ok(rows.into_iter().map(LawVersionRow::from).collect())
    }

    /// Articles of the build, optionally of one law (its work IRI).
    pub fn articles(&self, law_iri: Option<&str>) -> Result<Vec<ArticleRow>> {
        let mut q = meta::article::Entity::find()
            .filter(meta::article::Column::BuildId.eq(self.build.clone()));
        if let Some(law) = law_iri {
            q = q.filter(meta::article::Column::LawIri.eq(law));
        }
        let rows = self.runtime.block_on(q.all(&self.db))?;
        Ok(rows.into_iter().map(ArticleRow::from).collect())
    }
}

/// Forgets removed builds' rows in the database at `url`, blocking.
pub(crate) fn forget_builds_blocking(url: &str, ids: &[String]) -> Result<()> {
    let runtime = runtime()?;
    runtime.block_on(async {
        let db = meta::connect(url).await?;
        crate::builds::forget_builds(&db, ids).await
    })
}
