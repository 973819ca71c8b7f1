//! Triples the local 1.5B model extracted and that were checked by hand against the
//! article text: 100 from 劳动合同法 (`tests/fixtures/checked-triples.jsonl`; sampled with
//! a fixed seed from 215 valid triples of 45 articles) and 100 from 工会法 and 义务教育法
//! (`checked-triples-heldout.jsonl`), and all 98 that a build with today's grounding kept
//! of 社会保险法, a law no rule was written from (`checked-triples-unseen.jsonl`,
//! `make extraction-sample-unseen`), all 49 of 残疾人保障法 and all 94 of 劳动法 (judged
//! before the rules written on the first four ran on it), then all that a build kept of
//! 老年人权益保障法 (55), of 教育法 with 人口与计划生育法 (159) and of 高等教育法 with
//! 职业病防治法 (133), each judged before the rules written on the sample before it ran on
//! it. These tests keep the samples honest: every triple
//! passes the extraction schema, names a real article of the statute, and one judged
//! correct is grounded in that article's text; the precision the notes report is the one
//! the files hold.

use std::collections::{HashMap, HashSet};

use coal_tests::lawrefbook;

use kg_build::verify::CheckedTriple as Checked;

/// Character bigrams of `s` (punctuation included: the article text has it too).
fn bigrams(s: &str) -> HashSet<(char, char)> {
    let c: Vec<char> = s.chars().collect();
    c.windows(2).map(|w| (w[0], w[1])).collect()
}

/// What the build's grounding check makes of one hand-checked sample.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    /// Triples judged correct in the sample.
    correct: usize,
    /// Kept by the grounding check and judged correct / wrong; correct ones it refuses.
    kept_right: usize,
    kept_wrong: usize,
    lost_right: usize,
    /// The same over the sample's distinct triples (a reply may repeat one, and the
    /// build keeps each distinct triple of an article once).
    distinct: usize,
    distinct_kept_right: usize,
    distinct_kept_wrong: usize,
}

/// Reads a sample, checks that it is real (every triple passes the extraction schema and
/// names a real article; one judged correct is grounded in that article), and grounds it.
fn ground_sample(text: &str, size: usize) -> Outcome {
    let checked: Vec<Checked> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a checked triple"))
        .collect();
    assert_eq!(checked.len(), size);
    // Per law: its title, and each article's text as the prompt gave it (and its body,
    // which the build's grounding check reads).
    type Law = (String, HashMap<String, (String, String)>);
    let mut articles: HashMap<String, Law> = HashMap::new();
    let mut outcome = Outcome {
        correct: 0,
        kept_right: 0,
        kept_wrong: 0,
        lost_right: 0,
        distinct: 0,
        distinct_kept_right: 0,
        distinct_kept_wrong: 0,
    };
    let mut seen = HashSet::new();
    for c in &checked {
        let (title, law) = articles.entry(c.law.clone()).or_insert_with(|| {
            let bytes = std::fs::read(lawrefbook().join(&c.law)).expect("the statute file");
            let v = coal_corpus::parse_file(&c.law, &bytes)
                .version
                .expect("parses");
            let arts = v
                .articles
                .iter()
                .map(|a| (a.label.clone(), (a.text(), a.body())))
                .collect();
            (v.title.clone(), arts)
        });
        let (article, body) = law
            .get(&c.article)
            .unwrap_or_else(|| panic!("{} has no {}", c.law, c.article));
        let triple = c.triple();
        let grounded = kg_build::grounding::check(&triple, body, title).is_ok();
        outcome.correct += c.correct as usize;
        match (grounded, c.correct) {
            (true, true) => outcome.kept_right += 1,
            (true, false) => outcome.kept_wrong += 1,
            (false, true) => outcome.lost_right += 1,
            (false, false) => {}
        }
        if seen.insert((&c.law, &c.article, &c.subject, &c.relation, &c.object)) {
            outcome.distinct += 1;
            match (grounded, c.correct) {
                (true, true) => outcome.distinct_kept_right += 1,
                (true, false) => outcome.distinct_kept_wrong += 1,
                _ => {}
            }
        }
        // The reply passed the schema the build applies.
        let reply = serde_json::json!({"triples": [{"subject": c.subject, "relation": c.relation, "object": c.object}]});
        let (valid, invalid) = kg_build::extract::parse_reply(&reply.to_string()).unwrap();
        assert_eq!((valid.len(), invalid), (1, 0), "{} {}", c.article, c.object);
        if c.correct {
            // A triple judged correct says what its article says: most of its object's
            // bigrams are in the article.
            let object = bigrams(&c.object);
            let shared = object.intersection(&bigrams(article)).count();
            assert!(
                shared * 10 >= object.len() * 6,
                "{} judged correct but not grounded: {} ({shared}/{})",
                c.article,
                c.object,
                object.len()
            );
        }
    }
    outcome
}

