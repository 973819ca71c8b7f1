//! The real local LLM backend (llama.cpp in-process) on Qwen2.5-Coder-0.5B-Instruct:
//! a question decomposition that parses, a triple extraction that passes the schema,
//! and a generated answer whose citations all validate against the store.
//!
//! The model file comes from `make llm-model` (`.models/`, or `$COAL_LLM_MODEL`).
//! Without it these tests have nothing to run on; `.ci/run` fetches it and sets
//! `COAL_REQUIRE_LLM=1`, which turns a missing file into a failure.

use std::sync::OnceLock;

use coal_models::{ChatModel, LocalChat, LocalChatConfig};
use kg_store::Store;
use query_engine::engine::{AskOptions, Engine};
use query_engine::method::MethodConfig;

fn chat() -> Option<&'static LocalChat> {
    static CHAT: OnceLock<Option<LocalChat>> = OnceLock::new();
    CHAT.get_or_init(|| {
        let mut cfg = LocalChatConfig::new(coal_tests::local_llm_model()?);
        // Greedy: the same reply on every run, and the shortest prompts that work.
        cfg.temperature = 0.0;
        cfg.max_tokens = 200;
        cfg.context_tokens = 4096;
        Some(LocalChat::load(cfg).expect("the GGUF model loads"))
    })
    .as_ref()
}

/// The tests share one model, and some read its running totals before and after a call:
/// each holds this lock while it uses the model, so no other test's calls land between.
fn one_test_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

#[test]
fn a_local_decomposition_parses() {
    let Some(chat) = chat() else { return };
    let _alone = one_test_at_a_time();
    let q = "用人单位违法解除劳动合同的，应当支付多少赔偿金？";
    let lexicon = query_engine::complexity::Lexicon::default();
    let d = query_engine::complexity::llm::decompose(chat, q, &lexicon)
        .unwrap_or_else(|e| panic!("the local model's decomposition did not parse: {e}"));
    assert!(!d.sub_queries.is_empty(), "{d:?}");
    let s = chat.last_stats();
    assert!(s.prompt_tokens > 20 && s.generated_tokens > 0, "{s:?}");
    // The grammar bounds the lists: the reply ends by itself, not at max_tokens.
    assert!(!s.truncated, "{s:?}");
    assert!(s.tokens_per_sec() > 0.0);
}

#[test]
fn a_local_extraction_gives_schema_valid_triples() {
    let Some(chat) = chat() else { return };
    let _alone = one_test_at_a_time();
    let user = kg_build::extract::user_prompt(
        "中华人民共和国劳动合同法",
        "第七条",
        "用人单位自用工之日起即与劳动者建立劳动关系。用人单位应当建立职工名册备查。",
    );
    // The JSON grammar makes the reply parse; the schema check keeps valid triples only.
    let reply = chat
        .complete_json(&kg_build::extract::system_prompt(), &user)
        .unwrap();
    let (triples, invalid) = kg_build::extract::parse_reply(&reply)
        .unwrap_or_else(|e| panic!("reply {reply:?} is not the schema's JSON: {e}"));
    assert!(
        !triples.is_empty(),
        "no valid triple ({invalid} invalid): {reply}"
    );
    for t in &triples {
        assert!(
            kg_build::extract::RELATIONS.contains(&t.relation.as_str()),
            "{t:?}"
        );
    }
}

