//! Rule-based reading of statute text: where a paragraph cites other provisions
//! (本法第X条, 前款, 《…》第X条第Y款第Z项, 第X条至第Y条, …), where it defines a term
//! (本法所称X，是指…; 以下简称X) and where it yields to or overrides other rules
//! (另有规定的，依照其规定; 与本法不一致的，以本法为准).
//!
//! Architecture invariant: this crate sees one paragraph's text at a time and returns
//! spans of it (character offsets); it never knows which laws exist or what IRIs are.
//! Resolving a reference to an article is the build's job.

mod clauses;
mod definitions;
mod references;
mod scan;

pub use clauses::{Clause, ClauseKind, clauses};
pub use definitions::{Definition, DefinitionKind, definitions};
pub use references::{ArticleSpec, LawSpec, ParagraphSpec, Reference, Target, references};
