//! Parser tests on hand-written statutes: one per format fact and per bad-input kind.

use coal_corpus::*;

const MD: &str = "示范劳动法(2020-01-01).md";
const TXT: &str = "示范劳动法(2020-01-01).txt";

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!(
        "{}/tests/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

fn parse_ok(name: &str, bytes: &[u8]) -> (LawVersion, Vec<Problem>) {
    let out = parse_file(name, bytes);
    (out.version.expect("file parses"), out.problems)
}

fn kinds(problems: &[Problem]) -> Vec<ProblemKind> {
    problems.iter().map(|p| p.kind).collect()
}

#[test]
fn markdown_header_title_history_and_date() {
    let (v, problems) = parse_ok(MD, &fixture(MD));
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(v.title, "中华人民共和国示范劳动法");
    assert_eq!(v.short_name, "示范劳动法");
    assert_eq!(v.version_date, Date::new(2020, 1, 1));
    assert_eq!(v.history.len(), 2);
    assert_eq!(v.history[0].date, Date::new(2015, 6, 29));
    assert_eq!(v.history[0].source.line, 3);
    assert_eq!(v.files[0].format, SourceFormat::Markdown);
    assert_eq!(v.files[0].content_hash.len(), 64);
}

#[test]
fn headings_are_classified_by_text_not_depth() {
    let (v, _) = parse_ok(MD, &fixture(MD));
    let divs: Vec<(DivisionKind, &str, &str, Option<usize>)> = v
        .divisions
        .iter()
        .map(|d| (d.kind, d.label.as_str(), d.title.as_str(), d.parent))
        .collect();
    assert_eq!(
        divs,
        vec![
            (DivisionKind::Chapter, "第一章", "总则", None),
            (DivisionKind::Chapter, "第二章", "劳动合同", None),
            (DivisionKind::Section, "第一节", "订立", Some(1)),
            (DivisionKind::Section, "第二节", "解除", Some(1)),
            // `####` depth, still a chapter: it closes the open chapter and section.
            (DivisionKind::Chapter, "第三章", "法律责任", None),
            (DivisionKind::Chapter, "附则", "", None),
        ]
    );
    assert_eq!(v.divisions[0].heading, "第一章  总  则");
}

#[test]
fn articles_paragraphs_items_and_zhi_yi_suffixes() {
    let (v, _) = parse_ok(MD, &fixture(MD));
    let labels: Vec<&str> = v.articles.iter().map(|a| a.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "第一条",
            "第二条",
            "第三条",
            "第三条之一",
            "第四条",
            "第五条",
            "第六条"
        ]
    );
    let a3 = &v.articles[2];
    assert_eq!(a3.number, ArticleNumber { main: 3, suffix: 0 });
    assert_eq!(a3.paragraphs.len(), 2);
    assert_eq!(a3.paragraphs[0].items.len(), 3);
    assert_eq!(a3.paragraphs[0].items[2].label, "（三）");
    assert_eq!(a3.paragraphs[0].items[2].text, "（三）诚实信用。");
    assert_eq!(a3.paragraphs[1].text, "依法订立的劳动合同具有约束力。");
    assert_eq!(a3.division, Some(2));
    assert_eq!(v.articles[3].number, ArticleNumber { main: 3, suffix: 1 });
    assert_eq!(v.articles[3].number.label(), "第三条之一");
    // ASCII parentheses for items, too.
    assert_eq!(v.articles[4].paragraphs[0].items.len(), 2);
    assert_eq!(v.articles[4].paragraphs[0].items[1].number, 2);
    // Exact text and line numbers.
    assert_eq!(
        v.articles[1].text(),
        "第二条 本法适用于境内的用人单位。\n国家机关依照本法执行。"
    );
    assert_eq!(
        v.articles[1].body(),
        "本法适用于境内的用人单位。\n国家机关依照本法执行。"
    );
    assert_eq!(v.articles[0].source.line, 11);
    assert_eq!(v.articles[1].paragraphs[1].source.line, 15);
    assert_eq!(
        v.hierarchy_label(a3.division),
        "第二章 劳动合同 / 第一节 订立"
    );
}

