//! `coal sparql` and `coal export`

use std::io::Write;

use anyhow::{Context, bail};
use kg_store::oxigraph::io::RdfFormat;
use kg_store::oxigraph::model::Term;
use kg_store::{GraphBackend, ResultFormat, SparqlOutput, Store, StoreError};
use unicode_width::UnicodeWidthStr;

use crate::config::{ExportArgs, ExportFormat, GraphSourceArgs, OutputFormat, SparqlArgs};

/// The graph a read-only command reads: the store's current build or a remote endpoint.
pub enum GraphSource {
    Local(Store),
    Remote(kg_store::RemoteGraph),
}

impl GraphSource {
    pub fn open(args: &GraphSourceArgs) -> anyhow::Result<GraphSource> {
        Ok(match &args.endpoint {
            Some(url) => GraphSource::Remote(kg_store::RemoteGraph::new(
                url,
                std::time::Duration::from_secs(args.endpoint_timeout_secs),
            )?),
            None => GraphSource::Local(Store::open(&args.store.store, false)?),
        })
    }

    pub fn graph(&self) -> &dyn GraphBackend {
        match self {
            GraphSource::Local(store) => store.graph(),
            GraphSource::Remote(remote) => remote,
        }
    }
}

pub fn run(args: SparqlArgs) -> anyhow::Result<()> {
    let query = args.query_text()?;
    if query.trim().is_empty() {
        bail!("the query is empty");
    }
    let is_update = kg_store::is_update(&query);
    if is_update && !args.allow_update {
        return Err(StoreError::UpdateRefused.into());
    }
    if is_update {
        if args.source.endpoint.is_some() {
            bail!("--endpoint is read-only here: send updates to the endpoint itself");
        }
        let store = Store::open(&args.source.store.store, true)?;
        store.graph().update(&query)?;
        eprintln!("update applied to build {}", store.build_id());
        return Ok(());
    }
    let output = GraphSource::open(&args.source)?.graph().query(&query)?;
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
    // The store's predeclared prefixes, and `cn:` for the statutes' own IRIs.
    let prefixes = coal_ontology::ns::PREFIXES
        .into_iter()
        .chain([("cn", coal_ontology::iri::ELI_BASE)]);
    match t {
        Term::NamedNode(n) => {
            for (p, ns) in prefixes {
                if let Some(rest) = n.as_str().strip_prefix(ns) {
                    return format!("{p}:{rest}");
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

/// `coal publish`: the current build's named graphs to a Graph Store Protocol endpoint.
pub fn publish(args: crate::config::PublishArgs) -> anyhow::Result<()> {
    use kg_store::publish::{PublishObserver, PublishTarget};
    struct Bar(indicatif::ProgressBar);
    impl PublishObserver for Bar {
        fn started(&self, to_write: usize, to_delete: usize) {
            self.0.set_length((to_write + to_delete) as u64);
        }
        fn graph_done(&self, _iri: &str) {
            self.0.inc(1);
        }
    }
    let store = Store::open(&args.store.store, false)?;
    let bar = indicatif::ProgressBar::new(0).with_style(
        indicatif::ProgressStyle::with_template(
            "  publish [{bar:30}] {pos}/{len} graphs ETA {eta}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
    let target = PublishTarget {
        endpoint: args.endpoint.clone(),
        timeout: std::time::Duration::from_secs(args.timeout_secs),
    };
    let observer = Bar(bar);
    let report = kg_store::publish::publish(store.graph(), &target, &observer);
    observer.0.finish_and_clear();
    let report = report.with_context(|| {
        format!(
            "publishing build {} to {} stopped; the local build is untouched and `coal publish` can be run again",
            store.build_id(),
            args.endpoint
        )
    })?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.json {
        let mut v = serde_json::to_value(&report)?;
        v["build"] = serde_json::json!(store.build_id());
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
    } else {
        writeln!(
            out,
            "build {} → {}: {} graphs, {} written ({} triples, {:.1} MB), {} unchanged, {} deleted, {:.1} s",
            store.build_id(),
            report.endpoint,
            report.graphs,
            report.written.len(),
            report.triples_written,
            report.bytes_written as f64 / 1e6,
            report.kept,
            report.deleted.len(),
            report.seconds
        )?;
    }
    Ok(())
}
