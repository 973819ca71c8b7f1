//! Command-line flags, and the validated configuration built from them once.

use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};

/// Where statutes come from when `--corpus` is not given: `$COAL_CORPUS`, else the shared
/// snapshot beside the checkout.
pub const DEFAULT_CORPUS: &str = "../shared/corpus/lawrefbook";

#[derive(Args, Debug)]
pub struct StoreArgs {
    /// The store directory.
    #[arg(long, env = "COAL_STORE", default_value = "store")]
    pub store: PathBuf,
    /// Metadata database URL (sqlite://…, postgres://…, mysql://…); default: the store's own SQLite file.
    #[arg(long, env = "COAL_DB_URL")]
    pub db_url: Option<String>,
}

#[derive(Args, Debug, Clone)]
pub struct ModelArgs {
    /// The embedding model file (default: $COAL_MODEL, ../shared/models/e5-small-q4.bin, `.models/e5-small-q4.bin`).
    #[arg(long, env = "COAL_MODEL")]
    pub model: Option<PathBuf>,
    /// Encoder threads (0 = all cores).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Configuration file (TOML); its `[embedder]` table can choose an OpenAI-compatible
    /// endpoint instead of the local model. Default: `coal.toml` in the working directory, if any.
    #[arg(long, env = "COAL_CONFIG")]
    pub config: Option<PathBuf>,
}

#[derive(serde::Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    #[serde(default)]
    pub embedder: coal_models::EmbedderSettings,
    #[serde(default)]
    pub llm: Option<coal_models::LlmSettings>,
    /// The method's constants (METHOD.md §3–5); any left out keep the paper's values.
    #[serde(default)]
    pub method: query_engine::method::MethodConfig,
}

impl FileConfig {
    pub fn read(explicit: Option<&std::path::Path>) -> anyhow::Result<FileConfig> {
        let path = match explicit {
            Some(p) => p.to_owned(),
            None if std::path::Path::new("coal.toml").is_file() => PathBuf::from("coal.toml"),
            None => return Ok(FileConfig::default()),
        };
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read configuration {}", path.display()))?;
        toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
    }
}

impl ModelArgs {
    /// The flags and the configuration file they name, read once: every model and
    /// constant a command uses comes from the result.
    pub fn resolve(&self) -> anyhow::Result<Models> {
        Ok(Models {
            file: FileConfig::read(self.config.as_deref())?,
            local_model: self.model.clone(),
            threads: self.threads,
        })
    }
}

/// `--model`, `--threads` and the configuration file, resolved.
#[derive(Debug)]
pub struct Models {
    pub file: FileConfig,
    local_model: Option<PathBuf>,
    threads: usize,
}

impl Models {
    /// The configured embedder: the local e5 encoder (builds verify its checksum) or an
    /// OpenAI-compatible endpoint chosen in the configuration file.
    pub fn embedder(&self, verify: bool) -> anyhow::Result<Box<dyn coal_models::Embedder>> {
        Ok(self
            .file
            .embedder
            .open(self.local_model.as_deref(), self.threads, verify)?)
    }

    /// The configured chat model (`[llm]`), if any, with its extraction concurrency.
    pub fn chat(&self) -> anyhow::Result<Option<(Box<dyn coal_models::ChatModel>, usize)>> {
        match &self.file.llm {
            Some(llm) => Ok(Some((llm.client()?, llm.concurrency()))),
            None => Ok(None),
        }
    }

    /// `[llm] verify_triples`, validated: the build's threshold for the model's second
    /// look at extracted triples.
    pub fn verify_triples(&self) -> anyhow::Result<Option<f64>> {
        match &self.file.llm {
            Some(llm) => Ok(llm.verify_threshold()?),
            None => Ok(None),
        }
    }

    /// `[llm] skip_relations`, validated: each one a relation of the extraction's
    /// vocabulary.
    pub fn skip_relations(&self) -> anyhow::Result<Vec<String>> {
        let skipped = self
            .file
            .llm
            .as_ref()
            .and_then(|l| l.skip_relations.clone())
            .unwrap_or_default();
        if let Some(r) = skipped
            .iter()
            .find(|r| !kg_build::extract::RELATIONS.contains(&r.as_str()))
        {
            anyhow::bail!(
                "[llm] skip_relations: `{r}` is no relation of the extraction (one of {})",
                kg_build::extract::RELATIONS.join(", ")
            );
        }
        Ok(skipped)
    }