#[test]
fn sub_items_stay_with_their_item_and_the_next_item_with_its_paragraph() {
    // 行政复议法 (2017) 第二十八条, shortened: 目 (1. 2.) under the third 项.
    let text = "# 示范复议法\n\n<!-- INFO END -->\n\n\
        第二十八条 按照下列规定作出行政复议决定：\n\n\
        （一）事实清楚的，决定维持；\n\n\
        （二）不履行法定职责的，决定其履行；\n\n\
        （三）有下列情形之一的，决定撤销：\n\n\
        1.主要事实不清的；\n\n\
        2．适用依据错误的；\n\n\
        （四）不提出书面答复的，视为没有证据。\n\n\
        前款规定的期限，不得延长。\n\n\
        3.另起一款的数字开头。\n";
    let (v, _) = parse_ok("示范复议法(2017-09-01).md", text.as_bytes());
    let a = &v.articles[0];
    assert_eq!(a.paragraphs.len(), 3, "{:#?}", a.paragraphs);
    let items = &a.paragraphs[0].items;
    assert_eq!(items.len(), 4);
    assert_eq!(
        items[2].text,
        "（三）有下列情形之一的，决定撤销：\n1.主要事实不清的；\n2．适用依据错误的；"
    );
    assert_eq!(items[3].label, "（四）");
    assert_eq!(a.paragraphs[1].text, "前款规定的期限，不得延长。");
    // A numbered line in a 款 without 项 is a 款 of its own.
    assert_eq!(a.paragraphs[2].text, "3.另起一款的数字开头。");
    // The article's text is line for line the file's.
    assert_eq!(
        a.text()
            .lines()
            .filter(|l| l.starts_with("1.") || l.starts_with("2．"))
            .count(),
        2
    );
}

#[test]
fn plain_text_gives_the_same_tree_as_markdown() {
    let (md, _) = parse_ok(MD, &fixture(MD));
    let (txt, problems) = parse_ok(TXT, &fixture(TXT));
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(txt.files[0].format, SourceFormat::PlainText);
    assert_eq!(txt.title, md.title);
    assert_eq!(txt.version_date, md.version_date);
    assert_eq!(txt.history.len(), 2);
    let tree = |v: &LawVersion| -> Vec<(String, String, Option<String>)> {
        v.articles
            .iter()
            .map(|a| {
                (
                    a.label.clone(),
                    a.text(),
                    a.division.map(|d| v.divisions[d].label.clone()),
                )
            })
            .collect()
    };
    assert_eq!(tree(&txt), tree(&md));
    let divs = |v: &LawVersion| {
        v.divisions
            .iter()
            .map(|d| (d.kind, d.label.clone(), d.parent))
            .collect::<Vec<_>>()
    };
    assert_eq!(divs(&txt), divs(&md));
}

#[test]
fn a_code_split_over_files_is_one_law_with_numbered_parts() {
    let names = ["code/物权编.md", "code/附则.md", "code/总则.md"];
    let files: Vec<(String, Vec<u8>)> = names.iter().map(|n| (n.to_string(), fixture(n))).collect();
    let refs: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice()))
        .collect();
    let corpus = load_from_memory(&refs);
    assert_eq!(corpus.laws.len(), 1, "{:?}", corpus.problems);
    let law = &corpus.laws[0];
    assert_eq!(law.versions.len(), 1);
    let v = &law.versions[0];
    assert_eq!(v.files.len(), 3);
    assert_eq!(v.files[0].path, "code/总则.md");
    assert_eq!(
        v.version_date,
        Date::new(2021, 1, 1),
        "date of the last history line"
    );
    let labels: Vec<String> = v.articles.iter().map(|a| a.number.label()).collect();
    assert_eq!(
        labels,
        ["第一条", "第二条", "第三条", "第四条", "第五条", "第六条"]
    );
    let parts: Vec<(String, String)> = v
        .divisions
        .iter()
        .filter(|d| d.kind == DivisionKind::Part)
        .map(|d| (d.label.clone(), d.title.clone()))
        .collect();
    assert_eq!(
        parts,
        [
            ("第一编".into(), "总则".into()),
            ("第二编".into(), "物权".into()),
            ("附则".into(), String::new())
        ]
    );
    assert_eq!(
        v.hierarchy_label(v.articles[3].division),
        "第二编 物权 / 第一分编 通则 / 第一章 一般规定"
    );
    assert_eq!(v.articles[3].source.file, 1);
    assert_eq!(v.files[v.articles[3].source.file].path, "code/物权编.md");
    assert!(corpus.problems.is_empty(), "{:?}", corpus.problems);
}

