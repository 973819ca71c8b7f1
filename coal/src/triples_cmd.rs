//! `coal eval triples`: hand-checked extracted triples through the build's two filters,
//! the grounding rules and the model's second look (`[llm] verify_triples`), so that the
//! precision a threshold gives is measured on triples someone judged, not guessed.

use std::collections::HashMap;
use std::io::Write;

use anyhow::{Context, bail};

use crate::config::EvalTriplesArgs;

use kg_build::verify::CheckedTriple;

/// One checked triple after both filters (`p`: the model's P(是), for grounded ones).
#[derive(serde::Serialize)]
struct Judged {
    sample: String,
    #[serde(flatten)]
    checked: CheckedTriple,
    grounded: bool,
    /// Why the grounding rules refused it.
    refused: Option<&'static str>,
    p: Option<f64>,
}

/// (title, label → (the article as the extraction prompt gave it, its body))
type Law = (String, HashMap<String, (String, String)>);

fn read_law(corpus: &std::path::Path, path: &str) -> anyhow::Result<Law> {
    let file = corpus.join(path);
    let bytes = std::fs::read(&file).with_context(|| format!("{}", file.display()))?;
    let Some(v) = coal_corpus::parse_file(path, &bytes).version else {
        bail!("{}: not a statute this parser reads", file.display());
    };
    let articles = v
        .articles
        .iter()
        .map(|a| {
            let body = a.body();
            let prompt = kg_build::extract::user_prompt(&v.title, &a.label, &body);
            (a.label.clone(), (prompt, body))
        })
        .collect();
    Ok((v.title.clone(), articles))
}

pub fn run(args: EvalTriplesArgs) -> anyhow::Result<()> {
    args.validate()?;
    let models = args.model.resolve()?;
    // With --grounding-only no model is loaded and no reply cache opened.
    let verifier = match args.grounding_only {
        true => None,
        false => {
            let Some((chat, _)) = models.chat()? else {
                bail!(
                    "coal eval triples needs a chat model: an [llm] table in the configuration (see examples/coal.local-llm.toml), or --grounding-only"
                );
            };
            let cache_path = args
                .cache
                .clone()
                .unwrap_or_else(|| std::env::temp_dir().join("coal-verify-replies.jsonl"));
            let cache = kg_build::extract::ReplyCache::open(&cache_path)
                .with_context(|| format!("{}", cache_path.display()))?;
            Some((chat, cache))
        }
    };
    let mut laws: HashMap<String, Law> = HashMap::new();
    let mut judged = Vec::new();
    for sample in &args.samples {
        let text =
            std::fs::read_to_string(sample).with_context(|| format!("{}", sample.display()))?;
        let name = sample
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let started = std::time::Instant::now();
        for (n, line) in lines.iter().enumerate() {
            let c: CheckedTriple = serde_json::from_str(line)
                .with_context(|| format!("{} line {}", sample.display(), n + 1))?;
            if !laws.contains_key(&c.law) {
                laws.insert(c.law.clone(), read_law(&args.corpus, &c.law)?);
            }
            let (title, articles) = &laws[&c.law];
            let Some((prompt, body)) = articles.get(&c.article) else {
                bail!(
                    "{} line {}: {} has no {}",
                    sample.display(),
                    n + 1,
                    c.law,
                    c.article
                );
            };
            let triple = c.triple();
            let refused = kg_build::grounding::check(&triple, body, title)
                .err()
                .map(|why| why.as_str());
            let p =
                match (&verifier, refused) {
                    (Some((chat, cache)), None) => {
                        let asked = kg_build::verify::judge(chat.as_ref(), cache, prompt, &triple);
                        Some(asked.outcome.map_err(|e| {
                            anyhow::anyhow!("{} line {}: {e}", sample.display(), n + 1)
                        })?)
                    }
                    _ => None,
                };
            eprint!(
                "\r{name}: {}/{} triples ({:.0} s)",
                n + 1,
                lines.len(),
                started.elapsed().as_secs_f64()
            );
            judged.push(Judged {
                sample: name.clone(),
                checked: c,
                grounded: refused.is_none(),
                refused,
                p,
            });
        }
        eprintln!();
    }
    if let Some(path) = &args.per_triple {
        let mut f = std::fs::File::create(path).with_context(|| format!("{}", path.display()))?;
        for j in &judged {
            writeln!(f, "{}", serde_json::to_string(j)?)?;
        }
    }
    let thresholds: &[f64] = if verifier.is_some() {
        &args.thresholds
    } else {
        &[]
    };
    print_table(
        &judged,
        thresholds,
        verifier
            .as_ref()
            .map_or("none (--grounding-only)", |(chat, _)| chat.id()),
    );
    Ok(())
}

/// Kept right, kept wrong, and the precision as text.
fn kept(triples: &[&Judged], keep: impl Fn(&Judged) -> bool) -> (usize, usize, String) {
    let right = triples
        .iter()
        .filter(|j| j.checked.correct && keep(j))
        .count();
    let wrong = triples
        .iter()
        .filter(|j| !j.checked.correct && keep(j))
        .count();
    let precision = match right + wrong {
        0 => "–".to_owned(),
        n => format!("{:.1}%", 100.0 * right as f64 / n as f64),
    };
    (right, wrong, precision)
}

fn print_table(judged: &[Judged], thresholds: &[f64], model: &str) {
    let mut samples: Vec<&str> = Vec::new();
    for j in judged {
        if !samples.contains(&j.sample.as_str()) {
            samples.push(&j.sample);
        }
    }
    println!("Verifier: {model}");
    println!();
    println!(
        "| sample | triples | right | filter | kept right | kept wrong | precision | right lost |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let all: Vec<&Judged> = judged.iter().collect();
    let groups = samples
        .iter()
        .map(|s| {
            (
                s.to_string(),
                judged.iter().filter(|j| j.sample == *s).collect::<Vec<_>>(),
            )
        })
        .chain((samples.len() > 1).then(|| ("all".to_owned(), all)));
    for (name, triples) in groups {
        let right = triples.iter().filter(|j| j.checked.correct).count();
        let row = |filter: String, keep: &dyn Fn(&Judged) -> bool| {
            let (r, w, p) = kept(&triples, keep);
            println!(
                "| {name} | {} | {right} | {filter} | {r} | {w} | {p} | {} |",
                triples.len(),
                right - r
            );
        };
        row("grounding".into(), &|j| j.grounded);
        for t in thresholds {
            row(format!("grounding + P(是) ≥ {t}"), &|j| {
                j.p.is_some_and(|p| p >= *t)
            });
        }
    }
}
