//! A GGUF chat model run in-process by llama.cpp (the `local-llm` feature): the same
//! [`ChatModel`] interface as the HTTP client, with the model's own chat template, a
//! temperature, a bound on generated tokens and, where JSON is wanted, llama.cpp's JSON
//! grammar so the reply parses.
//!
//! One generation runs at a time (a mutex): on a CPU the threads of one generation
//! already use the machine, and two interleaved would each run at half speed.

use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;

use crate::ModelError;
use crate::chat::{ChatModel, ChatTotals};

/// llama.cpp's JSON grammar (MIT, from llama.cpp's `grammars/json.gbnf`).
const JSON_GRAMMAR: &str = include_str!("json.gbnf");

#[derive(Debug, Clone)]
pub struct LocalChatConfig {
    /// The GGUF file.
    pub model_path: PathBuf,
    /// Threads of one generation. 1 is fastest on a loaded 2-core machine: with more,
    /// OpenMP's spin-waiting competes with everything else (MODELS.md measured 10x).
    pub threads: i32,
    /// Threads of the prompt's prefill (one batched pass, compute-bound, so it gains from
    /// every core where generation, bound by memory, does not).
    pub batch_threads: i32,
    pub temperature: f32,
    /// Tokens generated at most per reply.
    pub max_tokens: u32,
    /// Prompt plus reply, in tokens (the KV cache's size).
    pub context_tokens: u32,
    /// Sampling seed (replies are reproducible for one seed, prompt and model).
    pub seed: u32,
}

impl LocalChatConfig {
    pub fn new(model_path: impl Into<PathBuf>) -> LocalChatConfig {
        LocalChatConfig {
            model_path: model_path.into(),
            threads: 1,
            batch_threads: 1,
            temperature: 0.3,
            max_tokens: 512,
            context_tokens: 4096,
            seed: 42,
        }
    }
}

/// What one reply cost: prompt tokens and their prefill time, generated tokens and
/// their time.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct GenerationStats {
    pub prompt_tokens: usize,
    pub prefill_secs: f64,
    pub generated_tokens: usize,
    pub generation_secs: f64,
    /// The reply stopped at `max_tokens`, not at the end of its turn.
    pub truncated: bool,
}

impl ChatTotals {
    /// One more reply.
    fn add(&mut self, s: &GenerationStats) {
        self.replies += 1;
        self.prompt_tokens += s.prompt_tokens;
        self.prefill_secs += s.prefill_secs;
        self.generated_tokens += s.generated_tokens;
        self.generation_secs += s.generation_secs;
        self.truncated += s.truncated as usize;
    }
}

impl GenerationStats {
    pub fn tokens_per_sec(&self) -> f64 {
        if self.generation_secs > 0.0 {
            self.generated_tokens as f64 / self.generation_secs
        } else {
            0.0
        }
    }
}

pub struct LocalChat {
    config: LocalChatConfig,
    id: String,
    model: LlamaModel,
    template: LlamaChatTemplate,
    /// Held for the whole of a generation: the last reply's costs, and all replies'.
    last: Mutex<(GenerationStats, ChatTotals)>,
}

/// llama.cpp's backend may be initialized once per process.
fn backend() -> Result<&'static LlamaBackend, ModelError> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            let mut b = LlamaBackend::init().map_err(|e| e.to_string())?;
            // llama.cpp logs every tensor to stderr; library crates do not print.
            b.void_logs();
            Ok(b)
        })
        .as_ref()
        .map_err(|e| ModelError::Local(format!("llama.cpp backend: {e}")))
}

impl LocalChat {
    pub fn load(config: LocalChatConfig) -> Result<LocalChat, ModelError> {
        let path = &config.model_path;
        if !path.is_file() {
            return Err(ModelError::Local(format!(
                "{}: no such model file (`make llm-model` fetches one)",
                path.display()
            )));
        }
        check_gguf(path)?;
        if config.threads < 1 || config.max_tokens == 0 || config.context_tokens < 256 {
            return Err(ModelError::Local(format!(
                "[llm] threads must be >= 1, max_tokens >= 1 and context_tokens >= 256 (got {}, {}, {})",
                config.threads, config.max_tokens, config.context_tokens
            )));
        }
        let model = LlamaModel::load_from_file(backend()?, path, &LlamaModelParams::default())
            .map_err(|e| ModelError::Local(format!("{}: {e}", path.display())))?;
        let template = model.chat_template(None).map_err(|e| {
            ModelError::Local(format!(
                "{}: no chat template in the file ({e})",
                path.display()
            ))
        })?;
        let name = path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(LocalChat {
            id: format!("local:{name}"),
            config,
            model,
            template,
            last: Mutex::new(Default::default()),
        })
    }

