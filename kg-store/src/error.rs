use std::path::PathBuf;

/// Everything that can go wrong in the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("store {} does not exist or holds no completed build", .0.display())]
    NoBuild(PathBuf),
    /// The build was made without embeddings, so it has no vector index.
    #[error("{}: this build has no embeddings, so dense and hybrid search have nothing to search", .0.display())]
    NoEmbeddings(PathBuf),
    #[error("{0} is not a directory")]
    NotADirectory(PathBuf),
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the store's manifest {} is corrupt: {message}", path.display())]
    CorruptManifest { path: PathBuf, message: String },
    #[error("RDF store: {0}")]
    Rdf(#[from] oxigraph::store::StorageError),
    #[error("RDF data: {0}")]
    RdfModel(String),
    #[error("SPARQL syntax: {0}")]
    SparqlSyntax(String),
    #[error("SPARQL evaluation: {0}")]
    SparqlEvaluation(String),
    #[error("SPARQL UPDATE is refused: the graph was opened read-only")]
    UpdateRefused,
    #[error("metadata database: {0}")]
    Db(#[from] sea_orm::DbErr),
    /// The database could not be reached or refused the login (the URL is shown without
    /// its password).
    #[error("cannot connect to the metadata database {url}: {message}")]
    DbConnect { url: String, message: String },
    #[error("unsupported database URL `{0}`: use sqlite://PATH, postgres://… or mysql://…")]
    UnsupportedDbUrl(String),
    #[error("vector index: {0}")]
    VectorIndex(String),
    #[error("BM25 index: {0}")]
    TextIndex(String),
    /// A remote SPARQL or Graph Store endpoint failed or refused.
    #[error("{url}: {message}")]
    Remote { url: String, message: String },
    #[error("the query was cancelled (it ran past its time limit)")]
    Cancelled,
    /// A protocol request's parameter that is not what it must be (a graph IRI, …).
    #[error("bad request: {0}")]
    BadRequest(String),
    #[error("serializing results: {0}")]
    Serialize(String),
}

impl StoreError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> StoreError {
        StoreError::Io {
            path: path.into(),
            source,
        }
    }
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;