#[test]
fn a_local_answer_cites_only_articles_of_the_store() {
    let Some(chat) = chat() else { return };
    let _alone = one_test_at_a_time();
    let e5 = coal_models::load_default_e5(None, 2, false).expect("the embedding model");
    let dir = coal_tests::build_files(&["社会法/劳动合同法(2012-12-28).md"], Some(&e5));
    let store = Store::open(dir.path().join("store"), false).unwrap();
    let mut engine = Engine::open(&store, Some(Box::new(e5)), MethodConfig::default()).unwrap();
    struct Shared(&'static LocalChat);
    impl ChatModel for Shared {
        fn id(&self) -> &str {
            self.0.id()
        }
        fn complete(&self, s: &str, u: &str) -> Result<String, coal_models::ModelError> {
            self.0.complete(s, u)
        }
        fn complete_json(&self, s: &str, u: &str) -> Result<String, coal_models::ModelError> {
            self.0.complete_json(s, u)
        }
        fn complete_with_grammar(
            &self,
            s: &str,
            u: &str,
            g: &str,
        ) -> Result<String, coal_models::ModelError> {
            self.0.complete_with_grammar(s, u, g)
        }
    }
    engine.set_chat(Box::new(Shared(chat)));
    let a = engine
        .ask(
            "用人单位解除劳动合同需要支付经济补偿吗？",
            &AskOptions::default(),
        )
        .unwrap();
    assert!(
        a.generated_by
            .as_deref()
            .unwrap_or("")
            .starts_with("local:"),
        "{a:?}"
    );
    assert!(!a.answer.trim().is_empty());
    // Every citation left after validation is an article of this store.
    assert!(!a.citations.is_empty());
    for c in &a.citations {
        assert!(engine.is_article(&c.iri), "{c:?}");
    }
}

#[test]
fn a_local_verification_reads_yes_and_no_from_the_logits() {
    let Some(chat) = chat() else { return };
    let _alone = one_test_at_a_time();
    let article = kg_build::extract::user_prompt(
        "中华人民共和国社会保险法",
        "第七十九条",
        "社会保险行政部门对社会保险基金的收支、管理和投资运营情况进行监督检查。被检查的用人单位和个人应当如实提供与社会保险有关的资料，不得拒绝检查或者谎报、瞒报。",
    );
    let triple = |object: &str| kg_build::extract::Triple {
        subject: "被检查的用人单位和个人".into(),
        relation: "主体-义务".into(),
        object: object.into(),
    };
    let user = kg_build::verify::user_prompt(&article, &triple("如实提供与社会保险有关的资料"));
    let p = chat
        .option_probabilities(
            kg_build::verify::system_prompt(),
            &user,
            &kg_build::verify::OPTIONS,
        )
        .expect("是 and 否 are one token each");
    assert_eq!(p.len(), 2);
    assert!(
        (p[0] + p[1] - 1.0).abs() < 1e-9 && p.iter().all(|x| *x > 0.0),
        "{p:?}"
    );
    // Only the prompt is read: no token is generated.
    let s = chat.last_stats();
    assert!(s.prompt_tokens > 50 && s.generated_tokens == 0, "{s:?}");
    // A judgement is one token, not a phrase.
    let err = chat
        .option_probabilities(
            kg_build::verify::system_prompt(),
            &user,
            &["是的，正确", "否"],
        )
        .unwrap_err();
    assert!(err.to_string().contains("not one token"), "{err}");
}

/// Replies decoded side by side (`complete_many`: one batch per step) are, in order, the
/// replies decoded one at a time — greedy both ways, so they can differ only where the
/// batch's floating-point summation order tips a near tie; their openings are compared.
#[test]
fn local_replies_decoded_side_by_side_match_those_decoded_alone() {
    let Some(chat) = chat() else { return };
    let _alone = one_test_at_a_time();
    let system = "用一句话回答。";
    let users = ["什么是劳动合同？", "什么是正当防卫？", "什么是不动产？"];
    let before = chat.totals().unwrap();
    let together = chat.complete_many(system, &users).unwrap();
    let spent = chat.totals().unwrap().since(&before);
    assert_eq!(spent.replies, 3, "{spent:?}");
    assert!(spent.generated_tokens > 3, "{spent:?}");
    assert_eq!(together.len(), 3);
    let head = |s: &str| s.trim().chars().take(12).collect::<String>();
    for (u, t) in users.iter().zip(&together) {
        let alone = chat.complete(system, u).unwrap();
        assert_eq!(
            head(t),
            head(&alone),
            "{u}: together {t:?}, alone {alone:?}"
        );
    }
}

/// Candidates judged together (`option_probabilities_many`: the question's tokens decoded
/// once, each article's in turn, its KV cache entries removed before the next) get the
/// probabilities they get judged one at a time, up to the arithmetic of a prompt decoded
/// in two batches instead of one; an article judged twice in one call gets the same
/// probability both times (a KV cache left holding the first article would change it).
#[test]
fn local_judgements_sharing_the_question_match_those_made_alone() {
    let Some(chat) = chat() else { return };
    let _alone = one_test_at_a_time();
    use query_engine::judge::{JUDGE_SYSTEM, OPTIONS, Shown, user_prompt};
    let q = "用人单位拖欠工资，劳动者可以解除劳动合同吗？";
    let first = Shown {
        law_title: "中华人民共和国劳动合同法",
        label: "第三十八条",
        text: "用人单位有下列情形之一的，劳动者可以解除劳动合同：（一）未按照劳动合同约定提供劳动保护或者劳动条件的；（二）未及时足额支付劳动报酬的；",
    };
    let second = || Shown {
        law_title: "中华人民共和国劳动合同法",
        label: "第十六条",
        text: "劳动合同由用人单位与劳动者协商一致，并经用人单位与劳动者在劳动合同文本上签字或者盖章生效。",
    };
    let articles = [first, second(), second()];
    let together = query_engine::judge::judge(chat, q, &articles).unwrap();
    assert_eq!(together.len(), 3);
    assert!(
        (together[1] - together[2]).abs() < 1e-6,
        "the same article judged twice: {together:?}"
    );
    for (a, t) in articles.iter().zip(&together).take(2) {
        let user = user_prompt(q, a.law_title, a.label, a.text);
        let alone = chat
            .option_probabilities(JUDGE_SYSTEM, &user, &OPTIONS)
            .unwrap()[0];
        assert!(
            (t - alone).abs() < 0.06,
            "together {together:?}, alone {alone}"
        );
    }
}