    /// How a token is picked: greedy at temperature 0, else top-k 40, top-p 0.95 and the
    /// temperature, seeded.
    fn sampler(&self) -> LlamaSampler {
        let cfg = &self.config;
        if cfg.temperature > 0.0 {
            LlamaSampler::chain_simple([
                LlamaSampler::top_k(40),
                LlamaSampler::top_p(0.95, 1),
                LlamaSampler::temp(cfg.temperature),
                LlamaSampler::dist(cfg.seed),
            ])
        } else {
            LlamaSampler::greedy()
        }
    }

    /// The costs of the last reply.
    pub fn last_stats(&self) -> GenerationStats {
        self.last.lock().map(|s| s.0).unwrap_or_default()
    }

    /// The prompt as the model's chat template writes it, ending where the assistant's
    /// turn begins.
    pub fn prompt(&self, system: &str, user: &str) -> Result<String, ModelError> {
        let msg = |role: &str, content: &str| {
            LlamaChatMessage::new(role.to_owned(), content.to_owned())
                .map_err(|e| ModelError::Local(format!("chat message: {e}")))
        };
        self.model
            .apply_chat_template(
                &self.template,
                &[msg("system", system)?, msg("user", user)?],
                true,
            )
            .map_err(|e| ModelError::Local(format!("chat template: {e}")))
    }

    /// A context holding the prompt (system and user message in the chat template), with
    /// the logits of its last token: the prompt's tokens, the batch and the prefill time.
    fn prefill(
        &self,
        system: &str,
        user: &str,
        reply_tokens: u32,
    ) -> Result<(LlamaContext<'_>, LlamaBatch<'_>, usize, f64), ModelError> {
        let cfg = &self.config;
        let prompt = self.prompt(system, user)?;
        let tokens = self.model.vocab().tokenize(prompt.as_bytes(), false, true);
        let budget = cfg.context_tokens as usize;
        if tokens.len() + reply_tokens as usize > budget {
            return Err(ModelError::Local(format!(
                "the prompt has {} tokens; with max_tokens {} it does not fit context_tokens {}",
                tokens.len(),
                reply_tokens,
                budget
            )));
        }
        let mut ctx = self.context(cfg.context_tokens, cfg.context_tokens, 1)?;
        let started = Instant::now();
        let mut batch = LlamaBatch::new(tokens.len().max(1), 1);
        let last_index = tokens.len() as i32 - 1;
        for (i, t) in tokens.iter().enumerate() {
            batch
                .add(*t, i as i32, &[0], i as i32 == last_index)
                .map_err(|e| ModelError::Local(format!("batch: {e}")))?;
        }
        ctx.decode(&mut batch)
            .map_err(|e| ModelError::Local(format!("prefill: {e}")))?;
        Ok((ctx, batch, tokens.len(), started.elapsed().as_secs_f64()))
    }