    /// The method's constants (`[method]`), validated.
    pub fn method(&self) -> anyhow::Result<query_engine::method::MethodConfig> {
        let method = self.file.method.clone();
        method.validate()?;
        Ok(method)
    }
}

#[derive(Args, Debug)]
pub struct BuildArgs {
    /// Corpus folder (LawRefBook layout or any folder of .md/.txt statutes).
    #[arg(long, env = "COAL_CORPUS")]
    pub corpus: Option<PathBuf>,
    /// A profile: a file listing statute paths relative to the corpus folder, one per line.
    #[arg(long)]
    pub profile: Option<PathBuf>,
    /// Single statute files to build (instead of, or in addition to, the corpus folder).
    #[arg(long = "file", value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Folder names skipped when walking the corpus.
    #[arg(long = "exclude", value_name = "NAME", default_values_t = vec!["案例".to_owned()])]
    pub exclude: Vec<String>,
    #[command(flatten)]
    pub store: StoreArgs,
    /// Fail on any warning, before anything is written.
    #[arg(long)]
    pub strict: bool,
    /// Build only the graph and metadata, without retrieval indexes (faster; `coal search` then refuses).
    #[arg(long)]
    pub structure_only: bool,
    /// Skip the embeddings (BM25 search still works; dense and hybrid do not).
    #[arg(long)]
    pub no_embeddings: bool,
    /// Skip the LLM triple extraction even when `[llm]` is configured.
    #[arg(long)]
    pub no_extraction: bool,
    /// Extract triples only from laws whose title contains this (repeatable), e.g.
    /// `--extract-law 劳动合同法`.
    #[arg(long = "extract-law", value_name = "TITLE")]
    pub extract_laws: Vec<String>,
    /// Extract triples from at most this many articles (in corpus order).
    #[arg(long, value_name = "N")]
    pub extract_limit: Option<usize>,
    /// Build everything anew instead of starting from the current build and rewriting
    /// only what changed (embeddings and LLM replies stay cached either way).
    #[arg(long)]
    pub from_scratch: bool,
    /// Share of new or changed articles (0 to 1) past which the domains are clustered
    /// again; below it new articles join their nearest topic. 0: cluster again whatever
    /// changed.
    #[arg(long, default_value_t = kg_build::domains::RECLUSTER_SHARE, value_name = "SHARE")]
    pub recluster_share: f64,
    /// How an article with several 款 gets its vectors: its 款 passages' (embedded for
    /// the 款 index anyway; the article is as near as its nearest 款) or its own text
    /// embedded again.
    #[arg(long, value_enum, default_value_t = ArticleVectorsArg::Paragraphs)]
    pub article_vectors: ArticleVectorsArg,
    #[command(flatten)]
    pub model: ModelArgs,
    /// Print the summary as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

impl BuildArgs {
    /// The chat model for triple extraction (`[llm]`), unless `--no-extraction`.
    pub fn extraction_llm(
        &self,
        models: &Models,
    ) -> anyhow::Result<Option<(Box<dyn coal_models::ChatModel>, usize)>> {
        if self.no_extraction {
            return Ok(None);
        }
        models.chat()
    }

    /// The embedder this build uses, if any.
    pub fn embedder(
        &self,
        models: &Models,
    ) -> anyhow::Result<Option<Box<dyn coal_models::Embedder>>> {
        if self.structure_only || self.no_embeddings {
            return Ok(None);
        }
        models.embedder(true).map(Some)
    }