#[test]
fn versions_of_one_law_are_one_work_in_date_order() {
    let names = [
        "versions/示范保障法(2022-10-30).md",
        "versions/示范保障法(2018-10-26).md",
    ];
    let files: Vec<(String, Vec<u8>)> = names.iter().map(|n| (n.to_string(), fixture(n))).collect();
    let refs: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice()))
        .collect();
    let corpus = load_from_memory(&refs);
    assert_eq!(corpus.laws.len(), 1);
    let dates: Vec<String> = corpus.laws[0]
        .versions
        .iter()
        .map(|v| v.version_date.unwrap().to_string())
        .collect();
    assert_eq!(dates, ["2018-10-26", "2022-10-30"]);
    assert_eq!(corpus.laws[0].latest().articles.len(), 3);
}

#[test]
fn byte_identical_duplicates_are_skipped_with_a_warning() {
    let b = fixture(MD);
    let corpus = load_from_memory(&[
        ("社会法/a(2020-01-01).md", &b),
        ("经济法/a(2020-01-01).md", &b),
    ]);
    assert_eq!(corpus.versions().count(), 1);
    assert_eq!(kinds(&corpus.problems), [ProblemKind::DuplicateFile]);
    assert!(
        corpus.problems[0]
            .message
            .contains("社会法/a(2020-01-01).md")
    );
}

#[test]
fn same_version_with_different_text_is_reported() {
    let a = fixture(MD);
    let mut b = a.clone();
    b.extend_from_slice("\n第七条 另一条。\n".as_bytes());
    let corpus = load_from_memory(&[("x/a(2020-01-01).md", &a), ("y/a(2020-01-01).md", &b)]);
    assert_eq!(corpus.versions().count(), 1);
    assert_eq!(kinds(&corpus.problems), [ProblemKind::ConflictingVersion]);
}

fn problems_of(text: &[u8]) -> (Option<LawVersion>, Vec<Problem>) {
    let out = parse_file("bad.md", text);
    (out.version, out.problems)
}

#[test]
fn empty_file_is_an_error() {
    let (v, p) = problems_of(b"  \n\n");
    assert!(v.is_none());
    assert_eq!(kinds(&p), [ProblemKind::EmptyFile]);
    assert_eq!(p[0].severity, Severity::Error);
}

#[test]
fn missing_title_falls_back_to_the_file_name() {
    let out = parse_file(
        "社会法/无题法(2020-01-01).md",
        "2020年1月1日 通过\n\n<!-- INFO END -->\n\n第一条 内容。\n".as_bytes(),
    );
    let v = out.version.unwrap();
    assert_eq!(v.title, "无题法");
    assert_eq!(kinds(&out.problems), [ProblemKind::MissingTitle]);
    assert_eq!(out.problems[0].line, Some(1));
}

#[test]
fn missing_info_end_is_a_warning_and_the_header_still_ends() {
    let (v, p) = problems_of(
        "# 中华人民共和国某法\n\n2020年1月1日 通过\n\n## 第一章 总则\n\n第一条 内容。\n".as_bytes(),
    );
    let v = v.unwrap();
    assert_eq!(kinds(&p), [ProblemKind::MissingInfoEnd]);
    assert_eq!(v.history.len(), 1);
    assert_eq!(v.articles.len(), 1);
    assert_eq!(v.divisions.len(), 1);
}

