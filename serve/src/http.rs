//! Routes, and the connection loop: HTTP/1.1 with a deadline on the request headers
//! (a client that trickles them, slowloris-style, is cut off) and a body-size limit.

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::extract::{DefaultBodyLimit, MatchedPath, Request, State};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::get;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;

use crate::{App, api, page, sparql};

pub(crate) fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/query", get(sparql::query_get).post(sparql::query_post))
        .route("/update", axum::routing::post(sparql::update_post))
        .route("/store", get(sparql::store_get))
        .route("/api/ask", get(api::ask_get).post(api::ask_post))
        .route("/api/search", get(api::search))
        .route("/api/article", get(api::article_query))
        .route("/api/article/{*iri}", get(api::article_path))
        .route("/api/node", get(api::node))
        .route("/api/history/{law}", get(api::history))
        .route("/api/diff/{law}", get(api::diff))
        .route("/healthz", get(api::healthz))
        .route("/metrics", get(crate::metrics::render))
        .route("/", get(page::index))
        .route("/assets/{name}", get(page::asset))
        .layer(middleware::from_fn_with_state(app.clone(), count))
        .layer(DefaultBodyLimit::max(app.config.max_body_bytes))
        .with_state(app)
}

/// Counts every request by route and status, with its latency.
async fn count(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_else(|| "other".to_owned());
    let started = Instant::now();
    let response = next.run(req).await;
    app.metrics
        .record(&route, response.status().as_u16(), started.elapsed());
    response
}

pub(crate) async fn accept_loop(listener: tokio::net::TcpListener, app: Arc<App>) {
    let header_timeout = app.config.header_timeout;
    let service = TowerToHyperService::new(router(app));
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            // Out of file descriptors and the like: wait, and go on serving.
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            continue;
        };
        let service = service.clone();
        tokio::spawn(async move {
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(header_timeout)
                .keep_alive(true);
            let conn = builder.serve_connection(TokioIo::new(stream), service);
            if let Err(e) = conn.await {
                tracing::debug!("connection closed: {e}");
            }
        });
    }
}
