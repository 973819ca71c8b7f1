//! Reading a corpus: a folder, a profile (list of paths), or single files; byte-identical
//! duplicates skipped; multi-file statutes merged; versions grouped into works.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::Serialize;

use crate::error::CorpusError;
use crate::model::*;
use crate::parse::parse_file;
use crate::problem::{Problem, ProblemKind, Severity};

/// What to read. Paths in results are relative to `root` when they lie below it.
#[derive(Debug, Clone, Default)]
pub struct CorpusSpec {
    /// The corpus folder (e.g. `../shared/corpus/lawrefbook`).
    pub root: Option<PathBuf>,
    /// A profile: one path per line, relative to `root`.
    pub profile: Option<PathBuf>,
    /// Single files (absolute or relative to the working directory).
    pub files: Vec<PathBuf>,
    /// Folder names skipped when walking `root` (default: `案例`, explained cases, not statutes).
    pub exclude_dirs: Vec<String>,
}

impl CorpusSpec {
    pub fn folder(root: impl Into<PathBuf>) -> CorpusSpec {
        CorpusSpec {
            root: Some(root.into()),
            exclude_dirs: vec!["案例".to_owned()],
            ..Default::default()
        }
    }

    pub fn with_profile(mut self, profile: impl Into<PathBuf>) -> CorpusSpec {
        self.profile = Some(profile.into());
        self
    }
}

/// A law (work): all versions of one statute, oldest first.
#[derive(Debug, Clone, Serialize)]
pub struct Law {
    pub short_name: String,
    pub versions: Vec<LawVersion>,
}

impl Law {
    /// The latest version (the one in force unless a date is asked for).
    pub fn latest(&self) -> &LawVersion {
        self.versions
            .last()
            .expect("a law has at least one version")
    }
}

/// A parsed corpus.
#[derive(Debug, Clone, Serialize)]
pub struct Corpus {
    /// Laws ordered by short name.
    pub laws: Vec<Law>,
    pub problems: Vec<Problem>,
    /// Files read (including skipped ones).
    pub files_read: usize,
}

impl Corpus {
    pub fn versions(&self) -> impl Iterator<Item = &LawVersion> {
        self.laws.iter().flat_map(|l| l.versions.iter())
    }

    pub fn article_count(&self) -> usize {
        self.versions().map(|v| v.articles.len()).sum()
    }

    pub fn law(&self, short_name_or_title: &str) -> Option<&Law> {
        let key = short_name(short_name_or_title);
        self.laws.iter().find(|l| l.short_name == key)
    }

    pub fn warnings(&self) -> impl Iterator<Item = &Problem> {
        self.problems
            .iter()
            .filter(|p| p.severity == Severity::Warning)
    }
}

fn list_files(spec: &CorpusSpec) -> Result<Vec<(String, PathBuf)>, CorpusError> {
    let mut out = Vec::new();
    let rel = |p: &Path| -> String {
        spec.root
            .as_ref()
            .and_then(|r| p.strip_prefix(r).ok())
            .unwrap_or(p)
            .to_string_lossy()
            .replace('\\', "/")
    };
    if let Some(profile) = &spec.profile {
        let root = spec
            .root
            .as_ref()
            .ok_or_else(|| CorpusError::ProfileWithoutRoot(profile.clone()))?;
        let text =
            std::fs::read_to_string(profile).map_err(|e| CorpusError::Io(profile.clone(), e))?;
        for (i, line) in text.lines().enumerate() {
            let entry = line.trim();
            if entry.is_empty() || entry.starts_with('#') {
                continue;
            }
            let path = root.join(entry);
            if !path.is_file() {
                return Err(CorpusError::ProfileEntryMissing {
                    profile: profile.clone(),
                    line: i + 1,
                    path,
                });
            }
            out.push((entry.to_owned(), path));
        }
    } else if let Some(root) = &spec.root {
        if !root.is_dir() {
            return Err(CorpusError::NotFound(root.clone()));
        }
        // Symlinked files and folders are read like the real ones (a corpus assembled
        // from links is common); a link loop is a walk error naming the corpus.
        let walker = walkdir::WalkDir::new(root)
            .follow_links(true)
            .sort_by_file_name()
            .into_iter()
            .filter_entry(|e| {
                !(e.file_type().is_dir()
                    && e.depth() > 0
                    && spec
                        .exclude_dirs
                        .iter()
                        .any(|x| e.file_name() == x.as_str()))
            });
        for entry in walker {
            let entry = entry.map_err(|e| CorpusError::Walk(root.clone(), e.to_string()))?;
            let name = entry.file_name().to_string_lossy();
            let is_statute = name.ends_with(".md") || name.ends_with(".txt");
            if entry.file_type().is_file()
                && is_statute
                && name != "_index.md"
                && !name.starts_with('.')
            {
                out.push((rel(entry.path()), entry.path().to_path_buf()));
            }
        }
    }
    for f in &spec.files {
        if !f.is_file() {
            return Err(CorpusError::NotFound(f.clone()));
        }
        out.push((rel(f), f.clone()));
    }
    if out.is_empty() {
        return Err(CorpusError::NoFiles);
    }
    Ok(out)
}