    pub fn into_options(self) -> anyhow::Result<(kg_build::BuildOptions, bool)> {
        let corpus_root = match (&self.corpus, self.files.is_empty()) {
            (Some(c), _) => Some(c.clone()),
            (None, false) => None,
            (None, true) => {
                let default = PathBuf::from(DEFAULT_CORPUS);
                if !default.is_dir() {
                    bail!(
                        "no corpus given: pass --corpus DIR (a folder of statute .md/.txt files) or set COAL_CORPUS; \
                         the default {DEFAULT_CORPUS} does not exist here"
                    );
                }
                Some(default)
            }
        };
        if let Some(root) = &corpus_root
            && !root.is_dir()
        {
            bail!("corpus folder {} does not exist", root.display());
        }
        if let Some(p) = &self.profile
            && !p.is_file()
        {
            bail!("profile {} does not exist", p.display());
        }
        for f in &self.files {
            if !f.is_file() {
                bail!("statute file {} does not exist", f.display());
            }
        }
        if !(0.0..=1.0).contains(&self.recluster_share) {
            bail!(
                "--recluster-share {} is not a share between 0 and 1",
                self.recluster_share
            );
        }
        if self.store.store.exists() && !self.store.store.is_dir() {
            bail!(
                "store path {} exists and is not a directory",
                self.store.store.display()
            );
        }
        let corpus = coal_corpus::CorpusSpec {
            root: corpus_root,
            profile: self.profile,
            files: self.files,
            exclude_dirs: self.exclude,
        };
        Ok((
            kg_build::BuildOptions {
                corpus,
                store: self.store.store,
                db_url: self.store.db_url,
                strict: self.strict,
                structure_only: self.structure_only,
                incremental: !self.from_scratch,
                recluster_share: self.recluster_share,
                article_vectors: match self.article_vectors {
                    ArticleVectorsArg::Whole => kg_build::ArticleVectors::Whole,
                    ArticleVectorsArg::Paragraphs => kg_build::ArticleVectors::Paragraphs,
                },
            },
            self.json,
        ))
    }
}

#[derive(Copy, Clone, Debug, ValueEnum, PartialEq, Eq)]
pub enum ArticleVectorsArg {
    Whole,
    Paragraphs,
}

#[derive(Copy, Clone, Debug, ValueEnum, PartialEq, Eq)]
pub enum OutputFormat {
    Table,
    Json,
    Csv,
    Tsv,
    Xml,
}

#[derive(Args, Debug)]
pub struct SparqlArgs {
    /// The query text (or use --file).
    pub query: Option<String>,
    /// Read the query from a file.
    #[arg(long, short = 'f', conflicts_with = "query")]
    pub file: Option<PathBuf>,
    /// Output format: a table for people, or a standard SPARQL results format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: OutputFormat,
    /// Allow SPARQL UPDATE (changes the current build in place).
    #[arg(long)]
    pub allow_update: bool,
    #[command(flatten)]
    pub source: GraphSourceArgs,
}

/// Where a read-only command reads the graph: the store's current build, or a remote
/// SPARQL 1.1 query endpoint the graph was published to (`coal publish`).
#[derive(Args, Debug)]
pub struct GraphSourceArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// Read the graph from this SPARQL 1.1 query endpoint instead of the store
    /// (Virtuoso: http://HOST:8890/sparql).
    #[arg(long, env = "COAL_SPARQL_ENDPOINT")]
    pub endpoint: Option<String>,
    /// Seconds a remote query may take.
    #[arg(long, default_value_t = 60)]
    pub endpoint_timeout_secs: u64,
}

#[derive(Args, Debug)]
pub struct PublishArgs {
    /// The SPARQL 1.1 Graph Store Protocol endpoint (Virtuoso:
    /// http://HOST:8890/sparql-graph-crud).
    #[arg(long)]
    pub endpoint: String,
    /// Seconds one request (one graph) may take.
    #[arg(long, default_value_t = 120)]
    pub timeout_secs: u64,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub store: StoreArgs,
}

impl SparqlArgs {
    pub fn query_text(&self) -> anyhow::Result<String> {
        match (&self.query, &self.file) {
            (Some(q), _) => Ok(q.clone()),
            (None, Some(f)) => std::fs::read_to_string(f)
                .with_context(|| format!("cannot read query file {}", f.display())),
            (None, None) => bail!("give a query as an argument or with --file FILE"),
        }
    }
}

#[derive(Copy, Clone, Debug, ValueEnum, PartialEq, Eq)]
pub enum ExportFormat {
    Turtle,
    Nquads,
    Trig,
}