/// 劳动合同法, sampled (seed 18) from the raw replies before any grounding existed; the
/// first grounding rules were written after reading it, so its figures are optimistic.
#[test]
fn the_hand_checked_extraction_sample_is_real_and_reports_its_precision() {
    let got = ground_sample(include_str!("../fixtures/checked-triples.jsonl"), 100);
    // The figure in the notes: 20 of 100 correct (strict reading: the relation must fit).
    assert_eq!(got.correct, 20);
    // Kept: 13 right, 5 wrong (72%; 10 wrong before the clause-actor rules, 6 before the
    // fifth sample's); 7 right ones refused (one of them, 用人单位 条件-结果 …可以解除劳动
    // 合同, was judged right leniently: its subject is no condition).
    assert!(got.kept_right * 2 > got.kept_right + got.kept_wrong && got.kept_right >= 12);
    assert_eq!((got.kept_right, got.kept_wrong, got.lost_right), (13, 5, 7));
}

/// 工会法 and 义务教育法, sampled (seed 20261202) from the triples a build had kept (the
/// grounding of stop 19, before the drafting conventions), judged by the same strict
/// reading: the shipped pipeline's precision on laws its first rules never saw.
#[test]
fn the_held_out_sample_measures_the_grounding_on_other_laws() {
    let got = ground_sample(
        include_str!("../fixtures/checked-triples-heldout.jsonl"),
        100,
    );
    // Everything in it had passed the earlier checks: 53 of 100 right, 52 of 82 distinct.
    assert_eq!((got.correct, got.distinct), (53, 82));
    // With the drafting conventions (written after reading this sample, so optimistic
    // too): 53 right and 9 wrong kept (85%), no right one lost; with the clause-actor
    // rules 7 wrong (88%); with the fifth sample's rules (not written on this one) 4
    // wrong (93%); with the sixth's (nor this one) 3 (95%); distinct 52 and 3.
    assert_eq!((got.kept_right, got.kept_wrong, got.lost_right), (53, 3, 0));
    assert_eq!((got.distinct_kept_right, got.distinct_kept_wrong), (52, 3));
}

/// 社会保险法, extracted after the drafting conventions were written (`make
/// extraction-sample-unseen`: the 1.5B model, 98 articles, 544 triples proposed): every
/// triple that build kept, judged by the same strict reading. The goal is 80%.
#[test]
fn the_unseen_sample_measures_the_shipped_pipeline() {
    let got = ground_sample(include_str!("../fixtures/checked-triples-unseen.jsonl"), 98);
    // 66 of 98 right (67%): the pipeline's precision on a law it had not seen. The wrong
    // ones: the authority that imposes a sanction taken as the liable party (由…责令/处,
    // 8), a bare noun as what the law 规定s (7), a right, duty or liability given to the
    // wrong actor or with its negation dropped (9), a condition clause as the subject of a
    // right (3), a truncated or empty object (5).
    assert_eq!(got.correct, 66);
    // The 由 rule (`SanctionImposer`), written after reading this sample (so optimistic):
    // the 8 imposers refused, no right triple lost: 66 right of 90 kept (73%). The
    // clause-actor rules (also written on it) refuse 9 more wrong ones: 66 of 81 (81%);
    // the fifth sample's rules (not written on it) 4 more: 66 of 77 (86%); the sixth's
    // 1 more: 66 of 76 (87%); the seventh's 1 more: 66 of 75 (88%).
    assert_eq!((got.kept_right, got.kept_wrong, got.lost_right), (66, 9, 0));
    assert_eq!(got.distinct, 98);
}

/// 残疾人保障法, extracted after the model's second look (`kg_build::verify`) was written
/// and judged by hand before it was run on them (`make extraction-sample-fourth`: the
/// 1.5B model, 68 articles, 353 triples proposed): every triple that build kept.
#[test]
fn the_fourth_sample_measures_the_grounding_and_the_verification() {
    let got = ground_sample(include_str!("../fixtures/checked-triples-fourth.jsonl"), 49);
    // 30 of 49 right (61%). The wrong ones: a right or duty given to the wrong actor (国家
    // 主体-权利 …, the one who must encourage taken as the one who acts, 盲人 for 残疾人: 8),
    // a term or a phrase as what the law 规定s, defines or cites (4), the purpose of a duty
    // taken as the duty (提高其…: 2), a condition clause as the liable party (2), a duty
    // taken as a right (1), a nonsense right (有适度弹性, 1), 违反本法规定 引用 … (1).
    assert_eq!(got.correct, 30);
    // The clause-actor rules, written after reading it: 10 of the 19 wrong refused, no
    // right one lost (61% → 77%); the fifth sample's rules 3 more (83%).
    assert_eq!((got.kept_right, got.kept_wrong, got.lost_right), (30, 6, 0));
}

