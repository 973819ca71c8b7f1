//! `coal bench encoder`'s single-question measurement: fixed questions, or those of the
//! question sets given.

use super::*;

#[test]
fn bench_encoder_times_each_question_of_the_sets_given() {
    let set = eval_fixture("answers.jsonl");
    let questions = std::fs::read_to_string(&set).unwrap().lines().count();
    let profile = eval_fixture("ask_profile.txt");
    let corpus = fixtures();
    let run = |extra: &[&str]| {
        let mut args = vec![
            "bench",
            "encoder",
            "--corpus",
            corpus.to_str().unwrap(),
            "--profile",
            profile.to_str().unwrap(),
            "--articles",
            "2",
            "--repeat",
            "2",
        ];
        args.extend_from_slice(extra);
        coal(&args)
    };
    let fixed = run(&[]);
    assert!(fixed.status.success(), "{}", stderr(&fixed));
    assert!(stdout(&fixed).contains("over 6 runs"), "{}", stdout(&fixed));
    let s = set.to_str().unwrap();
    let sets = run(&["--questions", s, "--questions", s]);
    assert!(sets.status.success(), "{}", stderr(&sets));
    let want = format!("over {} runs", 2 * 2 * questions);
    assert!(stdout(&sets).contains(&want), "{want}: {}", stdout(&sets));
    let missing = run(&["--questions", "/nonexistent/questions.jsonl"]);
    assert!(!missing.status.success());
    assert!(
        stderr(&missing).contains("/nonexistent/questions.jsonl"),
        "{}",
        stderr(&missing)
    );
}