#[derive(Args, Debug)]
pub struct ExportArgs {
    #[arg(long, value_enum, default_value = "nquads")]
    pub format: ExportFormat,
    /// Write to this file instead of stdout.
    #[arg(long, short = 'o')]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Args, Debug)]
pub struct SearchArgs {
    /// The question.
    pub question: String,
    /// Retrieval mode.
    #[arg(long, value_enum, default_value = "hybrid")]
    pub mode: SearchMode,
    /// How hybrid fuses BM25 and dense (the method's weighted min-max, or reciprocal ranks).
    #[arg(long, value_enum, default_value = "weighted")]
    pub fusion: FusionArg,
    #[command(flatten)]
    pub bm25: Bm25Args,
    #[command(flatten)]
    pub model: ModelArgs,
    /// How many articles to return.
    #[arg(long, default_value_t = 10)]
    pub k: usize,
    /// Also search superseded versions of laws.
    #[arg(long)]
    pub include_old: bool,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Args, Debug)]
pub struct BuildsArgs {
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Args, Debug)]
pub struct GcArgs {
    /// Committed builds to keep, the current one included (at least 1).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub keep: u64,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Args, Debug)]
pub struct HistoryArgs {
    /// The law: full title or short name (劳动合同法).
    pub law: String,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub source: GraphSourceArgs,
}

#[derive(Args, Debug)]
pub struct DiffArgs {
    /// The law: full title or short name.
    pub law: String,
    /// The older version: its date, its IRI, or any date (the version in force then).
    /// Default: the version before `--to`.
    #[arg(long)]
    pub from: Option<String>,
    /// The newer version (same forms). Default: the latest.
    #[arg(long)]
    pub to: Option<String>,
    /// Also list unchanged articles.
    #[arg(long)]
    pub all: bool,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub source: GraphSourceArgs,
}

#[derive(Args, Debug)]
pub struct AskArgs {
    /// The question.
    pub question: String,
    /// Skip routing: use this retrieval tier (1 dense, 2 hybrid, 3 graph, 4 graph-verified).
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=4))]
    pub tier: Option<u8>,
    /// Show the whole trace: type, scores, tier, each retriever's candidates, dropped
    /// candidates with reasons, timings.
    #[arg(long)]
    pub explain: bool,
    /// Answer from the law versions in force on this date (YYYY-MM-DD); the citations name
    /// the versions used.
    #[arg(long)]
    pub as_of: Option<String>,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub bm25: Bm25Args,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Copy, Clone, Debug, ValueEnum, PartialEq, Eq)]
pub enum SearchMode {
    Bm25,
    /// BM25 over character bigrams of each article's law name and text.
    Bigram,
    Dense,
    Hybrid,
}

impl SearchMode {
    pub fn mode(self) -> query_engine::retrieve::Mode {
        match self {
            SearchMode::Bm25 => query_engine::retrieve::Mode::Bm25,
            SearchMode::Bigram => query_engine::retrieve::Mode::Bigram,
            SearchMode::Dense => query_engine::retrieve::Mode::Dense,
            SearchMode::Hybrid => query_engine::retrieve::Mode::Hybrid,
        }
    }
}

#[derive(Copy, Clone, Debug, ValueEnum, PartialEq, Eq)]
pub enum FusionArg {
    Weighted,
    Rrf,
}

impl FusionArg {
    pub fn fusion(self) -> query_engine::retrieve::Fusion {
        match self {
            FusionArg::Weighted => query_engine::retrieve::Fusion::Weighted,
            FusionArg::Rrf => query_engine::retrieve::Fusion::Rrf,
        }
    }
}

