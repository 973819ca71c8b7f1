//! `coal`: the command-line front end. Parses flags into validated configs once, calls
//! the library crates, and owns all output, progress bars and exit codes.

mod ask_cmd;
mod bench_cmd;
mod build_cmd;
mod config;
mod fit_rerank_cmd;
mod graph_cmd;
mod hints;
mod progress;
mod search_cmd;
mod serve_cmd;
mod sparql_cmd;
mod triples_cmd;
mod versions_cmd;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "coal",
    version,
    about = "Legal knowledge graphs from statutes: build, inspect with SPARQL, query"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Parse statutes and write a new build of the graph store (atomically replacing the current one).
    Build(config::BuildArgs),
    /// Run a SPARQL 1.1 query (SELECT, ASK, CONSTRUCT, DESCRIBE) against the current build.
    Sparql(config::SparqlArgs),
    /// Export the whole graph as Turtle, N-Quads or TriG.
    Export(config::ExportArgs),
    /// Push the current build's named graphs to a SPARQL 1.1 Graph Store Protocol endpoint
    /// (only the graphs that changed since the last publish; removed ones are deleted).
    Publish(config::PublishArgs),
    /// Search articles for a question (BM25 over law title, hierarchy, label and text).
    Search(config::SearchArgs),
    /// Answer a question: score its complexity, route it to a retrieval tier, cite articles.
    Ask(config::AskArgs),
    /// The build versions in the store: current, previous, being written, abandoned.
    Builds(config::BuildsArgs),
    /// Remove abandoned builds and all committed builds but the newest `--keep`.
    Gc(config::GcArgs),
    /// A law's versions: dates, validity, article counts and changes from the previous one.
    History(config::HistoryArgs),
    /// The article-level diff between two versions of a law, with the changed text.
    Diff(config::DiffArgs),
    /// The statute graph the query side walks: nodes and edges by kind, memory, load time.
    Graph(config::GraphArgs),
    /// Fit γ, the tier thresholds and the QSI midpoint to a dev set (routed article F1).
    Calibrate(config::CalibrateArgs),
    /// Fit tier 2's learned re-ranking (or with `--tier 3` tier 3's scoring) to dev sets
    /// (Recall@10 on held-out halves against the hand weights) and write it as
    /// `[method.rerank_learned]` (`[method.graph_learned]`).
    FitRerank(config::FitRerankArgs),
    /// Evaluate retrieval on question sets with gold articles.
    #[command(subcommand)]
    Eval(EvalCommand),
    /// Serve the store: a SPARQL 1.1 endpoint (/query, /store), a JSON API (/api/ask,
    /// /api/search, /api/article, /api/history, /api/diff) and a page to inspect the graph.
    Serve(config::ServeArgs),
    /// Benchmarks (medians; the machine is shared and noisy).
    #[command(subcommand)]
    Bench(BenchCommand),
}

#[derive(Subcommand)]
enum BenchCommand {
    /// Encoder throughput (tokens/s) on real articles and single-question latency.
    Encoder(config::BenchEncoderArgs),
    /// `ask` on every question of the sets: start-up, question → context latency per
    /// stage, tiers, question types and BM25 top-score quantiles.
    Ask(config::BenchAskArgs),
    /// The local chat model's prefill and generation tokens/s per thread setting.
    #[cfg(feature = "local-llm")]
    Llm(config::BenchLlmArgs),
}

#[derive(Subcommand)]
enum EvalCommand {
    /// Recall@k, MRR@10, nDCG@10 and article precision/recall/F1@k per set, as a Markdown table.
    Retrieval(config::EvalRetrievalArgs),
    /// Answers scored by article P/R/F1, ROUGE-1/2/L, BLEU-4, tiers and latency, routed and
    /// under each ablation side by side.
    Answer(config::EvalAnswerArgs),
    /// Hand-checked extracted triples against the grounding rules and the model's second
    /// look (`[llm] verify_triples`): precision and right triples lost per threshold.
    Triples(config::EvalTriplesArgs),
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_env("COAL_LOG"))
        .with_writer(std::io::stderr)
        .init();
    let result = match cli.command {
        Command::Build(args) => build_cmd::run(args),
        Command::Sparql(args) => sparql_cmd::run(args),
        Command::Export(args) => sparql_cmd::export(args),
        Command::Publish(args) => sparql_cmd::publish(args),
        Command::Search(args) => search_cmd::search(args),
        Command::Ask(args) => ask_cmd::run(args),
        Command::Serve(args) => serve_cmd::run(args),
        Command::History(args) => versions_cmd::history(args),
        Command::Builds(args) => versions_cmd::builds(args),
        Command::Gc(args) => versions_cmd::gc(args),
        Command::Diff(args) => versions_cmd::diff(args),
        Command::Graph(args) => graph_cmd::run(args),
        Command::Calibrate(args) => ask_cmd::calibrate(args),
        Command::FitRerank(args) => fit_rerank_cmd::run(args),
        Command::Eval(EvalCommand::Retrieval(args)) => search_cmd::eval_retrieval(args),
        Command::Eval(EvalCommand::Answer(args)) => ask_cmd::eval_answer(args),
        Command::Eval(EvalCommand::Triples(args)) => triples_cmd::run(args),
        Command::Bench(BenchCommand::Encoder(args)) => bench_cmd::encoder(args),
        Command::Bench(BenchCommand::Ask(args)) => bench_cmd::ask(args),
        #[cfg(feature = "local-llm")]
        Command::Bench(BenchCommand::Llm(args)) => bench_cmd::llm(args),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        // `coal diff … | head`: the reader left; not an error.
        Err(e)
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) =>
        {
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            if let Some(hint) = hints::hint(&e) {
                eprintln!("hint: {hint}");
            }
            std::process::ExitCode::FAILURE
        }
    }
}