/// 劳动法, extracted and judged by hand after the clause-actor rules were written on the
/// other four samples, before any of them ran on it (`make extraction-sample-fifth`: the
/// 1.5B model, 107 articles, 94 triples kept by the grounding of the build before those
/// rules): the honest measure of what the rules add on a law they never saw.
#[test]
fn the_fifth_sample_measures_the_clause_actor_rules_on_an_unseen_law() {
    let got = ground_sample(include_str!("../fixtures/checked-triples-fifth.jsonl"), 94);
    // 59 of 94 right (63%). The wrong ones: fragments of a clause or noun phrases as what
    // the law 规定s (（一）… items, 无效的劳动合同, 由…确认, 制定本法: 10); a right, duty or
    // liability given to the wrong party (the other actor of the clause, the authority
    // that imposes the sanction, the victim) or with a bare or truncated object (25).
    assert_eq!(got.correct, 59);
    // The new rules refuse 6 wrong ones and no right one: 59 of 88 kept (67%). The rules
    // written on this sample's wrong triples afterwards (so optimistic here) refuse 18
    // more: 59 of 70 (84%); the sixth sample measures them. The seventh sample's rules
    // (not written on it) 1 more: 59 of 69 (86%).
    assert_eq!(
        (got.kept_right, got.kept_wrong, got.lost_right),
        (59, 10, 0)
    );
}

/// 老年人权益保障法, extracted after the fifth sample's rules were written (`make
/// extraction-sample-sixth`: the 1.5B model, 85 articles, 2 threads, 22.4 s an article,
/// 326 valid triples proposed and 90 invalid, 271 refused by the grounding): every one that
/// build kept, judged by hand by the same strict reading before any rule changed. The honest
/// measure of the grounding on a law it was not written on.
#[test]
fn the_sixth_sample_measures_the_fifth_samples_rules_on_an_unseen_law() {
    let got = ground_sample(include_str!("../fixtures/checked-triples-sixth.jsonl"), 55);
    // 41 of 55 right (74.5%; goal 80%). The wrong ones: a right or duty of the other party
    // of the clause (遗赠扶养协议's obligor, 接受赠与 for the relatives: 3), conduct listed
    // as a condition or a noun phrase as what the law 规定s (干涉老年人婚姻自由…, 优待和照顾,
    // 民族自治地方的人民代表大会: 6), the purpose of a duty taken as the duty (实现老有所养…),
    // a prohibition with its 不得以任何方式 dropped, an exemption taken as a duty, and a
    // bare noun as a right (老年人组织, 意见和建议: 4).
    assert_eq!(got.correct, 41);
    // Every triple in it is one the rules of 2b605e4 kept. The rules written on its wrong
    // triples afterwards (so optimistic here) refuse 12 of the 14 and no right one: 41 of
    // 43 (95%); the seventh sample measures them.
    assert_eq!((got.kept_right, got.kept_wrong, got.lost_right), (41, 2, 0));
}

/// 教育法 and 人口与计划生育法, extracted after the sixth sample's rules were written (`make
/// extraction-sample-seventh`: the 1.5B model, 134 articles, 2 threads on an idle machine,
/// 8.2 s an article, 159 triples kept of 641 proposed, 66 invalid, 414 refused by the
/// grounding, 1 reply skipped): every one that build kept, judged by hand before any rule
/// changed. The reading of the earlier samples: a 规定 object is right when it states on its
/// own what the article provides (a whole provision, a purpose, a measure whose dropped
/// actor is its sentence's: 国家采取综合措施，…提高人口素质 → 提高人口素质); wrong when it is
/// a bare noun (纪律, 实践能力), one item of a 下列 list, or a piece of a statement that is
/// no provision (提高人民综合素质 of 对…具有决定性意义).
#[test]
fn the_seventh_sample_measures_the_sixth_samples_rules_on_unseen_laws() {
    let got = ground_sample(
        include_str!("../fixtures/checked-triples-seventh.jsonl"),
        159,
    );
    // 112 of 159 right (70.4%; goal 80%); 58.5% if a measure whose actor the triple drops
    // counted as wrong too (19 triples). Rights, duties, liabilities and the rest: 59 of 67
    // (88%); 规定: 53 of 92 (58%). The wrong 规定s: one item of a 下列 list (学校…行使下列
    // 权利：（一）按照章程自主管理… → 自主管理: 14), a bare noun (纪律, 九年制义务教育制度,
    // 前款规定所需经费: 19), a piece of a statement (6).
    assert_eq!(got.correct, 112);
    // Every triple in it is one the rules of f72f244 kept. The rules written on its wrong
    // triples afterwards (so optimistic here) refuse 37 of the 47 and no right one: 112 of
    // 122 (92%); the model's second look at .75 gave 78.2% before them (111 right, 31
    // wrong, 1 right lost: `make eval-triples`).
    assert_eq!(
        (got.kept_right, got.kept_wrong, got.lost_right),
        (112, 10, 0)
    );
}