    /// A context of `n_ctx` tokens for `sequences` sequences, decoding up to `n_batch`
    /// tokens a call, on the configured threads.
    fn context(
        &self,
        n_ctx: u32,
        n_batch: u32,
        sequences: u32,
    ) -> Result<LlamaContext<'_>, ModelError> {
        let cfg = &self.config;
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(n_ctx))
            .with_n_batch(n_batch)
            .with_n_seq_max(sequences)
            .with_n_threads(cfg.threads)
            .with_n_threads_batch(cfg.batch_threads);
        self.model
            .new_context(backend()?, params)
            .map_err(|e| ModelError::Local(format!("context: {e}")))
    }

    /// The per-reply and running counts, held for the length of a call (one call at a
    /// time uses the model's contexts).
    fn stats(
        &self,
    ) -> Result<std::sync::MutexGuard<'_, (GenerationStats, ChatTotals)>, ModelError> {
        self.last
            .lock()
            .map_err(|_| ModelError::Local("an earlier generation panicked".into()))
    }

    /// Each user message under `system` in the chat template, as tokens.
    fn tokenized(&self, system: &str, users: &[&str]) -> Result<Vec<Vec<LlamaToken>>, ModelError> {
        users
            .iter()
            .map(|u| {
                let prompt = self.prompt(system, u)?;
                Ok(self.model.vocab().tokenize(prompt.as_bytes(), false, true))
            })
            .collect()
    }

    /// The token of each option; an option that is not one token is refused.
    fn option_tokens(&self, options: &[&str]) -> Result<Vec<LlamaToken>, ModelError> {
        options
            .iter()
            .map(
                |o| match self.model.vocab().tokenize(o.as_bytes(), false, false)[..] {
                    [one] => Ok(one),
                    _ => Err(ModelError::Local(format!(
                        "option `{o}` is not one token of this model"
                    ))),
                },
            )
            .collect()
    }

    /// The options' probabilities as the reply's first token of each prompt, from the
    /// prompt's last logits (a softmax over the options' logits; each option must be one
    /// token). One context: the tokens the prompts all open with are decoded once, then
    /// each prompt's rest in turn, its KV cache entries removed before the next.
    fn first_token_probabilities_many(
        &self,
        system: &str,
        users: &[&str],
        options: &[&str],
    ) -> Result<Vec<Vec<f64>>, ModelError> {
        if users.is_empty() {
            return Ok(Vec::new());
        }
        let mut last = self.stats()?;
        let ids = self.option_tokens(options)?;
        let prompts = self.tokenized(system, users)?;
        let shared = shared_opening(&prompts);
        let longest = prompts.iter().map(Vec::len).max().unwrap_or(0);
        let budget = self.config.context_tokens as usize;
        if longest + 1 > budget {
            return Err(ModelError::Local(format!(
                "a prompt has {longest} tokens; it does not fit context_tokens {budget}"
            )));
        }
        let tokens = self.config.context_tokens;
        let mut ctx = self.context(tokens, tokens, 1)?;
        let started = Instant::now();
        let mut batch = LlamaBatch::new(longest.max(1), 1);
        let decode = |ctx: &mut LlamaContext<'_>,
                      batch: &mut LlamaBatch<'_>,
                      tokens: &[LlamaToken],
                      from: usize|
         -> Result<(), ModelError> {
            batch.clear();
            for (i, t) in tokens.iter().enumerate() {
                batch
                    .add(*t, (from + i) as i32, &[0], i + 1 == tokens.len())
                    .map_err(|e| ModelError::Local(format!("batch: {e}")))?;
            }
            ctx.decode(batch)
                .map_err(|e| ModelError::Local(format!("prefill: {e}")))
        };
        if shared > 0 {
            decode(&mut ctx, &mut batch, &prompts[0][..shared], 0)?;
        }
        let mut out = Vec::with_capacity(prompts.len());
        for tokens in &prompts {
            decode(&mut ctx, &mut batch, &tokens[shared..], shared)?;
            out.push(softmax_over(ctx.get_logits_ith(batch.n_tokens() - 1), &ids));
            ctx.clear_kv_cache_seq(Some(0), Some(shared as u32), None)
                .map_err(|e| ModelError::Local(format!("KV cache: {e}")))?;
        }
        let stats = GenerationStats {
            prompt_tokens: shared + prompts.iter().map(|p| p.len() - shared).sum::<usize>(),
            prefill_secs: started.elapsed().as_secs_f64(),
            ..Default::default()
        };
        last.1.add(&stats);
        last.1.replies += prompts.len() - 1;
        last.0 = stats;
        Ok(out)
    }

    fn generate(
        &self,
        system: &str,
        user: &str,
        grammar: Option<&str>,
    ) -> Result<String, ModelError> {
        let mut last = self.stats()?;
        let cfg = &self.config;
        let (mut ctx, mut batch, prompt_tokens, prefill_secs) =
            self.prefill(system, user, cfg.max_tokens)?;
        // The grammar is checked against the token the plain chain picks, and only when
        // that token breaks it is the whole vocabulary filtered (as llama.cpp's own sampler
        // does): filtering 150k tokens at every step made generation ~10x slower.
        let mut grammar = grammar
            .map(|g| {
                LlamaSampler::grammar(&self.model, g, "root")
                    .map_err(|e| ModelError::Local(format!("grammar: {e}")))
            })
            .transpose()?;
        let mut chain = self.sampler();
        let started = Instant::now();
        let mut bytes = Vec::new();
        let mut pos = prompt_tokens as i32;
        let mut generated = 0usize;
        let mut truncated = true;
        while generated < cfg.max_tokens as usize {
            let at = batch.n_tokens() - 1;
            let mut token = chain.sample(&ctx, at);
            if let Some(g) = grammar.as_mut() {
                let mut one =
                    LlamaTokenDataArray::new(vec![LlamaTokenData::new(token, 1.0, 0.0)], false);
                one.apply_sampler(g);
                if !one.data[0].logit().is_finite() {
                    let mut all = ctx.token_data_array_ith(at);
                    all.apply_sampler(g);
                    all.apply_sampler(&mut chain);
                    token = all.selected_token().ok_or_else(|| {
                        ModelError::Local("the JSON grammar left no token to sample".into())
                    })?;
                }
                g.accept(token);
            }
            if self.model.vocab().is_eog(token) {
                truncated = false;
                break;
            }
            bytes.extend(self.model.vocab().token_to_piece(token, false, None));
            generated += 1;
            batch.clear();
            batch
                .add(token, pos, &[0], true)
                .map_err(|e| ModelError::Local(format!("batch: {e}")))?;
            pos += 1;
            ctx.decode(&mut batch)
                .map_err(|e| ModelError::Local(format!("generation: {e}")))?;
        }
        let stats = GenerationStats {
            prompt_tokens,
            prefill_secs,
            generated_tokens: generated,
            generation_secs: started.elapsed().as_secs_f64(),
            truncated,
        };
        last.1.add(&stats);
        last.0 = stats;
        // Pieces are bytes: a character may span two tokens, so decode once at the end.
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
}

