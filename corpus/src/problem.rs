//! Problems found in input files. A problem never stops the rest of the corpus.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProblemKind {
    UnreadableFile,
    EmptyFile,
    BinaryContent,
    InvalidUtf8,
    LineTooLong,
    MissingTitle,
    MissingInfoEnd,
    UnknownHeading,
    DuplicateArticleNumber,
    MissingArticleNumber,
    OutOfOrderArticle,
    TextOutsideArticle,
    DuplicateFile,
    ConflictingVersion,
    NoArticles,
}

impl ProblemKind {
    pub fn name(self) -> &'static str {
        match self {
            ProblemKind::UnreadableFile => "unreadable_file",
            ProblemKind::EmptyFile => "empty_file",
            ProblemKind::BinaryContent => "binary_content",
            ProblemKind::InvalidUtf8 => "invalid_utf8",
            ProblemKind::LineTooLong => "line_too_long",
            ProblemKind::MissingTitle => "missing_title",
            ProblemKind::MissingInfoEnd => "missing_info_end",
            ProblemKind::UnknownHeading => "unknown_heading",
            ProblemKind::DuplicateArticleNumber => "duplicate_article_number",
            ProblemKind::MissingArticleNumber => "missing_article_number",
            ProblemKind::OutOfOrderArticle => "out_of_order_article",
            ProblemKind::TextOutsideArticle => "text_outside_article",
            ProblemKind::DuplicateFile => "duplicate_file",
            ProblemKind::ConflictingVersion => "conflicting_version",
            ProblemKind::NoArticles => "no_articles",
        }
    }
}

impl std::fmt::Display for ProblemKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// `Error`: the file was skipped. `Warning`: the file was used, with the problem noted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Warning,
    Error,
}

#[derive(Debug, Clone, Serialize)]
pub struct Problem {
    pub file: String,
    pub line: Option<usize>,
    pub kind: ProblemKind,
    pub severity: Severity,
    pub message: String,
}

impl Problem {
    pub fn warning(
        file: &str,
        line: Option<usize>,
        kind: ProblemKind,
        message: impl Into<String>,
    ) -> Problem {
        Problem {
            file: file.to_owned(),
            line,
            kind,
            severity: Severity::Warning,
            message: message.into(),
        }
    }

    pub fn error(
        file: &str,
        line: Option<usize>,
        kind: ProblemKind,
        message: impl Into<String>,
    ) -> Problem {
        Problem {
            file: file.to_owned(),
            line,
            kind,
            severity: Severity::Error,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sev = match self.severity {
            Severity::Warning => "warning",
            Severity::Error => "error (file skipped)",
        };
        match self.line {
            Some(line) => write!(
                f,
                "{}:{}: {sev} [{}]: {}",
                self.file, line, self.kind, self.message
            ),
            None => write!(f, "{}: {sev} [{}]: {}", self.file, self.kind, self.message),
        }
    }
}
