//! `coal history` and `coal diff` over two versions of a law.

use super::*;

#[test]
fn history_and_diff_of_two_versions() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    build(&store, &fixtures().join("versions"));
    let s = store.to_str().unwrap();
    let out = coal(&[
        "history",
        "--store",
        s,
        "--json",
        "《中华人民共和国示范保障法》",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let h: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(h.as_array().unwrap().len(), 2);
    assert_eq!(h[0]["version_date"], "2018-10-26");
    assert_eq!(h[0]["valid_until"], "2022-10-30");
    assert_eq!(h[1]["articles"], 3);
    // By hand: 第一条 and 第二条 continue with changed text, 第三条 is new.
    let out = coal(&["diff", "--store", s, "--json", "示范保障法"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let d: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        d["counts"],
        serde_json::json!([["added", 1], ["modified", 2]]),
        "{d}"
    );
    assert_eq!(d["changes"][2]["kind"], "added");
    assert_eq!(d["changes"][2]["to"]["label"], "第三条");
    assert!(
        d["changes"][0]["from"]["text"]
            .as_str()
            .unwrap()
            .contains("制定本法")
    );
    // Versions by date in force, and the text diff in the plain output.
    let out = coal(&[
        "diff",
        "--store",
        s,
        "示范保障法",
        "--from",
        "2019-06-01",
        "--to",
        "2023-01-01",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("~ modified 第一条") && text.contains("+ added 第三条"),
        "{text}"
    );
    for (args, needle) in [
        (
            vec![
                "diff",
                "--store",
                s,
                "示范保障法",
                "--from",
                "2022-10-30",
                "--to",
                "2018-10-26",
            ],
            "older",
        ),
        (
            vec!["diff", "--store", s, "示范保障法", "--from", "2001-01-01"],
            "no version was in force",
        ),
        (vec!["history", "--store", s, "不存在法"], "no law named"),
    ] {
        let out = coal(&args);
        assert!(!out.status.success(), "{args:?}");
        assert!(stderr(&out).contains(needle), "{args:?}: {}", stderr(&out));
    }
}