#[derive(Args, Debug)]
pub struct EvalRetrievalArgs {
    /// Evaluation sets (JSONL with question and gold articles).
    #[arg(long = "set", value_name = "FILE", required = true, num_args = 1..)]
    pub sets: Vec<PathBuf>,
    /// Cut-offs for Recall@k, precision and F1.
    #[arg(long, default_value = "1,5,10,100")]
    pub k: String,
    /// Only the lexical retrievers, BM25 and bigram BM25 (no model needed; for stores
    /// built without embeddings).
    #[arg(long)]
    pub bm25_only: bool,
    /// Search superseded versions too (gold labels may cite the version in force when the
    /// question was asked).
    #[arg(long)]
    pub include_old: bool,
    /// How hybrid fuses BM25 and dense.
    #[arg(long, value_enum, default_value = "weighted")]
    pub fusion: FusionArg,
    /// When a retrieved article counts as the gold one: `text` (the gold article, or the
    /// same article with the same text in another version) or `number` (the same law and
    /// article number in any version).
    #[arg(long, value_enum, default_value = "text")]
    pub gold_match: GoldMatchArg,
    /// Writes each question's BM25, bigram BM25 and dense candidates (IRI and raw score),
    /// its query embedding and its gold IRIs as JSON lines to FILE, for error analysis and
    /// fusion experiments (`scripts/fusion_experiments.py`).
    #[arg(long, value_name = "FILE")]
    pub dump: Option<PathBuf>,
    /// Also score dense, hybrid and the re-ranking on the question's dense list fused with
    /// that of an answer the `[llm]` chat model drafts (HyDE; the `+draft` modes). Needs
    /// `[llm]` in the configuration file.
    #[arg(long, conflicts_with = "bm25_only")]
    pub draft: bool,
    /// The draft's weight in the fused dense list: (sim(question) + w·sim(draft)) / (1 + w).
    #[arg(long, default_value_t = 1.0, requires = "draft", value_parser = parse_draft_weight)]
    pub draft_weight: f32,
    /// Questions drafted side by side (a local model decodes them as one batch: on a CPU
    /// several cost little more than one).
    #[arg(long, default_value_t = 8, requires = "draft", value_parser = clap::value_parser!(u16).range(1..=64))]
    pub draft_batch: u16,
    /// Only the first N questions of each set (drafting takes seconds a question).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    #[command(flatten)]
    pub bm25: Bm25Args,
    #[command(flatten)]
    pub model: ModelArgs,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Copy, Clone, Debug, ValueEnum, PartialEq, Eq)]
pub enum GoldMatchArg {
    Text,
    Number,
}

impl GoldMatchArg {
    pub fn matching(self) -> query_engine::eval::GoldMatch {
        match self {
            GoldMatchArg::Text => query_engine::eval::GoldMatch::Text,
            GoldMatchArg::Number => query_engine::eval::GoldMatch::Number,
        }
    }
}

impl EvalRetrievalArgs {
    pub fn ks(&self) -> anyhow::Result<Vec<usize>> {
        let ks: Vec<usize> = self
            .k
            .split(',')
            .map(|s| {
                s.trim()
                    .parse::<usize>()
                    .with_context(|| format!("--k: `{s}` is not a whole number"))
            })
            .collect::<anyhow::Result<_>>()?;
        if ks.is_empty() || ks.contains(&0) {
            bail!("--k needs positive cut-offs such as 1,5,10,100");
        }
        Ok(ks)
    }
}

/// Question sets for the commands that run the engine on many questions.
#[derive(Args, Debug)]
pub struct QuestionSets {
    /// Question sets (JSONL: question, gold articles, reference answer).
    #[arg(long = "set", value_name = "FILE", required = true, num_args = 1..)]
    pub sets: Vec<PathBuf>,
    /// At most this many questions per set (with `--within-store`, of the items kept).
    #[arg(long)]
    pub limit: Option<usize>,
    /// Only the items whose every gold article is in the store (the others are counted
    /// and left out): a set scored on a smaller corpus, as the paper's 16 statutes.
    #[arg(long)]
    pub within_store: bool,
}

impl QuestionSets {
    /// Each set's name (file name without `.jsonl`) and its first `limit` items.
    pub fn load(&self) -> anyhow::Result<Vec<(String, Vec<query_engine::eval::EvalItem>)>> {
        self.sets
            .iter()
            .map(|path| {
                let mut items = query_engine::eval::load_set(path)?;
                if !self.within_store {
                    items.truncate(self.limit.unwrap_or(usize::MAX));
                }
                let name = path
                    .file_name()
                    .map(|f| f.to_string_lossy().trim_end_matches(".jsonl").to_owned())
                    .unwrap_or_default();
                Ok((name, items))
            })
            .collect()
    }
}

