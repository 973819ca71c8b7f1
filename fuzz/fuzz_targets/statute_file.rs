//! Any bytes as a statute file: the parser never panics, and what it returns is
//! consistent — problems name the file and a line of it; a parsed version's articles
//! have text and lines within the file.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = "民法商法/示范法(2020-01-01).md";
    let out = coal_corpus::parse_file(path, data);
    let lines = data.split(|&b| b == b'\n').count();
    for p in &out.problems {
        assert_eq!(p.file, path);
        if let Some(line) = p.line {
            assert!(
                line >= 1 && line <= lines,
                "problem at line {line} of {lines}"
            );
        }
    }
    if let Some(v) = &out.version {
        for a in &v.articles {
            assert!(!a.paragraphs.is_empty(), "an article without paragraphs");
            assert!(a.source.line >= 1 && a.source.line <= lines);
            let _ = a.text();
            let _ = v.hierarchy_label(a.division);
        }
    }
});