#[test]
fn unknown_heading_is_reported_with_its_line() {
    let (v, p) = problems_of("# 某法\n<!-- INFO END -->\n## 杂项说明\n第一条 内容。\n".as_bytes());
    assert_eq!(kinds(&p), [ProblemKind::UnknownHeading]);
    assert_eq!(p[0].line, Some(3));
    assert_eq!(v.unwrap().divisions[0].kind, DivisionKind::Other);
}

#[test]
fn duplicate_missing_and_out_of_order_article_numbers() {
    let text = "# 某法\n<!-- INFO END -->\n第一条 甲。\n第二条 乙。\n第二条 丙。\n第五条 丁。\n第四条 戊。\n";
    let (v, p) = problems_of(text.as_bytes());
    assert_eq!(v.unwrap().articles.len(), 5);
    assert_eq!(
        kinds(&p),
        [
            ProblemKind::DuplicateArticleNumber,
            ProblemKind::MissingArticleNumber,
            ProblemKind::OutOfOrderArticle
        ]
    );
    let lines: Vec<_> = p.iter().map(|p| p.line.unwrap()).collect();
    assert_eq!(lines, [5, 6, 7]);
}

#[test]
fn gbk_bytes_are_invalid_utf8_with_the_line() {
    let mut bytes = "# 某法\n<!-- INFO END -->\n第一条 甲。\n"
        .as_bytes()
        .to_vec();
    bytes.extend_from_slice(&[0xb5, 0xda, 0xb6, 0xfe, 0xcc, 0xf5, b'\n']); // 第二条 in GBK
    let (v, p) = problems_of(&bytes);
    assert!(v.is_none());
    assert_eq!(kinds(&p), [ProblemKind::InvalidUtf8]);
    assert_eq!(p[0].line, Some(4));
    assert!(p[0].to_string().starts_with("bad.md:4:"), "{}", p[0]);
}

#[test]
fn a_ten_megabyte_line_is_skipped_and_the_rest_parses() {
    let mut text = "# 某法\n<!-- INFO END -->\n第一条 甲。\n".to_owned();
    text.push_str(&"长".repeat(10 * 1024 * 1024 / 3));
    text.push_str("\n第二条 乙。\n");
    let (v, p) = problems_of(text.as_bytes());
    assert_eq!(kinds(&p), [ProblemKind::LineTooLong]);
    assert_eq!(p[0].line, Some(4));
    let v = v.unwrap();
    assert_eq!(v.articles.len(), 2);
    assert_eq!(v.articles[0].text(), "第一条 甲。");
}

#[test]
fn binary_junk_is_refused() {
    let bytes: Vec<u8> = (0..4096u32).map(|i| (i * 7 % 256) as u8).collect();
    let (v, p) = problems_of(&bytes);
    assert!(v.is_none());
    assert_eq!(kinds(&p), [ProblemKind::BinaryContent]);
}

#[test]
fn the_date_comes_from_the_last_history_line_without_a_file_date() {
    let out = parse_file(
        "刑法/某法.md",
        "# 某法\n1997年3月14日 通过\n2023年12月29日 修正\n<!-- INFO END -->\n第一条 甲。\n"
            .as_bytes(),
    );
    assert_eq!(out.version.unwrap().version_date, Date::new(2023, 12, 29));
}

#[test]
fn problems_display_file_line_and_kind() {
    let p = Problem::warning("a/b.md", Some(7), ProblemKind::UnknownHeading, "x");
    assert_eq!(p.to_string(), "a/b.md:7: warning [unknown_heading]: x");
}