/// Reads and parses everything `spec` names. `progress` is called once per file parsed.
pub fn load_corpus(
    spec: &CorpusSpec,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Corpus, CorpusError> {
    let files = list_files(spec)?;
    let total = files.len();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let parsed: Vec<_> = files
        .par_iter()
        .map(|(name, path)| {
            let outcome = match std::fs::read(path) {
                Ok(bytes) => parse_file(name, &bytes),
                Err(e) => crate::parse::ParseOutcome {
                    version: None,
                    problems: vec![Problem::error(
                        name,
                        None,
                        ProblemKind::UnreadableFile,
                        e.to_string(),
                    )],
                },
            };
            let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            progress(n, total);
            outcome
        })
        .collect();
    Ok(assemble(parsed, total))
}

/// Parses in-memory files (name, bytes): for tests and tools.
pub fn load_from_memory(files: &[(&str, &[u8])]) -> Corpus {
    let parsed = files.iter().map(|(n, b)| parse_file(n, b)).collect();
    assemble(parsed, files.len())
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum GroupKey {
    Date(Option<Date>),
    SplitCode(String),
}

fn assemble(parsed: Vec<crate::parse::ParseOutcome>, files_read: usize) -> Corpus {
    let mut problems = Vec::new();
    let mut by_hash: HashMap<String, String> = HashMap::new();
    // (short name, date) -> files of that version, in input order.
    let mut groups: BTreeMap<(String, GroupKey), Vec<LawVersion>> = BTreeMap::new();
    for outcome in parsed {
        problems.extend(outcome.problems);
        let Some(v) = outcome.version else { continue };
        let file = &v.files[0];
        if let Some(first) = by_hash.get(&file.content_hash) {
            problems.push(Problem::warning(
                &file.path,
                None,
                ProblemKind::DuplicateFile,
                format!("byte-identical to {first}; skipped"),
            ));
            continue;
        }
        by_hash.insert(file.content_hash.clone(), file.path.clone());
        // The files of a split code (民法典) carry their dates in the header only, and
        // not every file lists the same dated lines: group them by folder instead.
        let key = if file.part_title.is_some()
            && crate::parse::date_from_file_name(&file.path).is_none()
        {
            let folder = file
                .path
                .rsplit_once('/')
                .map(|(d, _)| d.to_owned())
                .unwrap_or_default();
            (v.short_name.clone(), GroupKey::SplitCode(folder))
        } else {
            (v.short_name.clone(), GroupKey::Date(v.version_date))
        };
        groups.entry(key).or_default().push(v);
    }

    let mut laws: BTreeMap<String, Vec<LawVersion>> = BTreeMap::new();
    for ((name, _), files) in groups {
        let version = if files.iter().all(|f| f.files[0].part_title.is_some()) && files.len() > 1 {
            merge_parts(files)
        } else {
            let mut files = files.into_iter();
            let first = files.next().expect("group is non-empty");
            for other in files {
                problems.push(Problem::warning(
                    &other.files[0].path,
                    None,
                    ProblemKind::ConflictingVersion,
                    format!(
                        "same law and version date as {} but different text; skipped",
                        first.files[0].path
                    ),
                ));
            }
            first
        };
        laws.entry(name).or_default().push(version);
    }
    let laws = laws
        .into_iter()
        .map(|(short_name, mut versions)| {
            versions.sort_by_key(|v| v.version_date);
            Law {
                short_name,
                versions,
            }
        })
        .collect();
    problems.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
    Corpus {
        laws,
        problems,
        files_read,
    }
}

/// Joins the files of one statute split by 编 (民法典) into one version, in article order.
fn merge_parts(mut parts: Vec<LawVersion>) -> LawVersion {
    parts.sort_by_key(|p| p.articles.first().map(|a| a.number));
    // The version is as new as the newest dated line of any of its files.
    let newest = parts
        .iter()
        .enumerate()
        .max_by_key(|(_, p)| p.version_date)
        .map(|(i, _)| i)
        .unwrap_or(0);
    let mut merged = LawVersion {
        title: parts[0].title.clone(),
        short_name: parts[0].short_name.clone(),
        version_date: parts[newest].version_date,
        history: parts[newest]
            .history
            .iter()
            .map(|h| HistoryLine {
                source: SourceRef {
                    file: newest,
                    line: h.source.line,
                },
                ..h.clone()
            })
            .collect(),
        files: Vec::new(),
        preamble: Vec::new(),
        divisions: Vec::new(),
        articles: Vec::new(),
    };
    let mut part_number = 0;
    for part in parts {
        let file_index = merged.files.len();
        let offset = merged.divisions.len();
        let fix = |s: &SourceRef| SourceRef {
            file: file_index,
            line: s.line,
        };
        merged.files.extend(part.files);
        for mut d in part.divisions {
            d.index += offset;
            d.parent = d.parent.map(|p| p + offset);
            d.source = fix(&d.source);
            if d.kind == DivisionKind::Part && d.label.is_empty() {
                if d.title == "附则" {
                    d.label = "附则".to_owned();
                    d.title = String::new();
                } else {
                    part_number += 1;
                    d.number = Some(part_number);
                    d.label = format!("第{}编", crate::to_chinese_numeral(part_number));
                    d.title = d.title.trim_end_matches('编').to_owned();
                }
            }
            merged.divisions.push(d);
        }
        for mut a in part.articles {
            a.division = a.division.map(|i| i + offset);
            a.source = fix(&a.source);
            for p in &mut a.paragraphs {
                p.source = fix(&p.source);
                for it in &mut p.items {
                    it.source = fix(&it.source);
                }
            }
            merged.articles.push(a);
        }
        merged
            .preamble
            .extend(part.preamble.into_iter().map(|mut p| {
                p.source = fix(&p.source);
                p
            }));
    }
    merged
}