impl LocalChat {
    /// Replies to several user messages decoded side by side: one context holds every
    /// sequence, and each step decodes one token of each unfinished one in a single batch.
    /// Generation reads all of the model's weights per step whatever the batch holds, so
    /// on a CPU eight sequences cost far less than eight times one. Greedy replies match
    /// [`LocalChat::complete`]'s up to floating-point summation order.
    fn generate_many(&self, system: &str, users: &[&str]) -> Result<Vec<String>, ModelError> {
        if users.len() <= 1 {
            return users
                .iter()
                .map(|u| self.generate(system, u, None))
                .collect();
        }
        let mut last = self.stats()?;
        let cfg = &self.config;
        let prompts = self.tokenized(system, users)?;
        let longest = prompts.iter().map(Vec::len).max().unwrap_or(0);
        if longest + cfg.max_tokens as usize > cfg.context_tokens as usize {
            return Err(ModelError::Local(format!(
                "a prompt has {longest} tokens; with max_tokens {} it does not fit context_tokens {}",
                cfg.max_tokens, cfg.context_tokens
            )));
        }
        // Each sequence gets its own share of the KV cache (llama.cpp pads to 256).
        let per_sequence = (longest + cfg.max_tokens as usize).div_ceil(256) * 256;
        let n = users.len();
        let n_ctx = (per_sequence * n) as u32;
        let prompt_total: usize = prompts.iter().map(Vec::len).sum();
        let mut ctx = self.context(n_ctx, prompt_total.max(n) as u32, n as u32)?;
        let started = Instant::now();
        let mut batch = LlamaBatch::new(prompt_total.max(n), 1);
        // Where in the last decoded batch each unfinished sequence's logits are.
        let mut logits_at = Vec::with_capacity(n);
        for (seq, tokens) in prompts.iter().enumerate() {
            for (i, t) in tokens.iter().enumerate() {
                let last_token = i + 1 == tokens.len();
                batch
                    .add(*t, i as i32, &[seq as i32], last_token)
                    .map_err(|e| ModelError::Local(format!("batch: {e}")))?;
            }
            logits_at.push(Some(batch.n_tokens() - 1));
        }
        ctx.decode(&mut batch)
            .map_err(|e| ModelError::Local(format!("prefill: {e}")))?;
        let prefill_secs = started.elapsed().as_secs_f64();
        let started = Instant::now();
        // One chain per sequence: a sampling chain carries its random state.
        let mut chains: Vec<LlamaSampler> = (0..n).map(|_| self.sampler()).collect();
        let mut bytes = vec![Vec::new(); n];
        let mut pos: Vec<i32> = prompts.iter().map(|p| p.len() as i32).collect();
        let mut truncated = vec![true; n];
        let mut generated = 0usize;
        for _ in 0..cfg.max_tokens {
            let mut next = Vec::new();
            for seq in 0..n {
                let Some(at) = logits_at[seq] else { continue };
                let token = chains[seq].sample(&ctx, at);
                if self.model.vocab().is_eog(token) {
                    truncated[seq] = false;
                    logits_at[seq] = None;
                    continue;
                }
                bytes[seq].extend(self.model.vocab().token_to_piece(token, false, None));
                generated += 1;
                next.push((seq, token));
            }
            if next.is_empty() {
                break;
            }
            batch.clear();
            for (i, &(seq, token)) in next.iter().enumerate() {
                batch
                    .add(token, pos[seq], &[seq as i32], true)
                    .map_err(|e| ModelError::Local(format!("batch: {e}")))?;
                pos[seq] += 1;
                logits_at[seq] = Some(i as i32);
            }
            ctx.decode(&mut batch)
                .map_err(|e| ModelError::Local(format!("generation: {e}")))?;
        }
        let stats = GenerationStats {
            prompt_tokens: prompt_total,
            prefill_secs,
            generated_tokens: generated,
            generation_secs: started.elapsed().as_secs_f64(),
            truncated: false,
        };
        last.1.add(&stats);
        last.1.replies += n - 1;
        last.1.truncated += truncated.iter().filter(|&&t| t).count();
        last.0 = stats;
        Ok(bytes
            .iter()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .collect())
    }
}