#[test]
fn folder_and_profile_loading_with_exclusions() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("社会法")).unwrap();
    std::fs::create_dir_all(root.join("案例")).unwrap();
    std::fs::write(root.join("社会法/示范劳动法(2020-01-01).md"), fixture(MD)).unwrap();
    std::fs::write(root.join("社会法/_index.md"), "---\ntitle: x\n---").unwrap();
    std::fs::write(root.join("案例/案例一.md"), "# 案例\n").unwrap();
    let corpus = load_corpus(&CorpusSpec::folder(root), &|_, _| {}).unwrap();
    assert_eq!(corpus.files_read, 1);
    assert_eq!(
        corpus.versions().next().unwrap().files[0].path,
        "社会法/示范劳动法(2020-01-01).md"
    );

    std::fs::write(root.join("p.txt"), "社会法/示范劳动法(2020-01-01).md\n\n").unwrap();
    let corpus = load_corpus(
        &CorpusSpec::folder(root).with_profile(root.join("p.txt")),
        &|_, _| {},
    )
    .unwrap();
    assert_eq!(corpus.article_count(), 7);

    std::fs::write(root.join("bad.txt"), "社会法/不存在.md\n").unwrap();
    let err = load_corpus(
        &CorpusSpec::folder(root).with_profile(root.join("bad.txt")),
        &|_, _| {},
    )
    .unwrap_err();
    assert!(err.to_string().contains(":1: the profile names"), "{err}");
    let err = load_corpus(&CorpusSpec::folder(root.join("nope")), &|_, _| {}).unwrap_err();
    assert!(err.to_string().contains("does not exist"), "{err}");
}

#[test]
fn headings_without_a_space_after_the_label() {
    for (text, label, title) in [
        ("第一章总则", "第一章", "总则"),
        ("第五章“上海文化”品牌建设", "第五章", "“上海文化”品牌建设"),
        ("第二节  监  护", "第二节", "监护"),
    ] {
        let h = classify_heading(text).unwrap();
        assert_eq!(
            (h.label.as_str(), h.title.as_str()),
            (label, title),
            "{text}"
        );
    }
    assert_eq!(
        classify_heading("第一分编 通则").unwrap().kind,
        DivisionKind::SubPart
    );
    assert_eq!(
        classify_heading("一、一般规定").unwrap().kind,
        DivisionKind::Chapter
    );
    assert_eq!(
        classify_heading("附件：标准").unwrap().kind,
        DivisionKind::Appendix
    );
    assert!(classify_heading("杂项").is_none());
}

#[test]
fn text_before_the_first_article_is_one_warning() {
    let (v, p) =
        problems_of("# 某决定\n<!-- INFO END -->\n前言一。\n前言二。\n第一条 甲。\n".as_bytes());
    assert_eq!(kinds(&p), [ProblemKind::TextOutsideArticle]);
    assert_eq!(p[0].line, Some(3));
    assert!(p[0].message.starts_with("2 paragraph(s)"));
    assert_eq!(v.unwrap().preamble.len(), 2);
}

#[test]
fn a_corpus_folder_of_symlinks_is_read_like_real_files() {
    let dir = tempfile::tempdir().unwrap();
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let root = dir.path().join("corpus");
    std::fs::create_dir_all(root.join("法律")).unwrap();
    std::os::unix::fs::symlink(
        fixtures.join("versions/示范保障法(2018-10-26).md"),
        root.join("法律/示范保障法(2018-10-26).md"),
    )
    .unwrap();
    // A linked folder too.
    std::os::unix::fs::symlink(fixtures.join("code"), root.join("code")).unwrap();
    let corpus =
        coal_corpus::load_corpus(&coal_corpus::CorpusSpec::folder(&root), &|_, _| {}).unwrap();
    let names: Vec<&str> = corpus.laws.iter().map(|l| l.short_name.as_str()).collect();
    assert!(names.contains(&"示范保障法"), "{names:?}");
    assert_eq!(corpus.laws.len(), 2, "{names:?}");
    let files: Vec<&str> = corpus
        .laws
        .iter()
        .flat_map(|l| &l.versions)
        .flat_map(|v| &v.files)
        .map(|f| f.path.as_str())
        .collect();
    assert!(
        files.contains(&"法律/示范保障法(2018-10-26).md"),
        "the link's own path: {files:?}"
    );
}
