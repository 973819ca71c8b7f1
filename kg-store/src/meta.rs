//! The metadata database (sea-orm: SQLite by default, PostgreSQL or MySQL by URL).
//! Every row carries the build that wrote it, so a running build never disturbs the
//! rows readers use.

use sea_orm::{ConnectOptions, Database, DatabaseConnection, EntityTrait, TransactionTrait};
use sea_orm_migration::prelude::*;

use crate::error::{Result, StoreError};

pub mod build {
    use sea_orm::entity::prelude::*;
    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "build")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: String,
        pub started_at: String,
        pub finished_at: Option<String>,
        /// running | committed | failed
        pub status: String,
        pub corpus: String,
        #[sea_orm(column_type = "Text")]
        pub summary: String,
    }
    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}
    impl ActiveModelBehavior for ActiveModel {}
}

pub mod law {
    use sea_orm::entity::prelude::*;
    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "law")]
    pub struct Model {
        #[sea_orm(primary_key)]
        pub id: i64,
        #[sea_orm(indexed)]
        pub build_id: String,
        pub iri: String,
        pub short_name: String,
        pub title: String,
        pub version_count: i32,
    }
    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}
    impl ActiveModelBehavior for ActiveModel {}
}

pub mod law_version {
    use sea_orm::entity::prelude::*;
    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "law_version")]
    pub struct Model {
        #[sea_orm(primary_key)]
        pub id: i64,
        #[sea_orm(indexed)]
        pub build_id: String,
        pub iri: String,
        pub law_iri: String,
        pub title: String,
        pub version_date: Option<String>,
        pub valid_until: Option<String>,
        pub content_hash: String,
        /// Source files, `;`-separated, relative to the corpus root.
        #[sea_orm(column_type = "Text")]
        pub files: String,
        pub article_count: i32,
    }
    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}
    impl ActiveModelBehavior for ActiveModel {}
}

pub mod article {
    use sea_orm::entity::prelude::*;
    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "article")]
    pub struct Model {
        #[sea_orm(primary_key)]
        pub id: i64,
        #[sea_orm(indexed)]
        pub build_id: String,
        pub iri: String,
        pub work_iri: String,
        pub law_iri: String,
        pub version_iri: String,
        pub label: String,
        pub number: i32,
        pub suffix: i32,
        #[sea_orm(column_type = "Text")]
        pub hierarchy_path: String,
        pub text_hash: String,
        pub source_file: String,
        pub source_line: i32,
    }
    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}
    impl ActiveModelBehavior for ActiveModel {}
}

struct CreateTables;

impl MigrationName for CreateTables {
    fn name(&self) -> &str {
        "m0001_create_tables"
    }
}

#[async_trait::async_trait]
impl MigrationTrait for CreateTables {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let schema = sea_orm::Schema::new(manager.get_database_backend());
        let tables = [
            schema.create_table_from_entity(build::Entity),
            schema.create_table_from_entity(law::Entity),
            schema.create_table_from_entity(law_version::Entity),
            schema.create_table_from_entity(article::Entity),
        ];
        for mut table in tables {
            manager
                .create_table(table.if_not_exists().to_owned())
                .await?;
        }
        for mut stmt in schema
            .create_index_from_entity(law::Entity)
            .into_iter()
            .chain(schema.create_index_from_entity(law_version::Entity))
            .chain(schema.create_index_from_entity(article::Entity))
        {
            manager
                .create_index(stmt.if_not_exists().to_owned())
                .await?;
        }
        Ok(())
    }
}

struct Migrator;

impl MigratorTrait for Migrator {
    fn migrations() -> Vec<Box<dyn MigrationTrait>> {
        vec![Box::new(CreateTables)]
    }
}

/// Connects to the metadata database and brings its schema up to date.
pub async fn connect(url: &str) -> Result<DatabaseConnection> {
    let supported = ["sqlite:", "postgres:", "postgresql:", "mysql:", "mariadb:"];
    if !supported.iter().any(|p| url.starts_with(p)) {
        return Err(StoreError::UnsupportedDbUrl(url.to_owned()));
    }
    let mut opts = ConnectOptions::new(url.to_owned());
    opts.sqlx_logging(false)
        .connect_timeout(std::time::Duration::from_secs(10))
        .acquire_timeout(std::time::Duration::from_secs(10));
    let db = Database::connect(opts)
        .await
        .map_err(|e| StoreError::DbConnect {
            url: crate::layout::without_password(url),
            message: e.to_string(),
        })?;
    if url.starts_with("sqlite:") {
        // WAL lets readers go on while a build writes.
        use sea_orm::ConnectionTrait;
        db.execute_unprepared("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;")
            .await?;
    }
    Migrator::up(&db, None).await?;
    Ok(db)
}

/// Inserts rows in batches inside one transaction.
pub async fn insert_all<A>(db: &DatabaseConnection, rows: Vec<A>) -> Result<()>
where
    A: sea_orm::ActiveModelTrait + Send,
    <A::Entity as EntityTrait>::Model: sea_orm::IntoActiveModel<A>,
{
    const BATCH: usize = 400;
    let txn = db.begin().await?;
    let mut rows = rows.into_iter().peekable();
    while rows.peek().is_some() {
        let chunk: Vec<A> = rows.by_ref().take(BATCH).collect();
        <A::Entity as EntityTrait>::insert_many(chunk)
            .exec_without_returning(&txn)
            .await?;
    }
    txn.commit().await?;
    Ok(())
}
