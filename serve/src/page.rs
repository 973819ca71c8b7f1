//! The page: plain HTML, CSS and JavaScript compiled into the binary (no CDN, nothing
//! fetched at run time), with the SPARQL examples of `examples/`.

use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse, Response};

const INDEX: &str = include_str!("../assets/index.html");
const APP_JS: &str = include_str!("../assets/app.js");
const STYLE: &str = include_str!("../assets/style.css");

/// The example queries offered in the SPARQL box: (file name, text).
const EXAMPLES: &[(&str, &str)] = &[
    (
        "labor-contract-chapters.rq",
        include_str!("../../examples/labor-contract-chapters.rq"),
    ),
    (
        "fusion-merges.rq",
        include_str!("../../examples/fusion-merges.rq"),
    ),
];

pub(crate) async fn index() -> Html<String> {
    let examples = serde_json::to_string(
        &EXAMPLES
            .iter()
            .map(|(name, text)| serde_json::json!({ "name": name, "query": text }))
            .collect::<Vec<_>>(),
    )
    .expect("examples serialize");
    // `</` cannot close the script element from inside the JSON.
    Html(INDEX.replace("__EXAMPLES__", &examples.replace("</", "<\\/")))
}

pub(crate) async fn asset(Path(name): Path<String>) -> Response {
    let (body, media) = match name.as_str() {
        "app.js" => (APP_JS, "text/javascript; charset=utf-8"),
        "style.css" => (STYLE, "text/css; charset=utf-8"),
        _ => return (StatusCode::NOT_FOUND, "no such asset\n").into_response(),
    };
    ([(header::CONTENT_TYPE, media)], body).into_response()
}