/// A softmax over the options' logits.
fn softmax_over(logits: &[f32], ids: &[LlamaToken]) -> Vec<f64> {
    let chosen: Vec<f64> = ids.iter().map(|t| logits[t.0 as usize] as f64).collect();
    let top = chosen.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let exp: Vec<f64> = chosen.iter().map(|l| (l - top).exp()).collect();
    let sum: f64 = exp.iter().sum();
    exp.into_iter().map(|e| e / sum).collect()
}

/// How many tokens every prompt opens with, less one: each prompt keeps at least its last
/// token to decode, whose logits are the judgement.
fn shared_opening(prompts: &[Vec<LlamaToken>]) -> usize {
    let Some(first) = prompts.first() else {
        return 0;
    };
    let mut n = prompts
        .iter()
        .map(Vec::len)
        .min()
        .unwrap_or(0)
        .saturating_sub(1);
    for p in &prompts[1..] {
        n = n.min(first.iter().zip(p).take_while(|(a, b)| a == b).count());
    }
    n
}

/// A GGUF file starts with `GGUF`; anything else (a truncated download, an HTML error
/// page) is refused before llama.cpp reads it.
fn check_gguf(path: &Path) -> Result<(), ModelError> {
    use std::io::Read;
    let mut magic = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .map_err(|e| ModelError::Io {
            path: path.to_owned(),
            source: e,
        })?;
    if &magic != b"GGUF" {
        return Err(ModelError::Local(format!(
            "{}: not a GGUF file (it starts with {:?})",
            path.display(),
            String::from_utf8_lossy(&magic)
        )));
    }
    Ok(())
}

impl ChatModel for LocalChat {
    fn id(&self) -> &str {
        &self.id
    }

    fn complete(&self, system: &str, user: &str) -> Result<String, ModelError> {
        self.generate(system, user, None)
    }

    fn complete_json(&self, system: &str, user: &str) -> Result<String, ModelError> {
        self.generate(system, user, Some(JSON_GRAMMAR))
    }

    fn complete_with_grammar(
        &self,
        system: &str,
        user: &str,
        grammar: &str,
    ) -> Result<String, ModelError> {
        self.generate(system, user, Some(grammar))
    }

    fn option_probabilities(
        &self,
        system: &str,
        user: &str,
        options: &[&str],
    ) -> Result<Vec<f64>, ModelError> {
        let mut one = self.first_token_probabilities_many(system, &[user], options)?;
        Ok(one.remove(0))
    }

    fn option_probabilities_many(
        &self,
        system: &str,
        users: &[&str],
        options: &[&str],
    ) -> Result<Vec<Vec<f64>>, ModelError> {
        self.first_token_probabilities_many(system, users, options)
    }

    fn complete_many(&self, system: &str, users: &[&str]) -> Result<Vec<String>, ModelError> {
        self.generate_many(system, users)
    }

    fn one_at_a_time(&self) -> bool {
        true
    }

    fn totals(&self) -> Option<ChatTotals> {
        self.last.lock().ok().map(|s| s.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompts(lists: &[&[i32]]) -> Vec<Vec<LlamaToken>> {
        lists
            .iter()
            .map(|l| l.iter().map(|&t| LlamaToken(t)).collect())
            .collect()
    }

    #[test]
    fn the_shared_opening_leaves_each_prompt_its_last_token() {
        assert_eq!(shared_opening(&prompts(&[&[1, 2, 3, 4], &[1, 2, 5]])), 2);
        // Identical prompts: every token but the last is shared.
        assert_eq!(shared_opening(&prompts(&[&[1, 2], &[1, 2]])), 1);
        assert_eq!(shared_opening(&prompts(&[&[7, 2], &[1, 2]])), 0);
        assert_eq!(shared_opening(&prompts(&[&[1, 2, 3]])), 2);
        assert_eq!(shared_opening(&[]), 0);
    }
}
