//! `coal serve`: one process that serves a store to SPARQL clients, to programs that ask
//! questions, and to people with a browser.
//!
//! - `/query` — SPARQL 1.1 Protocol (GET, POST form, POST `application/sparql-query`),
//!   results negotiated by `Accept`; `/store` — Graph Store Protocol reads; `/update` —
//!   only with `allow_update`.
//! - `/api/ask`, `/api/search`, `/api/article`, `/api/history/{law}`, `/api/diff/{law}` —
//!   the CLI's JSON.
//! - `/` — a page (assets compiled in) that asks, walks articles and runs SPARQL.
//! - `/healthz`, `/metrics` (Prometheus text).
//!
//! The build served is the store's current one when a request starts: a watcher opens a
//! newly committed build beside the old one and swaps it in; requests already running
//! finish on the build they started on (they hold it).
//!
//! Architecture invariant: this crate reads a store through `kg-store` and answers through
//! `query-engine`; it never builds, and it prints nothing (the CLI is told the address).

mod api;
mod http;
mod metrics;
mod page;
mod served;
mod sparql;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub use served::{OpenEngine, Served};

/// What `coal serve` was asked to do, validated by the CLI.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    pub store: PathBuf,
    pub bind: SocketAddr,
    /// Accept SPARQL UPDATE at `/update` (the store is opened writable).
    pub allow_update: bool,
    /// A query running longer is cancelled (503).
    pub query_timeout: Duration,
    /// Solutions or triples one response carries at most (more are cut, and the response
    /// says so in `Coal-Results-Truncated`).
    pub max_rows: usize,
    /// Request bodies larger than this are refused (413).
    pub max_body_bytes: usize,
    /// A client that has not sent its request headers in this time is disconnected.
    pub header_timeout: Duration,
    /// How often the store's manifest is checked for a newly committed build.
    pub reload_every: Duration,
}

impl ServeConfig {
    pub fn new(store: impl Into<PathBuf>, bind: SocketAddr) -> ServeConfig {
        ServeConfig {
            store: store.into(),
            bind,
            allow_update: false,
            query_timeout: Duration::from_secs(30),
            max_rows: 100_000,
            max_body_bytes: 1 << 20,
            header_timeout: Duration::from_secs(10),
            reload_every: Duration::from_millis(500),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error(transparent)]
    Store(#[from] kg_store::StoreError),
    #[error("the query engine did not open on {build}: {message}")]
    Engine { build: String, message: String },
}

/// State every handler shares.
pub(crate) struct App {
    pub config: ServeConfig,
    pub current: served::Current,
    pub metrics: metrics::Metrics,
}

/// Opens the store's current build (failing with the store's own error when there is
/// none), binds, tells `ready` the address, and serves until the process ends.
pub async fn serve(
    config: ServeConfig,
    open_engine: OpenEngine,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), ServeError> {
    let current = {
        let (store, allow_update) = (config.store.clone(), config.allow_update);
        let open = open_engine.clone();
        tokio::task::spawn_blocking(move || served::Current::open(store, allow_update, open))
            .await
            .expect("the opening thread")?
    };
    let app = Arc::new(App {
        config: config.clone(),
        current,
        metrics: metrics::Metrics::default(),
    });
    let listener = tokio::net::TcpListener::bind(config.bind)
        .await
        .map_err(|source| ServeError::Bind {
            addr: config.bind,
            source,
        })?;
    let addr = listener.local_addr().map_err(|source| ServeError::Bind {
        addr: config.bind,
        source,
    })?;
    served::watch(app.clone());
    ready(addr);
    http::accept_loop(listener, app).await;
    Ok(())
}