/// 高等教育法 and 职业病防治法, extracted after the seventh sample's rules were written
/// (`make extraction-sample-eighth`: the 1.5B model, 157 articles, 2 threads on an idle
/// machine, 9.6 s an article, 133 triples kept of 1,069 proposed, 144 invalid, 791 refused
/// by the grounding, 23 replies cut at max_tokens): every one that build kept, judged by
/// hand before any rule changed, by the seventh sample's reading.
#[test]
fn the_eighth_sample_measures_the_seventh_samples_rules_on_unseen_laws() {
    let got = ground_sample(
        include_str!("../fixtures/checked-triples-eighth.jsonl"),
        133,
    );
    // 95 of 133 right (71.4%; goal 80%). Rights, duties, liabilities and the rest: 69 of
    // 85 (81%); 规定: 26 of 48 (54%). The wrong 规定s: nouns or noun phrases (高等教育,
    // 职业卫生监督制度, 设立高等学校的基本条件: 18) and pieces of a sentence (国务院制定,
    // 建立用人单位负责: 4); the wrong others: a noun as a duty (聘任合同, 职业病防治法律、
    // 法规: 5), a liability of the wrong party or no liability (提请…责令关闭, the employer's
    // 刑事责任, a duty as a liability: 3), a condition as the subject or the object (3),
    // others (5).
    assert_eq!(got.correct, 95);
    assert_eq!(
        (got.kept_right, got.kept_wrong, got.lost_right),
        (95, 38, 0)
    );
}

/// The first 60 articles of 安全生产法, extracted with `[llm] skip_relations = ["规定"]`
/// (chosen after the sixth to eighth samples, whose other relations were right for 83%
/// of triples as judged: `make extraction-sample-ninth`, 9.2 s an article, 37 triples
/// kept): every one that build kept, judged by hand before any rule changed. The measure
/// of leaving 规定 out, on a law nothing was written on.
#[test]
fn the_ninth_sample_measures_leaving_the_provides_relation_out() {
    let got = ground_sample(include_str!("../fixtures/checked-triples-ninth.jsonl"), 37);
    // 27 of 37 right (73.0%; goal 80%). The wrong ones: a duty or a right taken as a
    // liability (3), a noun as a right or duty (安全生产条件, 防范措施: 3), the other
    // party's act as the subject's right (接到报告的部门, 依法及时处理: 2), a prohibition
    // with its 不得 dropped (1), a duty garbled (…有关部门备案: 1).
    assert_eq!(got.correct, 27);
    assert_eq!(
        (got.kept_right, got.kept_wrong, got.lost_right),
        (27, 10, 0)
    );
}

/// 药品管理法 and the first 75 articles of 食品安全法 (230 articles), extracted as a user
/// would turn the local model on for precision, both keys chosen before this sample was
/// extracted: `skip_relations = ["规定"]` and the model's second look at the threshold
/// chosen on the first two samples, `verify_triples = 0.75` (`make
/// extraction-sample-tenth`, 7.8 s an article, 117 triples past the grounding, 7 refused
/// by the verification, 110 kept): every kept one judged by hand before any rule changed.
#[test]
fn the_tenth_sample_measures_the_extraction_with_its_precision_keys_on_unseen_laws() {
    let got = ground_sample(include_str!("../fixtures/checked-triples-tenth.jsonl"), 110);
    // 91 of 110 right (82.7%; goal 80%). The wrong ones: conduct or a thing as the
    // party (生产、销售劣药, 生产、销售的中药饮片, 从事药品经营活动, a condition clause: 8),
    // a sanction on the responsible persons given to their body (没收违法所得 of 药品检验
    // 机构, 依法从重给予处分 of the department: 3), a duty, power or policy taken as a
    // liability (承担社会责任, 可以责令…, 国家鼓励…, …责任制: 4), a noun as a duty (3),
    // the other party's joint liability (1).
    assert_eq!(got.correct, 91);
    assert_eq!(
        (got.kept_right, got.kept_wrong, got.lost_right),
        (91, 19, 0)
    );
}
