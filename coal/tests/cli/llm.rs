//! The LLM paths against scripted OpenAI-compatible servers (protocol tests): generated
//! answers, retries and fallback, triple extraction, topic summaries, entity fusion.

use super::*;

/// A chat endpoint that replies with scripted answers, in order, then repeats the last.
struct ScriptedChat(std::sync::Mutex<Vec<wiremock::ResponseTemplate>>);

/// The decomposition a scripted endpoint gives every question `ask` sends it.
const SCRIPTED_DECOMPOSITION: &str = "{\"sub_queries\":[\"订立劳动合同的原则是什么\"],\"entities\":[\"劳动合同\"],\"constraints\":[],\"relations\":[]}";

impl wiremock::Respond for ScriptedChat {
    fn respond(&self, request: &wiremock::Request) -> wiremock::ResponseTemplate {
        let mut v = self.0.lock().unwrap();
        // `ask` first has the question decomposed; the script is for what follows.
        if String::from_utf8_lossy(&request.body).contains("拆解") {
            return chat_reply(SCRIPTED_DECOMPOSITION);
        }
        if v.len() > 1 {
            v.remove(0)
        } else {
            v[0].clone()
        }
    }
}

fn chat_reply(content: &str) -> wiremock::ResponseTemplate {
    wiremock::ResponseTemplate::new(200).set_body_json(serde_json::json!({
        "choices": [{ "message": { "role": "assistant", "content": content } }]
    }))
}

/// A chat completions endpoint answering with `respond`, started (the runtime must
/// outlive the test's requests).
fn chat_server(
    respond: impl wiremock::Respond + 'static,
) -> (tokio::runtime::Runtime, wiremock::MockServer) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt.block_on(wiremock::MockServer::start());
    rt.block_on(
        wiremock::Mock::given(wiremock::matchers::path("/v1/chat/completions"))
            .respond_with(respond)
            .mount(&server),
    );
    (rt, server)
}

/// A store, its path, a config's path, the chat endpoint and its runtime.
type ChatStore = (
    tempfile::TempDir,
    String,
    String,
    wiremock::MockServer,
    tokio::runtime::Runtime,
);

fn chat_store(replies: Vec<wiremock::ResponseTemplate>) -> ChatStore {
    chat_store_with(ScriptedChat(std::sync::Mutex::new(replies)))
}

/// A store and a config whose `[llm]` is an endpoint answering with `respond`.
fn chat_store_with(respond: impl wiremock::Respond + 'static) -> ChatStore {
    let (rt, server) = chat_server(respond);
    let dir = tempfile::tempdir().unwrap();
    let s = ask_store(dir.path());
    let config = dir.path().join("coal.toml");
    std::fs::write(
        &config,
        format!(
            "[llm]\nurl = \"{}\"\nmodel = \"scripted\"\nattempts = 3\n",
            server.uri()
        ),
    )
    .unwrap();
    let c = config.to_str().unwrap().to_owned();
    (dir, s, c, server, rt)
}

