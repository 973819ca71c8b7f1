//! Request counts and latencies, in Prometheus' text format at `/metrics`.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;

use crate::App;

/// Latencies kept per route for the quantiles (the most recent ones).
const WINDOW: usize = 4096;

#[derive(Default)]
struct Route {
    by_status: BTreeMap<u16, u64>,
    count: u64,
    sum_secs: f64,
    recent: Vec<f64>,
    next: usize,
}

#[derive(Default)]
pub(crate) struct Metrics {
    routes: Mutex<BTreeMap<String, Route>>,
}

impl Metrics {
    pub fn record(&self, route: &str, status: u16, took: Duration) {
        let mut routes = self.routes.lock().expect("not poisoned");
        let r = routes.entry(route.to_owned()).or_default();
        *r.by_status.entry(status).or_default() += 1;
        r.count += 1;
        let secs = took.as_secs_f64();
        r.sum_secs += secs;
        if r.recent.len() < WINDOW {
            r.recent.push(secs);
        } else {
            r.recent[r.next] = secs;
        }
        r.next = (r.next + 1) % WINDOW;
    }

    fn text(&self, build: &str) -> String {
        let routes = self.routes.lock().expect("not poisoned");
        let mut out = String::new();
        out.push_str("# HELP coal_requests_total Requests answered, by route and status.\n");
        out.push_str("# TYPE coal_requests_total counter\n");
        for (route, r) in routes.iter() {
            for (status, n) in &r.by_status {
                let _ = writeln!(
                    out,
                    "coal_requests_total{{route=\"{route}\",status=\"{status}\"}} {n}"
                );
            }
        }
        out.push_str("# HELP coal_request_duration_seconds Latency of the most recent requests.\n");
        out.push_str("# TYPE coal_request_duration_seconds summary\n");
        for (route, r) in routes.iter() {
            let mut sorted = r.recent.clone();
            sorted.sort_by(f64::total_cmp);
            for q in [0.5, 0.9, 0.99] {
                let v = query_engine::eval_answer::quantile(&sorted, q);
                let _ = writeln!(
                    out,
                    "coal_request_duration_seconds{{route=\"{route}\",quantile=\"{q}\"}} {v:.6}"
                );
            }
            let _ = writeln!(
                out,
                "coal_request_duration_seconds_sum{{route=\"{route}\"}} {:.6}",
                r.sum_secs
            );
            let _ = writeln!(
                out,
                "coal_request_duration_seconds_count{{route=\"{route}\"}} {}",
                r.count
            );
        }
        out.push_str("# HELP coal_build_info The build being served.\n");
        out.push_str("# TYPE coal_build_info gauge\n");
        let _ = writeln!(out, "coal_build_info{{build=\"{build}\"}} 1");
        out
    }
}

pub(crate) async fn render(State(app): State<Arc<App>>) -> impl IntoResponse {
    let build = app.current.get().build().to_owned();
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        app.metrics.text(&build),
    )
}
