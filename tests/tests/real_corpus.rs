//! The parser on the real statute snapshot in ../shared.

use coal_corpus::{CorpusSpec, Severity, load_corpus};
use coal_tests::{lawrefbook, profile, profile_entries};
use regex::Regex;

#[test]
fn every_national_law_parses_without_error() {
    let corpus = load_corpus(
        &CorpusSpec::folder(lawrefbook()).with_profile(profile("laws")),
        &|_, _| {},
    )
    .unwrap();
    let errors: Vec<_> = corpus
        .problems
        .iter()
        .filter(|p| p.severity == Severity::Error)
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    assert_eq!(corpus.files_read, 359);
    assert!(
        corpus.article_count() > 20_000,
        "{}",
        corpus.article_count()
    );
}

#[test]
fn article_counts_match_an_independent_count_for_every_eval_file() {
    let article = Regex::new(
        r"(?m)^第[一二三四五六七八九十百千零〇]+条(之[一二三四五六七八九十]+)?[ \x{3000}]",
    )
    .unwrap();
    for entry in profile_entries("eval") {
        let path = lawrefbook().join(&entry);
        let raw = std::fs::read_to_string(&path).unwrap();
        let expected = article.find_iter(&raw).count();
        let out = coal_corpus::parse_file(&entry, raw.as_bytes());
        let v = out
            .version
            .unwrap_or_else(|| panic!("{entry}: {:?}", out.problems));
        assert_eq!(v.articles.len(), expected, "{entry}");
    }
}

#[test]
fn the_civil_code_is_one_law_of_1260_articles_over_eight_files() {
    let spec = CorpusSpec {
        files: vec![],
        ..CorpusSpec::folder(lawrefbook().join("民法典"))
    };
    let corpus = load_corpus(&spec, &|_, _| {}).unwrap();
    assert_eq!(
        corpus.laws.len(),
        1,
        "{:?}",
        corpus
            .laws
            .iter()
            .map(|l| &l.short_name)
            .collect::<Vec<_>>()
    );
    let law = &corpus.laws[0];
    assert_eq!(law.short_name, "民法典");
    assert_eq!(law.versions.len(), 1);
    let v = &law.versions[0];
    assert_eq!(v.files.len(), 8);
    assert_eq!(v.articles.len(), 1260);
    assert_eq!(v.articles.first().unwrap().number.main, 1);
    assert_eq!(v.articles.last().unwrap().number.main, 1260);
    // Numbers run on without a gap or repeat across the eight files.
    for (i, a) in v.articles.iter().enumerate() {
        assert_eq!(a.number.main as usize, i + 1);
    }
    let parts: Vec<String> = v
        .divisions
        .iter()
        .filter(|d| d.kind == coal_corpus::DivisionKind::Part)
        .map(|d| format!("{}{}", d.label, d.title))
        .collect();
    assert_eq!(
        parts,
        [
            "第一编总则",
            "第二编物权",
            "第三编合同",
            "第四编人格权",
            "第五编婚姻家庭",
            "第六编继承",
            "第七编侵权责任",
            "附则"
        ]
    );
    let errors: Vec<_> = corpus
        .problems
        .iter()
        .filter(|p| p.severity == Severity::Error)
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn criminal_law_keeps_its_zhi_yi_articles() {
    let out = coal_corpus::parse_file(
        "刑法/刑法.md",
        &std::fs::read(lawrefbook().join("刑法/刑法.md")).unwrap(),
    );
    let v = out.version.unwrap();
    let a = v
        .articles
        .iter()
        .find(|a| a.label == "第一百三十三条之一")
        .expect("第一百三十三条之一 present");
    assert_eq!(a.number.main, 133);
    assert_eq!(a.number.suffix, 1);
    assert!(a.text().contains("驾驶机动车"), "{}", a.text());
    assert!(v.articles.iter().filter(|a| a.number.suffix > 0).count() > 30);
    // 刑法 has 编 → 章 → 节.
    assert!(
        v.divisions
            .iter()
            .any(|d| d.kind == coal_corpus::DivisionKind::Part)
    );
    assert!(
        v.divisions
            .iter()
            .any(|d| d.kind == coal_corpus::DivisionKind::Section)
    );
}

#[test]
fn womens_rights_law_2018_and_2022_are_two_versions_of_one_work() {
    let corpus = load_corpus(
        &CorpusSpec::folder(lawrefbook()).with_profile(profile("social16")),
        &|_, _| {},
    )
    .unwrap();
    let law = corpus.law("妇女权益保障法").expect("law present");
    let dates: Vec<String> = law
        .versions
        .iter()
        .map(|v| v.version_date.unwrap().to_string())
        .collect();
    assert_eq!(dates, ["2018-10-26", "2022-10-30"]);
    assert_ne!(
        law.versions[0].content_hash(),
        law.versions[1].content_hash()
    );
}