#[test]
fn protocol_an_invented_citation_in_a_generated_answer_is_cut_and_reported() {
    let (_dir, s, c, server, rt) = chat_store(vec![chat_reply(
        "订立劳动合同应当遵循合法、公平、诚实信用的原则[1]。另见《示范劳动法》第九百条和[9]。",
    )]);
    let q = "订立劳动合同应当遵循什么原则？";
    let a = ask_json(&s, &["--config", &c, "--tier", "2"], q);
    assert_eq!(
        a["generated_by"].as_str().unwrap(),
        format!("openai:scripted@{}", server.uri())
    );
    let text = a["answer"].as_str().unwrap();
    assert!(
        text.contains("[1]") && !text.contains("第九百条") && !text.contains("[9]"),
        "{text}"
    );
    let removed = a["trace"]["removed_citations"].as_array().unwrap();
    assert_eq!(removed.len(), 2, "{a}");
    assert!(
        removed[0]["reason"]
            .as_str()
            .unwrap()
            .contains("does not exist"),
        "{removed:?}"
    );
    // Only what the answer cites is cited: context article [1].
    assert_eq!(a["citations"].as_array().unwrap().len(), 1, "{a}");
    // The LLM decomposed the question first.
    assert_eq!(
        a["trace"]["decomposed_by"].as_str().unwrap(),
        format!("openai:scripted@{}", server.uri())
    );
    assert_eq!(
        a["trace"]["complexity"]["intrinsic"]["decomposition"]["sub_queries"][0],
        "订立劳动合同的原则是什么"
    );
    // The answer request carried the numbered context and the question.
    let requests = rt.block_on(server.received_requests()).unwrap();
    let answer_request = requests
        .iter()
        .find(|r| !String::from_utf8_lossy(&r.body).contains("拆解"))
        .unwrap();
    let body: serde_json::Value = serde_json::from_slice(&answer_request.body).unwrap();
    let user = body["messages"][1]["content"].as_str().unwrap();
    assert!(
        user.starts_with("条文：\n[1] 《") && user.contains(q),
        "{user}"
    );
    assert_eq!(body["model"], "scripted");
    // Plain output reports the cut on stderr.
    let out = coal(&["ask", "--store", &s, "--config", &c, "--tier", "2", q]);
    assert!(
        stderr(&out).contains("citation cut from the answer: 《示范劳动法》第九百条"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn protocol_server_errors_are_retried_and_a_broken_endpoint_falls_back_to_extractive() {
    let q = "订立劳动合同应当遵循什么原则？";
    let (_dir, s, c, server, rt) = chat_store(vec![
        wiremock::ResponseTemplate::new(500),
        wiremock::ResponseTemplate::new(503),
        chat_reply("应当遵循合法、公平、诚实信用的原则[1]。"),
    ]);
    let a = ask_json(&s, &["--config", &c, "--tier", "2"], q);
    assert!(a["generated_by"].is_string(), "{a}");
    // The decomposition, then the answer: 500, 503, success.
    assert_eq!(rt.block_on(server.received_requests()).unwrap().len(), 4);
    drop(server);
    // Malformed JSON: the answer is extractive, with a warning, never a crash.
    let (_dir2, s2, c2, _server2, _rt2) = chat_store(vec![
        wiremock::ResponseTemplate::new(200).set_body_string("{\"choices\": [oops"),
    ]);
    let a = ask_json(&s2, &["--config", &c2, "--tier", "2"], q);
    assert!(a["generated_by"].is_null(), "{a}");
    assert!(
        a["answer"].as_str().unwrap().starts_with("可适用的条文"),
        "{a}"
    );
    let w = a["warnings"].as_array().unwrap();
    assert!(
        w.iter()
            .any(|w| w.as_str().unwrap().contains("malformed response")),
        "{w:?}"
    );
    // A decomposition that is not the JSON asked for: the rules decompose, with a warning,
    // and the answer is still generated.
    let dir = tempfile::tempdir().unwrap();
    let s3 = ask_store(dir.path());
    let (_rt3, _server3, config) = routed_chat_config(
        dir.path(),
        vec![
            (vec!["拆解"], "这个问题可以拆成两部分。"),
            (vec!["条文："], "应当遵循合法、公平的原则[1]。"),
        ],
    );
    let a = ask_json(
        &s3,
        &["--config", config.to_str().unwrap(), "--tier", "2"],
        q,
    );
    assert_eq!(a["trace"]["decomposed_by"], "rules", "{a}");
    assert!(a["generated_by"].is_string(), "{a}");
    assert!(
        a["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("LLM decomposition failed")),
        "{a}"
    );
}

#[test]
fn protocol_llm_triple_extraction_survives_bad_replies_and_caches_good_ones() {
    let triple = |s: &str| {
        chat_reply(&format!(
            "{{\"triples\":[{{\"subject\":\"{s}\",\"relation\":\"规定\",\"object\":\"保障妇女的合法权益\"}}]}}"
        ))
    };
    // One request at a time, in article order: a good reply; malformed JSON twice (the
    // article is skipped); a 500 then a reply slower than the timeout then... the rest good.
    let (rt, server) = chat_server(ScriptedChat(std::sync::Mutex::new(vec![
        triple("本法"),
        chat_reply("好的，以下是三元组"),
        chat_reply("{\"triples\": [oops"),
        wiremock::ResponseTemplate::new(500),
        triple("劳动者").set_delay(std::time::Duration::from_secs(3)),
        chat_reply(
            "```json\n{\"triples\":[{\"subject\":\"本法\",\"relation\":\"适用于\",\"object\":\"用人单位\"},{\"subject\":\"x\",\"relation\":\"无关\",\"object\":\"y\"}]}\n```",
        ),
    ])));
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("coal.toml");
    std::fs::write(
        &config,
        format!(
            "[llm]\nurl = \"{}\"\nmodel = \"scripted\"\nattempts = 1\ntimeout_secs = 1\nconcurrency = 1\n",
            server.uri()
        ),
    )
    .unwrap();
    let c = config.to_str().unwrap();
    let store = dir.path().join("store");
    let first = build_with(&store, &fixtures().join("versions"), &["--config", c]);
    let e = &first["extraction"];
    assert_eq!(e["articles"], 5, "{e}");
    // Article 2: two malformed replies; article 3: a 500 and a timeout: both skipped.
    assert_eq!(e["skipped"], 2, "{e}");
    assert_eq!(e["calls"], 7, "{e}");
    // Article 1's triple is what its text says; the last reply's valid triple (本法 适用于
    // 用人单位), given for articles 4 and 5, is not in their text and is dropped.
    assert_eq!(e["triples"], 1, "{e}");
    assert_eq!(e["invalid_triples"], 2, "{e}");
    assert_eq!(e["ungrounded_triples"], 2, "{e}");
    assert_eq!(
        e["ungrounded_reasons"]["object not in the article"], 2,
        "{e}"
    );
    let s = store.to_str().unwrap();
    let q = coal(&[
        "sparql",
        "--store",
        s,
        "--format",
        "csv",
        "SELECT ?a ?subject ?by WHERE { ?t a coal:ExtractedTriple ; coal:fromProvision ?a ; coal:tripleSubject ?subject ; coal:extractedBy ?by } ORDER BY ?a",
    ]);
    let text = stdout(&q);
    assert!(
        text.contains("本法") && text.contains("art_1,") && text.contains("openai:scripted@"),
        "{text}"
    );
    // Rebuilding: the three good replies come from the cache; only the skipped articles ask.
    let second = build_with(&store, &fixtures().join("versions"), &["--config", c]);
    let e = &second["extraction"];
    assert_eq!(e["from_cache"], 3, "{e}");
    assert_eq!(e["skipped"], 0, "{e}");
    assert_eq!(e["calls"], 2, "{e}");
    // A part of the corpus: the first two articles, or only the laws named.
    let part = build_with(
        &store,
        &fixtures().join("versions"),
        &["--config", c, "--extract-limit", "2"],
    );
    assert_eq!(part["extraction"]["articles"], 2, "{}", part["extraction"]);
    assert_eq!(
        part["extraction"]["from_cache"], 2,
        "{}",
        part["extraction"]
    );
    let none = build_with(
        &store,
        &fixtures().join("versions"),
        &["--config", c, "--extract-law", "火星殖民法"],
    );
    assert_eq!(none["extraction"]["articles"], 0, "{}", none["extraction"]);
    // And a build that may not use the LLM makes no call at all.
    let before = rt.block_on(server.received_requests()).unwrap().len();
    build_with(
        &store,
        &fixtures().join("versions"),
        &["--config", c, "--no-extraction"],
    );
    assert_eq!(
        rt.block_on(server.received_requests()).unwrap().len(),
        before
    );
}

/// A chat endpoint for builds that ask several kinds of question: the first rule whose
/// needles all occur in the request answers; extraction prompts get no triples.
struct RoutedChat(Vec<(Vec<&'static str>, &'static str)>);

impl wiremock::Respond for RoutedChat {
    fn respond(&self, request: &wiremock::Request) -> wiremock::ResponseTemplate {
        let body = String::from_utf8_lossy(&request.body);
        for (needles, reply) in &self.0 {
            if needles.iter().all(|n| body.contains(n)) {
                return chat_reply(reply);
            }
        }
        chat_reply("{\"triples\":[]}")
    }
}

fn routed_chat_config(
    dir: &Path,
    rules: Vec<(Vec<&'static str>, &'static str)>,
) -> (tokio::runtime::Runtime, wiremock::MockServer, PathBuf) {
    let (rt, server) = chat_server(RoutedChat(rules));
    let config = dir.join("coal.toml");
    std::fs::write(
        &config,
        format!(
            "[llm]\nurl = \"{}\"\nmodel = \"scripted\"\nattempts = 1\ntimeout_secs = 5\nconcurrency = 1\n",
            server.uri()
        ),
    )
    .unwrap();
    (rt, server, config)
}

#[test]
fn protocol_topics_get_llm_summaries_and_a_bad_reply_leaves_only_the_terms() {
    let dir = tempfile::tempdir().unwrap();
    let (rt, server, config) = routed_chat_config(
        dir.path(),
        vec![
            (vec!["主题概括", "下属主题"], "我觉得是妇女"),
            (vec!["主题概括"], "{\"summary\": \"妇女权益保障\"}"),
        ],
    );
    let store = dir.path().join("store");
    let c = config.to_str().unwrap();
    let summary = build_with(&store, &fixtures().join("versions"), &["--config", c]);
    let d = &summary["domains"];
    let (topics, domains) = (
        d["topics"].as_u64().unwrap(),
        d["domains"].as_u64().unwrap(),
    );
    assert_eq!(d["summaries"], topics, "{d}");
    assert_eq!(d["summary_failures"], domains, "{d}");
    let s = store.to_str().unwrap();
    let q = |sparql: &str| {
        let out = coal(&["sparql", "--store", s, "--format", "csv", sparql]);
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    };
    let with = q(
        "SELECT ?t ?summary WHERE { ?t a coal:Domain ; coal:summary ?summary ; skos:broader ?d }",
    );
    assert_eq!(
        with.matches("妇女权益保障").count() as u64,
        topics,
        "{with}"
    );
    let domain_summaries = q(
        "SELECT ?d WHERE { ?d a coal:Domain ; coal:summary ?s FILTER NOT EXISTS { ?d skos:broader ?x } }",
    );
    assert_eq!(
        domain_summaries.trim(),
        "d",
        "no summary from a bad reply: {domain_summaries}"
    );
    // The terms stay the label either way.
    let labels = q("SELECT (COUNT(?l) AS ?n) WHERE { ?d a coal:Domain ; coal:label ?l }");
    assert!(labels.contains(&(topics + domains).to_string()), "{labels}");
    // A rebuild asks again only what failed (two attempts per domain).
    let before = rt.block_on(server.received_requests()).unwrap().len();
    build_with(&store, &fixtures().join("versions"), &["--config", c]);
    let asked = rt.block_on(server.received_requests()).unwrap().len() - before;
    assert_eq!(asked as u64, 2 * domains);
}

#[test]
fn protocol_entity_fusion_merges_by_rules_asks_the_llm_when_unsure_and_records_evidence() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    let law = |name: &str, date: &str, body: &str| {
        std::fs::write(
            corpus.join(format!("{name}({date}).md")),
            format!("# {name}\n\n<!-- INFO END -->\n\n{body}\n"),
        )
        .unwrap();
    };
    let kin =
        "本法所称近亲属，是指配偶、父母、子女、兄弟姐妹、祖父母、外祖父母、孙子女、外孙子女。";
    law(
        "示范甲法",
        "2020-01-01",
        &format!("第一条 {kin}\n\n第二条 近亲属可以代为申请。"),
    );
    law("示范乙法", "2021-01-01", &format!("第一条 {kin}"));
    law(
        "示范丙法",
        "2022-01-01",
        "第一条 本法所称近亲属，是指船舶所有人书面委托的港口代理机构。",
    );
    law(
        "示范丁法",
        "2022-01-01",
        "第一条 本法所称未成年人，是指未满十八周岁的公民。",
    );
    let (rt, server, config) = routed_chat_config(
        dir.path(),
        vec![
            (
                vec!["是否指同一事物", "示范甲法", "示范丙法"],
                "{\"same\": false, \"reason\": \"所指范围完全不同\"}",
            ),
            (
                vec!["是否指同一事物", "示范乙法", "示范丙法"],
                "```json\n{\"verdict\": \"maybe\"}\n```",
            ),
            (vec!["主题概括"], "{\"summary\": \"近亲属\"}"),
        ],
    );
    let store = dir.path().join("store");
    let summary = build_with(&store, &corpus, &["--config", config.to_str().unwrap()]);
    let f = &summary["fusion"];
    assert_eq!(f["concepts"], 4, "{f}");
    assert_eq!(f["same_label"], 3, "{f}");
    assert_eq!(f["merged_by_rules"], 1, "identical definitions: {f}");
    assert_eq!(f["apart_by_llm"], 1, "{f}");
    assert_eq!(f["llm_failures"], 1, "a reply without a verdict: {f}");
    assert_eq!(f["entities"], 1, "{f}");
    assert_eq!(f["concepts_fused"], 2, "{f}");
    let s = store.to_str().unwrap();
    let q = |sparql: &str| {
        let out = coal(&["sparql", "--store", s, "--format", "csv", sparql]);
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    };
    // The entity, its label and the two concepts fused into it.
    let fused = q(
        "SELECT ?label ?c WHERE { ?e a coal:Entity ; skos:prefLabel ?label . ?c coal:fusedInto ?e } ORDER BY ?c",
    );
    assert!(fused.contains("近亲属"), "{fused}");
    assert!(
        fused.contains("示范甲法/concept/") && fused.contains("示范乙法/concept/"),
        "{fused}"
    );
    assert!(!fused.contains("示范丙法"), "{fused}");
    // Every decision with its evidence and who made it.
    let decisions = q(
        "SELECT ?decision ?by ?evidence WHERE { ?d a coal:FusionDecision ; coal:decision ?decision ; coal:decidedBy ?by ; coal:evidence ?evidence } ORDER BY ?decision ?by",
    );
    let rows = decisions.lines().filter(|l| !l.trim().is_empty()).count();
    assert_eq!(rows, 4, "a header and three pairs: {decisions}");
    assert!(
        decisions.contains("merged,rules,same normalized label"),
        "{decisions}"
    );
    assert!(decisions.contains("所指范围完全不同"), "{decisions}");
    assert!(decisions.contains("LLM failed"), "{decisions}");
    // Rebuilding asks nothing new: the verdict is cached; the failed pair is asked again.
    let before = rt.block_on(server.received_requests()).unwrap().len();
    let again = build_with(&store, &corpus, &["--config", config.to_str().unwrap()]);
    assert_eq!(again["fusion"]["apart_by_llm"], 1);
    let asked = rt.block_on(server.received_requests()).unwrap().len() - before;
    // The extraction replies (empty) and the verdict are cached; the malformed pair is
    // asked again (two attempts).
    assert_eq!(asked, 2, "{asked} requests");
}

/// An endpoint that extracts one triple from 第一条 and one from 第二条 of 示范保障法 and,
/// asked to verify (the verification's system prompt says 审核), answers 否 for the
/// statement about 保障妇女的合法权益 and 是 for every other.
struct ScriptedVerifier;

impl wiremock::Respond for ScriptedVerifier {
    fn respond(&self, request: &wiremock::Request) -> wiremock::ResponseTemplate {
        let body = String::from_utf8_lossy(&request.body);
        if body.contains("审核") {
            return chat_reply(match body.contains("「保障妇女的合法权益」") {
                true => "否",
                false => "是",
            });
        }
        chat_reply(if body.contains("第一条") {
            "{\"triples\":[{\"subject\":\"本法\",\"relation\":\"规定\",\"object\":\"保障妇女的合法权益\"}]}"
        } else if body.contains("第二条") {
            "{\"triples\":[{\"subject\":\"妇女\",\"relation\":\"主体-权利\",\"object\":\"与男子平等的权利\"}]}"
        } else {
            "{\"triples\":[]}"
        })
    }
}

/// A [`ScriptedVerifier`] started (the runtime must outlive the test's requests).
fn verifier_server() -> (tokio::runtime::Runtime, wiremock::MockServer) {
    chat_server(ScriptedVerifier)
}

fn verifier_config(dir: &Path, server: &wiremock::MockServer, verify: &str) -> String {
    let config = dir.join("coal.toml");
    std::fs::write(
        &config,
        format!(
            "[llm]\nurl = \"{}\"\nmodel = \"scripted\"\nattempts = 1\nconcurrency = 1\n{verify}",
            server.uri()
        ),
    )
    .unwrap();
    config.to_str().unwrap().to_owned()
}

/// One property (`coal:tripleObject`, `coal:tripleRelation`) of every extracted triple
/// in the store, as CSV.
fn extracted(store: &Path, property: &str) -> String {
    let query = format!("SELECT ?v WHERE {{ ?t a coal:ExtractedTriple ; {property} ?v }}");
    let q = coal(&[
        "sparql",
        "--store",
        store.to_str().unwrap(),
        "--format",
        "csv",
        &query,
    ]);
    stdout(&q)
}

/// Builds the versions fixture with `config`, which must fail; its stderr.
fn refused_build(config: &str, store: &Path) -> String {
    let bad = coal(&[
        "build",
        "--config",
        config,
        "--corpus",
        fixtures().join("versions").to_str().unwrap(),
        "--store",
        store.to_str().unwrap(),
    ]);
    assert!(!bad.status.success());
    String::from_utf8_lossy(&bad.stderr).into_owned()
}

#[test]
fn protocol_skip_relations_leaves_a_relation_out_of_the_graph() {
    let (_rt, server) = verifier_server();
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    // The scripted model gives 第一条 a 规定 triple (both versions) and 第二条 a right.
    let c = verifier_config(dir.path(), &server, "skip_relations = [\"规定\"]\n");
    let built = build_with(&store, &fixtures().join("versions"), &["--config", &c]);
    let e = &built["extraction"];
    assert_eq!(
        (&e["triples"], &e["left_out_triples"]),
        (&1.into(), &2.into()),
        "{e}"
    );
    let text = extracted(&store, "coal:tripleRelation");
    assert!(
        text.contains("主体-权利") && !text.contains("规定"),
        "{text}"
    );
    // A name outside the extraction's vocabulary is refused by name.
    let c = verifier_config(dir.path(), &server, "skip_relations = [\"规矩\"]\n");
    let err = refused_build(&c, &store);
    assert!(
        err.contains("skip_relations") && err.contains("规矩"),
        "{err}"
    );
}

#[test]
fn protocol_verify_triples_drops_the_triples_the_model_says_its_article_does_not_say() {
    let (_rt, server) = verifier_server();
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let c = verifier_config(dir.path(), &server, "verify_triples = 0.5\n");
    let built = build_with(&store, &fixtures().join("versions"), &["--config", &c]);
    let e = &built["extraction"];
    let v = &e["verification"];
    // 第一条 of both versions and 第二条 of the first (the second version's 第二条 says
    // something else, so the grounding drops its triple).
    assert_eq!(
        (&v["judged"], &v["refused"], &v["failed"]),
        (&3.into(), &2.into(), &0.into()),
        "{e}"
    );
    assert_eq!(e["triples"], 1, "{e}");
    let text = extracted(&store, "coal:tripleObject");
    assert!(
        text.contains("与男子平等的权利") && !text.contains("保障妇女"),
        "{text}"
    );
    // Without the key nothing is verified and the three triples stay.
    let c = verifier_config(dir.path(), &server, "");
    let plain = build_with(&store, &fixtures().join("versions"), &["--config", &c]);
    assert!(
        plain["extraction"]["verification"].is_null(),
        "{}",
        plain["extraction"]
    );
    assert_eq!(plain["extraction"]["triples"], 3, "{}", plain["extraction"]);
    // A threshold that is no probability is refused by name.
    let c = verifier_config(dir.path(), &server, "verify_triples = 1.5\n");
    let err = refused_build(&c, &store);
    assert!(err.contains("verify_triples = 1.5"), "{err}");
}

#[test]
fn protocol_eval_triples_reports_the_precision_of_each_filter() {
    let (_rt, server) = verifier_server();
    let dir = tempfile::tempdir().unwrap();
    let c = verifier_config(dir.path(), &server, "");
    // Judged by hand: the 规定 triple wrong, the right one right, and a third that the
    // grounding rules refuse (its object is not in the article).
    let line = |article: &str, s: &str, r: &str, o: &str, correct: bool| {
        serde_json::json!({"law": "示范保障法(2018-10-26).md", "article": article, "subject": s,
            "relation": r, "object": o, "correct": correct})
        .to_string()
    };
    let sample = dir.path().join("sample.jsonl");
    std::fs::write(
        &sample,
        [
            line("第一条", "本法", "规定", "保障妇女的合法权益", false),
            line("第二条", "妇女", "主体-权利", "与男子平等的权利", true),
            line("第二条", "妇女", "主体-权利", "选举权", true),
        ]
        .join("\n"),
    )
    .unwrap();
    let corpus = fixtures().join("versions");
    let cache = dir.path().join("cache.jsonl");
    let eval = |more: &[&str]| {
        let mut args = vec![
            "eval",
            "triples",
            "--config",
            &c,
            "--corpus",
            corpus.to_str().unwrap(),
            "--sample",
            sample.to_str().unwrap(),
            "--cache",
            cache.to_str().unwrap(),
        ];
        args.extend(more);
        coal(&args)
    };
    let per_triple = dir.path().join("judged.jsonl");
    let out = eval(&[
        "--thresholds",
        "0.5",
        "--per-triple",
        per_triple.to_str().unwrap(),
    ]);
    let text = stdout(&out);
    assert!(
        text.contains("| sample | 3 | 2 | grounding | 1 | 1 | 50.0% | 1 |"),
        "{text}"
    );
    assert!(
        text.contains("| sample | 3 | 2 | grounding + P(是) ≥ 0.5 | 1 | 0 | 100.0% | 1 |"),
        "{text}"
    );
    let judged: Vec<serde_json::Value> = std::fs::read_to_string(&per_triple)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(judged.len(), 3);
    assert_eq!(
        (&judged[0]["p"], &judged[1]["p"]),
        (&0.0.into(), &1.0.into())
    );
    assert!(judged[2]["p"].is_null() && judged[2]["grounded"] == false);
    assert_eq!(judged[2]["refused"], "object not in the article");
    // The rules alone need no model: no configuration, no call.
    let rules_only = coal(&[
        "eval",
        "triples",
        "--grounding-only",
        "--corpus",
        corpus.to_str().unwrap(),
        "--sample",
        sample.to_str().unwrap(),
    ]);
    let text = stdout(&rules_only);
    assert!(
        text.contains("| sample | 3 | 2 | grounding | 1 | 1 | 50.0% | 1 |")
            && !text.contains("P(是)"),
        "{text}"
    );
    // An article the law does not have is named with its line.
    std::fs::write(&sample, line("第九十九条", "本法", "规定", "x", false)).unwrap();
    let bad = eval(&[]);
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("line 1") && err.contains("第九十九条"),
        "{err}"
    );
}

/// `eval retrieval --draft` on one question with a scripted draft (protocol test): the
/// drafted modes appear beside the plain ones, and the draft moves the fused dense list —
/// a draft quoting the gold article keeps it first, one quoting another article and
/// weighted heavily puts that article first instead.
#[test]
fn protocol_eval_retrieval_with_a_drafted_answer_fuses_the_drafts_dense_list() {
    let run = |draft: &str, weight: &str| -> serde_json::Value {
        let (dir, s, c, server, rt) = chat_store(vec![chat_reply(draft)]);
        let set = dir.path().join("one.jsonl");
        std::fs::write(
            &set,
            "{\"id\": \"one\", \"question\": \"男女平等是不是国家的基本国策？\", \"answer\": \"\", \"gold\": [{\"law\": \"中华人民共和国示范保障法\", \"article\": \"第二条\", \"file\": \"versions/示范保障法(2022-10-30).md\"}]}\n",
        )
        .unwrap();
        let out = coal(&[
            "eval",
            "retrieval",
            "--store",
            &s,
            "--config",
            &c,
            "--set",
            set.to_str().unwrap(),
            "--k",
            "1,3",
            "--draft",
            "--draft-weight",
            weight,
            "--json",
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        // The model was asked for a draft of the question, under the draft prompt.
        let asked = rt.block_on(server.received_requests()).unwrap();
        let body = String::from_utf8_lossy(&asked[0].body).to_string();
        assert!(
            body.contains("男女平等是不是国家的基本国策") && body.contains("简要回答"),
            "{body}"
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let r1 = |r: &serde_json::Value, mode: &str| {
        r["one"][mode]["metrics"]["recall_at"]["1"]
            .as_f64()
            .unwrap()
    };
    let good = run("男女平等是国家的基本国策，见《示范保障法》第二条。", "1");
    for mode in ["dense", "dense+draft", "hybrid+draft", "reranked+draft"] {
        assert_eq!(r1(&good, mode), 1.0, "{mode}: {good}");
    }
    let misleading = run("本法自2020年1月1日起施行。", "10");
    assert_eq!(r1(&misleading, "dense"), 1.0, "{misleading}");
    assert_eq!(r1(&misleading, "dense+draft"), 0.0, "{misleading}");
}

/// `[method] draft_from_tier = 3` (protocol test): tier 3 has the model draft an answer
/// before it ranks and searches with it too (the trace shows the draft, the dense list
/// moves towards it); tier 2 does not draft.
#[test]
fn protocol_tier_3_drafts_an_answer_and_searches_with_it_where_tier_2_does_not() {
    let (_dir, s, c, server, rt) = chat_store(vec![chat_reply("本法自2020年1月1日起施行。")]);
    let config = std::fs::read_to_string(&c).unwrap();
    std::fs::write(
        &c,
        format!("{config}\n[method]\ndraft_from_tier = 3\ndraft_weight = 10.0\n"),
    )
    .unwrap();
    let q = "男女平等是不是国家的基本国策？";
    let drafts_asked = || {
        rt.block_on(server.received_requests())
            .unwrap()
            .iter()
            .filter(|r| String::from_utf8_lossy(&r.body).contains("简要回答"))
            .count()
    };
    let t2 = ask_json(&s, &["--config", &c, "--tier", "2"], q);
    assert!(t2["trace"]["draft"].is_null(), "{}", t2["trace"]);
    assert_eq!(drafts_asked(), 0);
    let t3 = ask_json(&s, &["--config", &c, "--tier", "3"], q);
    assert_eq!(drafts_asked(), 1);
    assert_eq!(t3["trace"]["draft"], "本法自2020年1月1日起施行。");
    let top = |a: &serde_json::Value| a["trace"]["dense"][0]["iri"].as_str().unwrap().to_owned();
    assert_ne!(top(&t2), top(&t3), "the draft did not move the dense list");
    assert!(
        t3["trace"]["timings_ms"]["draft"].as_f64().is_some(),
        "{}",
        t3["trace"]
    );
}

/// An endpoint that, asked to judge a candidate (the judge's prompt asks 需要引用这条条文吗),
/// answers 是 for 示范保障法's 第三条 (国家采取必要措施保障妇女权益) and 否 for every other
/// article; any other request (the answer) gets a one-line answer.
struct ScriptedJudge;

impl wiremock::Respond for ScriptedJudge {
    fn respond(&self, request: &wiremock::Request) -> wiremock::ResponseTemplate {
        let body = String::from_utf8_lossy(&request.body);
        assert!(
            body.contains("需要引用这条条文吗"),
            "not a judgement: {body}"
        );
        chat_reply(match body.contains("国家采取必要措施保障妇女权益") {
            true => "是",
            false => "否",
        })
    }
}

/// `[method] judge_from_tier = 2` (protocol test): tier 2 has the model judge its first
/// candidates; the one it says the answer needs leads the context and is all the context
/// keeps, and the trace lists every judgement. Tier 1 does not judge.
#[test]
fn protocol_tier_2_keeps_the_candidates_the_model_judges_the_answer_needs() {
    let (_dir, s, c, server, rt) = chat_store_with(ScriptedJudge);
    let config = std::fs::read_to_string(&c).unwrap();
    std::fs::write(
        &c,
        format!("{config}\n[method]\njudge_from_tier = 2\njudge_top = 4\n"),
    )
    .unwrap();
    let c = c.as_str();
    let q = "男女平等是不是国家的基本国策？";
    let requests = || {
        rt.block_on(server.received_requests())
            .unwrap()
            .iter()
            .filter(|r| String::from_utf8_lossy(&r.body).contains("需要引用这条条文吗"))
            .count()
    };
    let t1 = ask_json(&s, &["--config", c, "--tier", "1"], q);
    assert_eq!(requests(), 0, "tier 1 judged");
    assert!(t1["trace"]["judged"].is_null(), "{}", t1["trace"]);
    let t2 = ask_json(&s, &["--config", c, "--tier", "2"], q);
    let judged = t2["trace"]["judged"].as_array().unwrap();
    assert_eq!(judged.len(), requests(), "one request a judged candidate");
    assert!((2..=4).contains(&judged.len()), "{}", t2["trace"]["judged"]);
    let wanted = "示范保障法/2022-10-30/art_3";
    assert!(
        judged[0]["iri"].as_str().unwrap().ends_with(wanted),
        "{judged:?}"
    );
    assert_eq!(judged[0]["p"], 1.0);
    // Each judged article keeps its place in the ranking before the judgement.
    let mut places: Vec<u64> = judged.iter().map(|j| j["rank"].as_u64().unwrap()).collect();
    places.sort();
    assert_eq!(places, (0..judged.len() as u64).collect::<Vec<_>>());
    assert!(judged[1..].iter().all(|j| j["p"] == 0.0), "{judged:?}");
    let context = t2["context"].as_array().unwrap();
    assert_eq!(context.len(), 1, "{context:?}");
    assert!(context[0]["iri"].as_str().unwrap().ends_with(wanted));
    assert!(t2["trace"]["timings_ms"]["judge"].as_f64().is_some());
    // --explain without --json lists the judgements.
    let out = coal(&[
        "ask",
        "--store",
        &s,
        "--config",
        c,
        "--tier",
        "2",
        "--explain",
        q,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("judged by the chat model"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.contains(wanted) && l.contains("1.000") && l.ends_with("in the context")),
        "{text}"
    );
}

/// `[llm] reply_cache` (protocol test): a second `eval retrieval --draft` over the same
/// questions is answered from the cache file without a request, with the same scores;
/// another temperature is another model as far as the cache is concerned.
#[test]
fn protocol_a_reply_cache_answers_a_repeated_draft_without_the_endpoint() {
    let (dir, s, c, server, rt) = chat_store(vec![chat_reply(
        "男女平等是国家的基本国策，见《示范保障法》第二条。",
    )]);
    let cache = dir.path().join("cache/replies.jsonl");
    let config = std::fs::read_to_string(&c).unwrap();
    let with_cache = |more: &str| {
        std::fs::write(
            &c,
            format!("{config}reply_cache = \"{}\"\n{more}", cache.display()),
        )
        .unwrap();
    };
    let set = dir.path().join("two.jsonl");
    std::fs::write(
        &set,
        "{\"id\": \"a\", \"question\": \"男女平等是不是国家的基本国策？\", \"answer\": \"\", \"gold\": [{\"law\": \"中华人民共和国示范保障法\", \"article\": \"第二条\", \"file\": \"versions/示范保障法(2022-10-30).md\"}]}\n\
         {\"id\": \"b\", \"question\": \"妇女享有哪些权利？\", \"answer\": \"\", \"gold\": [{\"law\": \"中华人民共和国示范保障法\", \"article\": \"第二条\", \"file\": \"versions/示范保障法(2022-10-30).md\"}]}\n",
    )
    .unwrap();
    let run = || {
        let out = coal(&[
            "eval",
            "retrieval",
            "--store",
            &s,
            "--config",
            &c,
            "--set",
            set.to_str().unwrap(),
            "--draft",
            "--json",
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["two"]["reranked+draft"]["metrics"].clone()
    };
    let requests = || rt.block_on(server.received_requests()).unwrap().len();
    with_cache("");
    let first = run();
    assert_eq!(requests(), 2);
    let lines = std::fs::read_to_string(&cache).unwrap();
    assert_eq!(lines.lines().count(), 2, "{lines}");
    let second = run();
    assert_eq!(requests(), 2, "the second run asked the endpoint again");
    assert_eq!(first, second);
    with_cache("temperature = 0.9\n");
    run();
    assert_eq!(
        requests(),
        4,
        "replies at another temperature were served from the cache"
    );
}

#[test]
fn eval_retrieval_draft_without_a_chat_model_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let s = ask_store(dir.path());
    let config = dir.path().join("no-llm.toml");
    std::fs::write(&config, "").unwrap();
    let out = coal(&[
        "eval",
        "retrieval",
        "--store",
        &s,
        "--config",
        config.to_str().unwrap(),
        "--set",
        eval_fixture("mini.jsonl").to_str().unwrap(),
        "--draft",
    ]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("[llm]"), "{}", stderr(&out));
    let out = coal(&[
        "eval",
        "retrieval",
        "--store",
        &s,
        "--set",
        eval_fixture("mini.jsonl").to_str().unwrap(),
        "--draft-weight",
        "2",
    ]);
    assert!(!out.status.success(), "--draft-weight alone is refused");
    let mini = eval_fixture("mini.jsonl");
    let refused = |extra: &[&str]| {
        let mut args = vec![
            "eval",
            "retrieval",
            "--store",
            &s,
            "--set",
            mini.to_str().unwrap(),
            "--draft",
        ];
        args.extend_from_slice(extra);
        let out = coal(&args);
        assert!(!out.status.success(), "{extra:?}");
        stderr(&out)
    };
    assert!(refused(&["--bm25-only"]).contains("--bm25-only"));
    assert!(refused(&["--draft-weight=-1"]).contains("a number >= 0"));
}
