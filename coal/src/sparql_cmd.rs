//! `coal sparql` and `coal export`

use std::io::Write;

use anyhow::{Context, bail};
use kg_store::oxigraph::io::RdfFormat;
use kg_store::oxigraph::model::Term;
use kg_store::{GraphBackend, ResultFormat, SparqlOutput, Store, StoreError};
use unicode_width::UnicodeWidthStr;

use crate::config::{ExportArgs, ExportFormat, OutputFormat, SparqlArgs};

pub fn run(args: SparqlArgs) -> anyhow::Result<()> {
    let query = args.query_text()?;
    if query.trim().is_empty() {
        bail!("the query is empty");
    }
    let is_update = kg_store::is_update(&query);
    if is_update && !args.allow_update {
        return Err(StoreError::UpdateRefused.into());
    }
    let store = Store::open(&args.store.store, is_update)?;
    if is_update {
        store.graph().update(&query)?;
        eprintln!("update applied to build {}", store.build_id());
        return Ok(());
    }
    let output = store.graph().query(&query)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let format = match args.format {
        OutputFormat::Table => return print_table(&output, &mut out),
        OutputFormat::Json => ResultFormat::Json,
        OutputFormat::Csv => ResultFormat::Csv,
        OutputFormat::Tsv => ResultFormat::Tsv,
        OutputFormat::Xml => ResultFormat::Xml,
    };
    output.write(format, &mut out)?;
    writeln!(out)?;
    Ok(())
}

/// Shortens IRIs with the well-known prefixes for reading.
fn display_term(t: &Term) -> String {
    let prefixes = [
        ("coal:", coal_ontology::ns::COAL),
        ("eli:", coal_ontology::ns::ELI),
        ("rdf:", coal_ontology::ns::RDF),
        ("rdfs:", coal_ontology::ns::RDFS),
        ("skos:", coal_ontology::ns::SKOS),
        ("xsd:", coal_ontology::ns::XSD),
        ("owl:", coal_ontology::ns::OWL),
        ("cn:", coal_ontology::iri::ELI_BASE),
    ];
    match t {
        Term::NamedNode(n) => {
            for (p, ns) in prefixes {
                if let Some(rest) = n.as_str().strip_prefix(ns) {
                    return format!("{p}{rest}");
                }
            }
            format!("<{}>", n.as_str())
        }
        Term::Literal(l) => l.value().replace('\n', " ⏎ "),
        other => other.to_string(),
    }
}

fn print_table(output: &SparqlOutput, out: &mut impl Write) -> anyhow::Result<()> {
    match output {
        SparqlOutput::Boolean(b) => writeln!(out, "{b}")?,
        SparqlOutput::Graph(triples) => {
            for t in triples {
                writeln!(out, "{t} .")?;
            }
        }
        SparqlOutput::Solutions { variables, rows } => {
            const MAX_CELL: usize = 80;
            let cells: Vec<Vec<String>> = rows
                .iter()
                .map(|r| {
                    r.iter()
                        .map(|t| {
                            let s = t.as_ref().map(display_term).unwrap_or_default();
                            truncate_to_width(&s, MAX_CELL)
                        })
                        .collect()
                })
                .collect();
            let mut widths: Vec<usize> = variables.iter().map(|v| v.width() + 1).collect();
            for row in &cells {
                for (w, c) in widths.iter_mut().zip(row) {
                    *w = (*w).max(c.width());
                }
            }
            let line = |out: &mut dyn Write, vals: &[String]| -> std::io::Result<()> {
                let parts: Vec<String> = vals
                    .iter()
                    .zip(&widths)
                    .map(|(v, w)| format!("{v}{}", " ".repeat(w.saturating_sub(v.width()))))
                    .collect();
                writeln!(out, "| {} |", parts.join(" | "))
            };
            let header: Vec<String> = variables.iter().map(|v| format!("?{v}")).collect();
            line(out, &header)?;
            writeln!(
                out,
                "|{}|",
                widths
                    .iter()
                    .map(|w| "-".repeat(w + 2))
                    .collect::<Vec<_>>()
                    .join("|")
            )?;
            for row in &cells {
                line(out, row)?;
            }
            writeln!(out, "{} row(s)", rows.len())?;
        }
    }
    Ok(())
}

fn truncate_to_width(s: &str, max: usize) -> String {
    if s.width() <= max {
        return s.to_owned();
    }
    let mut out = String::new();
    for c in s.chars() {
        if out.width() + 2 > max {
            break;
        }
        out.push(c);
    }
    out.push('…');
    out
}

pub fn export(args: ExportArgs) -> anyhow::Result<()> {
    let store = Store::open(&args.store.store, false)?;
    let format = match args.format {
        ExportFormat::Turtle => RdfFormat::Turtle,
        ExportFormat::Nquads => RdfFormat::NQuads,
        ExportFormat::Trig => RdfFormat::TriG,
    };
    match &args.output {
        Some(path) => {
            let file = std::fs::File::create(path)
                .with_context(|| format!("cannot create {}", path.display()))?;
            store
                .graph()
                .export(format, std::io::BufWriter::new(file))?;
        }
        None => store
            .graph()
            .export(format, std::io::BufWriter::new(std::io::stdout().lock()))?,
    }
    Ok(())
}
