//! Protocol tests of the OpenAI-compatible embedder against a local test server
//! (wiremock) with scripted responses.

use coal_models::{Embedder, OpenAiConfig, OpenAiEmbedder, TextKind};
use wiremock::matchers::{body_partial_json, header, method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// Answers every input with a vector derived from its length, in reversed order, so
/// that the client must reorder by `index`.
struct Echo;

impl Respond for Echo {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let body: serde_json::Value = serde_json::from_slice(&req.body).unwrap();
        let inputs = body["input"].as_array().unwrap();
        let mut data: Vec<serde_json::Value> = inputs
            .iter()
            .enumerate()
            .map(|(i, t)| serde_json::json!({ "index": i, "embedding": [t.as_str().unwrap().chars().count() as f32, 0.0, 3.0] }))
            .collect();
        data.reverse();
        ResponseTemplate::new(200)
            .set_body_json(serde_json::json!({ "object": "list", "data": data }))
    }
}

fn config(uri: &str) -> OpenAiConfig {
    let mut c = OpenAiConfig::new(uri, "bge-m3");
    c.api_key = Some("sk-test".into());
    c.query_prefix = "query: ".into();
    c.attempts = 3;
    c
}

#[tokio::test]
async fn protocol_embeds_in_order_normalized_with_auth_and_prefix() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/embeddings"))
        .and(header("authorization", "Bearer sk-test"))
        .and(body_partial_json(serde_json::json!({ "model": "bge-m3" })))
        .respond_with(Echo)
        .mount(&server)
        .await;
    let uri = server.uri();
    let (dim, vectors, id) = tokio::task::spawn_blocking(move || {
        let e = OpenAiEmbedder::connect(config(&uri)).unwrap();
        let v = e.embed(&["ab", "abcd"], TextKind::Query).unwrap();
        (e.dim(), v, e.model_id().to_owned())
    })
    .await
    .unwrap();
    assert_eq!(dim, 3);
    assert!(id.starts_with("openai:bge-m3@"));
    // "query: ab" has 9 characters, "query: abcd" 11: order kept despite the reversed reply.
    let expect = |n: f32| {
        let norm = (n * n + 9.0).sqrt();
        [n / norm, 0.0, 3.0 / norm]
    };
    for (v, n) in vectors.iter().zip([9.0, 11.0]) {
        for (a, b) in v.iter().zip(expect(n)) {
            assert!((a - b).abs() < 1e-6, "{v:?}");
        }
    }
}

#[tokio::test]
async fn protocol_retries_server_errors_then_succeeds() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/embeddings"))
        .respond_with(ResponseTemplate::new(500))
        .up_to_n_times(2)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/embeddings"))
        .respond_with(Echo)
        .mount(&server)
        .await;
    let uri = server.uri();
    let dim =
        tokio::task::spawn_blocking(move || OpenAiEmbedder::connect(config(&uri)).map(|e| e.dim()))
            .await
            .unwrap();
    assert_eq!(dim.unwrap(), 3);
}

/// Connects to a server that always answers `reply`; returns the error, and the server
/// so callers can check what it received.
async fn connect_error(reply: ResponseTemplate) -> (String, MockServer) {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/embeddings"))
        .respond_with(reply)
        .mount(&server)
        .await;
    let uri = server.uri();
    let err = tokio::task::spawn_blocking(move || {
        OpenAiEmbedder::connect(config(&uri))
            .err()
            .map(|e| e.to_string())
    })
    .await
    .unwrap()
    .expect("connecting must fail");
    (err, server)
}

#[tokio::test]
async fn protocol_gives_a_clear_error_on_persistent_failure_and_malformed_json() {
    let (err, server) = connect_error(ResponseTemplate::new(503)).await;
    assert!(
        err.contains("/v1/embeddings") && err.contains("503") && err.contains("3 attempt(s)"),
        "{err}"
    );
    assert_eq!(
        server.received_requests().await.unwrap().len(),
        3,
        "server errors are retried"
    );

    let (err, _) = connect_error(ResponseTemplate::new(200).set_body_string("{not json")).await;
    assert!(err.contains("malformed response"), "{err}");

    let (err, server) = connect_error(ResponseTemplate::new(401).set_body_string("bad key")).await;
    assert!(err.contains("401") && err.contains("bad key"), "{err}");
    assert_eq!(
        server.received_requests().await.unwrap().len(),
        1,
        "client errors are not retried"
    );
}