#[derive(Args, Debug)]
pub struct EvalAnswerArgs {
    #[command(flatten)]
    pub questions: QuestionSets,
    /// Which configurations to run, comma-separated: routed, tier1, tier2, tier3, tier4,
    /// no-intrinsic, no-consistency, top10 (default: all, side by side).
    #[arg(long)]
    pub variants: Option<String>,
    /// Also write every question's outcome (set, variant, id, tier, answer kind, cited
    /// IRIs, F1) here as JSON lines.
    #[arg(long)]
    pub per_item: Option<PathBuf>,
    /// Also print a table by question type: each variant's article F1, Recall@10, mean
    /// context and median time per type (the JSON always holds it as `by_type`).
    #[arg(long)]
    pub by_type: bool,
    /// When a cited article counts as a gold one: `text` or `number` (see `eval retrieval`).
    #[arg(long, value_enum, default_value = "text")]
    pub gold_match: GoldMatchArg,
    /// With `[llm]`: the answers stay extractive (the model decomposes the questions and,
    /// with `[method] draft_from_tier`, drafts for the harder tiers, without the cost of
    /// generation).
    #[arg(long)]
    pub extractive: bool,
    /// With `[llm]`: the rules decompose the questions (with `--extractive` too, the
    /// model only drafts, for the tiers `[method] draft_from_tier` names).
    #[arg(long)]
    pub rule_decomposition: bool,
    #[command(flatten)]
    pub bm25: Bm25Args,
    #[command(flatten)]
    pub model: ModelArgs,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub store: StoreArgs,
}

impl EvalAnswerArgs {
    pub fn variants(&self) -> anyhow::Result<Vec<query_engine::eval_answer::Variant>> {
        use query_engine::eval_answer::{ALL_VARIANTS, Variant};
        match &self.variants {
            None => Ok(ALL_VARIANTS.to_vec()),
            Some(list) => list
                .split(',')
                .map(|v| {
                    Variant::parse(v.trim()).ok_or_else(|| {
                        anyhow::anyhow!("--variants: unknown `{v}` (routed, tier1, tier2, tier3, tier4, no-intrinsic, no-consistency, top10)")
                    })
                })
                .collect(),
        }
    }
}

#[derive(Args, Debug)]
pub struct CalibrateArgs {
    #[command(flatten)]
    pub questions: QuestionSets,
    /// Write the best constants here as a `[method]` table (a `coal.toml`); an existing
    /// file is not overwritten.
    #[arg(long)]
    pub write: Option<PathBuf>,
    /// Also fit on the even items of every set and report on the odd ones, and the other
    /// way round (routing that generalises, set by set). With a learned re-ranking
    /// (`[method.rerank_learned]`) and embeddings, each fold fits that on its half too and
    /// asks every question again under it (three times the questions' asks).
    #[arg(long)]
    pub two_folds: bool,
    /// Write each question's observations here, one JSON line each (routing signals,
    /// every forced tier's F1 and ranking before the cliff, with its gold matches).
    #[arg(long)]
    pub observations: Option<PathBuf>,
    #[command(flatten)]
    pub bm25: Bm25Args,
    #[command(flatten)]
    pub model: ModelArgs,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Args, Debug)]
pub struct FitRerankArgs {
    #[command(flatten)]
    pub questions: QuestionSets,
    /// 2: tier 2's re-ranking (`[method.rerank_learned]`); 3: tier 3's scoring of its
    /// graph candidates (`[method.graph_learned]`, fitted with the configured tier-2
    /// model in place).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(2..=3))]
    pub tier: u8,
    /// Write the method constants with the model fitted on every question here as a
    /// `[method]` table (a `coal.toml`); an existing file is not overwritten.
    #[arg(long)]
    pub write: Option<PathBuf>,
    /// Also write every question's candidates, features, hand scores and gold articles
    /// here, one JSON object a line (for fitting other rankers offline); an existing file
    /// is replaced.
    #[arg(long)]
    pub candidates: Option<PathBuf>,
    #[command(flatten)]
    pub model: ModelArgs,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Args, Debug)]
pub struct GraphArgs {
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Args, Debug)]
pub struct BenchAskArgs {
    /// Only the questions are read.
    #[command(flatten)]
    pub questions: QuestionSets,
    #[command(flatten)]
    pub bm25: Bm25Args,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Args, Debug)]
