//! Statute parser: LawRefBook Markdown and plain-text statutes into a tree of
//! 编 → 分编 → 章 → 节 → 条 → 款 → 项 with exact text and line numbers.
//!
//! The crate knows nothing of RDF, stores or retrieval: it turns files into values.

mod bigrams;
mod error;
mod load;
mod model;
mod numerals;
mod parse;
mod problem;

pub use bigrams::{Bigrams, bigram_dice};
pub use error::CorpusError;
pub use load::{Corpus, CorpusSpec, Law, load_corpus, load_from_memory};
pub use model::*;
pub use numerals::{parse_chinese_numeral, to_chinese_numeral};
pub use parse::{MAX_LINE_BYTES, ParseOutcome, classify_heading, date_from_file_name, parse_file};
pub use problem::{Problem, ProblemKind, Severity};
