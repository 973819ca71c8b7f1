//! Any text as a provision: references, definitions and override clauses never panic,
//! and every span lies within the text (character offsets), with the words it covers.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let chars: Vec<char> = text.chars().collect();
    let within = |span: &std::ops::Range<usize>| {
        assert!(
            span.start < span.end && span.end <= chars.len(),
            "{span:?} of {}",
            chars.len()
        );
    };
    for r in coal_refs::references(text) {
        within(&r.span);
        let words: String = chars[r.span.clone()].iter().collect();
        assert_eq!(words, r.text);
    }
    for d in coal_refs::definitions(text) {
        within(&d.span);
        assert!(!d.term.is_empty());
    }
    for c in coal_refs::clauses(text) {
        within(&c.span);
    }
});