pub struct BenchEncoderArgs {
    /// Corpus folder the profile's paths are relative to.
    #[arg(long, env = "COAL_CORPUS", default_value = DEFAULT_CORPUS)]
    pub corpus: PathBuf,
    /// Which statutes to embed.
    #[arg(long, default_value = "../shared/corpus/profiles/social16.txt")]
    pub profile: PathBuf,
    /// How many articles to embed.
    #[arg(long, default_value_t = 400)]
    pub articles: usize,
    /// Also write the benchmarked texts here, one per line (for comparing other engines).
    #[arg(long)]
    pub write_texts: Option<PathBuf>,
    /// Rounds of the single-question latency measurement.
    #[arg(long, default_value_t = 20)]
    pub repeat: usize,
    /// Question sets (JSONL) whose questions the single-question measurement embeds, each
    /// once a round, instead of three fixed questions.
    #[arg(long)]
    pub questions: Vec<PathBuf>,
    /// Texts per `embed` call, one row each (comma-separated); the build embeds 256 at a time.
    #[arg(long, value_delimiter = ',', default_value = "64")]
    pub batch: Vec<usize>,
    /// Passes over the texts per batch size (the row reports their median).
    #[arg(long, default_value_t = 1)]
    pub passes: usize,
    /// How each call's forward passes use the cores, one row each (comma-separated):
    /// side-by-side (one pass per core, the default) or split (each pass over all cores).
    #[arg(long, value_delimiter = ',', default_value = "side-by-side")]
    pub layout: Vec<LayoutArg>,
    #[command(flatten)]
    pub model: ModelArgs,
}

/// `--layout` of `coal bench encoder` (mirrors `coal_models::PassLayout`, which knows
/// nothing of clap).
#[derive(ValueEnum, Clone, Copy, Debug)]
pub enum LayoutArg {
    SideBySide,
    Split,
}

impl From<LayoutArg> for coal_models::PassLayout {
    fn from(l: LayoutArg) -> Self {
        match l {
            LayoutArg::SideBySide => coal_models::PassLayout::SideBySide,
            LayoutArg::Split => coal_models::PassLayout::Split,
        }
    }
}

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Address to listen on (port 0: any free port; the address is printed).
    #[arg(long, default_value = "127.0.0.1:7878")]
    pub bind: std::net::SocketAddr,
    /// Accept SPARQL UPDATE at /update (the store's current build is opened writable).
    #[arg(long)]
    pub allow_update: bool,
    /// A SPARQL query running longer is cancelled (503).
    #[arg(long, default_value_t = 30.0)]
    pub query_timeout_secs: f64,
    /// Solutions or triples one response carries at most; more are cut, and the
    /// `Coal-Results-Truncated` header says so.
    #[arg(long, default_value_t = 100_000)]
    pub max_rows: usize,
    /// Larger request bodies are refused (413).
    #[arg(long, default_value_t = 1 << 20)]
    pub max_body_bytes: usize,
    /// A client that has not sent its request headers in this time is cut off.
    #[arg(long, default_value_t = 10.0)]
    pub header_timeout_secs: f64,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub store: StoreArgs,
}

impl ServeArgs {
    pub fn config(&self) -> anyhow::Result<coal_serve::ServeConfig> {
        let secs = |name: &str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(std::time::Duration::from_secs_f64(v))
            } else {
                Err(anyhow::anyhow!(
                    "--{name} must be a positive number of seconds, not {v}"
                ))
            }
        };
        if self.max_rows == 0 {
            bail!("--max-rows must be at least 1");
        }
        let mut c = coal_serve::ServeConfig::new(&self.store.store, self.bind);
        c.allow_update = self.allow_update;
        c.query_timeout = secs("query-timeout-secs", self.query_timeout_secs)?;
        c.header_timeout = secs("header-timeout-secs", self.header_timeout_secs)?;
        c.max_rows = self.max_rows;
        c.max_body_bytes = self.max_body_bytes;
        Ok(c)
    }
}

#[cfg(feature = "local-llm")]
#[derive(clap::Args)]
pub struct BenchLlmArgs {
    /// The GGUF chat model.
    #[arg(long, default_value = ".models/qwen2.5-coder-0.5b-instruct-q4.gguf")]
    pub model_path: PathBuf,
    /// Generation thread counts to compare, e.g. `1,2`.
    #[arg(long, value_delimiter = ',', default_value = "1,2")]
    pub threads: Vec<i32>,
    /// Prefill thread counts to compare with each (default: the same as `--threads`).
    #[arg(long, value_delimiter = ',')]
    pub batch_threads: Option<Vec<i32>>,
    /// Corpus folder the profile's paths are relative to.
    #[arg(long, env = "COAL_CORPUS", default_value = DEFAULT_CORPUS)]
    pub corpus: PathBuf,
    /// Statutes the prompts' articles come from.
    #[arg(long, default_value = "../shared/corpus/profiles/social16.txt")]
    pub profile: PathBuf,
    /// Articles, one prompt each.
    #[arg(long, default_value_t = 4)]
    pub prompts: usize,
    /// Rounds over the prompts.
    #[arg(long, default_value_t = 1)]
    pub repeat: usize,
    /// Tokens generated per reply.
    #[arg(long, default_value_t = 64)]
    pub max_tokens: u32,
}

/// BM25 field weights from `TITLE,HIERARCHY,LABEL,TEXT`.
/// `--draft-weight`: a finite number, at least 0.
pub fn parse_draft_weight(s: &str) -> Result<f32, String> {
    match s.trim().parse::<f32>() {
        Ok(w) if w.is_finite() && w >= 0.0 => Ok(w),
        _ => Err(format!("a number >= 0 is needed, not {s:?}")),
    }
}

pub fn parse_bm25_weights(s: &str) -> Result<kg_store::FieldWeights, String> {
    let w: Vec<f32> = s
        .split(',')
        .map(|x| {
            x.trim()
                .parse::<f32>()
                .map_err(|_| format!("`{x}` is not a number"))
        })
        .collect::<Result<_, _>>()?;
    match w[..] {
        [law_title, hierarchy, label, text] if w.iter().all(|v| *v >= 0.0) => {
            Ok(kg_store::FieldWeights {
                law_title,
                hierarchy,
                label,
                text,
            })
        }
        _ => Err("four weights >= 0 are needed: TITLE,HIERARCHY,LABEL,TEXT".into()),
    }
}

#[derive(Args, Debug, Clone)]
pub struct Bm25Args {
    /// BM25 weights of the law title, hierarchy path, label and text fields
    /// (default: kg_store::FieldWeights::default(), 0.5,0,1,1).
    #[arg(long, value_name = "TITLE,HIERARCHY,LABEL,TEXT", value_parser = parse_bm25_weights)]
    pub bm25_weights: Option<kg_store::FieldWeights>,
}

#[derive(Args, Debug)]
pub struct EvalTriplesArgs {
    /// A hand-checked sample: JSON lines of law (path under the corpus), article,
    /// subject, relation, object and `correct` (repeatable; e.g.
    /// tests/fixtures/checked-triples-unseen.jsonl).
    #[arg(long = "sample", value_name = "FILE", required = true)]
    pub samples: Vec<PathBuf>,
    /// Corpus folder the samples' law paths are relative to.
    #[arg(long, env = "COAL_CORPUS", default_value = DEFAULT_CORPUS)]
    pub corpus: PathBuf,
    /// Thresholds on the model's P(是) to report (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "0.3,0.5,0.7,0.9")]
    pub thresholds: Vec<f64>,
    /// The judgements are cached here by model and prompt (a rerun makes no call).
    /// Default: coal-verify-replies.jsonl in the temporary folder.
    #[arg(long)]
    pub cache: Option<PathBuf>,
    /// Also write every triple with its grounding outcome and P(是) here as JSON lines.
    #[arg(long)]
    pub per_triple: Option<PathBuf>,
    /// Only the grounding rules: no model is asked (seconds instead of ~3 s a triple),
    /// so a change to the rules is measured on every sample at once.
    #[arg(long)]
    pub grounding_only: bool,
    #[command(flatten)]
    pub model: ModelArgs,
}

impl EvalTriplesArgs {
    pub fn validate(&self) -> anyhow::Result<()> {
        if let Some(t) = self.thresholds.iter().find(|t| !(**t > 0.0 && **t < 1.0)) {
            bail!("--thresholds: {t} is not a probability between 0 and 1");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shipped extraction example is the configuration the tenth hand-checked sample
    /// measured (`make extraction-sample-tenth`): the 1.5B model, both precision keys.
    #[test]
    fn the_extraction_example_holds_the_measured_precision_keys() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../examples/coal.local-llm-extraction.toml");
        let models = Models {
            file: FileConfig::read(Some(&path)).unwrap(),
            local_model: None,
            threads: 1,
        };
        assert_eq!(models.skip_relations().unwrap(), vec!["规定".to_owned()]);
        assert_eq!(models.verify_triples().unwrap(), Some(0.75));
        let llm = models.file.llm.as_ref().unwrap();
        assert_eq!(
            llm.model_path.as_deref(),
            Some(std::path::Path::new(
                ".models/qwen2.5-coder-1.5b-instruct-q4.gguf"
            ))
        );
    }
}
