//! One short text's forward pass on every worker at once, the workers spinning at a
//! barrier between stages. Split into rayon tasks, a question's ~60 stages each woke the
//! other worker, and on this VM the wake-up took about as long as the stage: two threads
//! embedded a 30-token question no faster than one. Here the pool's threads are woken once
//! (`broadcast`) and stay busy until the pass ends.
//!
//! Every worker keeps its own copy of every activation. It computes its share of each
//! matrix's rows (for all tokens, GELU included), of the attention heads and of the
//! tokens' quantization and layer norms, publishes it, and after the barrier copies the
//! others' shares in. Each value is computed by the same code as in
//! [`E5Encoder::forward`], so the vectors are the same to the bit.

use std::sync::RwLock;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::kernels::{
    PackedQ4, QuantizedActs, add_layernorm, attend_head, matmul_packed, quantize,
};
use super::{E5Encoder, Linear, Stages};

/// Spins of [`SpinBarrier::wait`] (each a few nanoseconds) before it yields its core.
const SPINS_BEFORE_YIELDING: u32 = 20_000;

/// A barrier that spins instead of sleeping: the workers wait for each other for
/// microseconds, far less than a futex wake-up.
struct SpinBarrier {
    workers: usize,
    arrived: AtomicUsize,
    generation: AtomicUsize,
    /// Set when a worker panics, so that the others stop waiting for it.
    poisoned: AtomicBool,
}

impl SpinBarrier {
    fn new(workers: usize) -> SpinBarrier {
        SpinBarrier {
            workers,
            arrived: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
            poisoned: AtomicBool::new(false),
        }
    }

    fn wait(&self) {
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.workers {
            // Reset before the release, so the next barrier's arrivals count from 0.
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
            return;
        }
        let mut spins = 0u32;
        while self.generation.load(Ordering::Acquire) == generation {
            assert!(
                !self.poisoned.load(Ordering::Relaxed),
                "another encoder worker panicked"
            );
            // A stage's wait is microseconds; past that the other worker has most likely
            // lost its core, and spinning would keep it off this one.
            if spins < SPINS_BEFORE_YIELDING {
                spins += 1;
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }
}

/// Marks the barrier poisoned if its worker unwinds.
struct PoisonOnPanic<'a>(&'a SpinBarrier);

impl Drop for PoisonOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.poisoned.store(true, Ordering::Relaxed);
        }
    }
}

/// What one worker publishes at a stage: float pieces in the stage's order, or its rows
/// of quantized activations.
enum Piece {
    Floats(Vec<Vec<f32>>),
    Acts(QuantizedActs),
}

impl Piece {
    fn floats(&self) -> &[Vec<f32>] {
        match self {
            Piece::Floats(f) => f,
            Piece::Acts(_) => unreachable!("a stage exchanges one kind of piece"),
        }
    }

    fn acts(&self) -> &QuantizedActs {
        match self {
            Piece::Acts(a) => a,
            Piece::Floats(_) => unreachable!("a stage exchanges one kind of piece"),
        }
    }
}

/// Every worker's piece of a stage.
type Shares = Vec<RwLock<Piece>>;

/// One pass's shared state. Stages alternate between the two sets of shares: a worker
/// writes set `s % 2` at stage `s` only after the barrier of stage `s − 1`, which the
/// others pass only once they have read set `s % 2` at stage `s − 2`.
struct Team<'a> {
    worker: usize,
    workers: usize,
    barrier: &'a SpinBarrier,
    shares: &'a [Shares; 2],
    stage: usize,
    /// The model's width and attention heads.
    hidden: usize,
    heads: usize,
}

impl<'a> Team<'a> {
    /// This worker's run of `0..n` (panels or heads).
    fn share(&self, n: usize) -> std::ops::Range<usize> {
        self.share_of(self.worker, n)
    }

    fn share_of(&self, worker: usize, n: usize) -> std::ops::Range<usize> {
        n * worker / self.workers..n * (worker + 1) / self.workers
    }

    /// Publishes this worker's pieces, waits for everyone's, and returns every worker's
    /// pieces (read-locked) in worker order.
    fn exchange(&mut self, mine: Piece) -> Vec<std::sync::RwLockReadGuard<'a, Piece>> {
        let set: &'a Shares = &self.shares[self.stage % 2];
        self.stage += 1;
        *set[self.worker].write().expect("a worker's share") = mine;
        self.barrier.wait();
        set.iter()
            .map(|s| s.read().expect("a worker's share"))
            .collect()
    }

    /// Every worker's panels of each matrix.
    fn share_ranges<const N: usize>(
        &self,
        packed: &[&PackedQ4; N],
    ) -> Vec<Vec<std::ops::Range<usize>>> {
        packed
            .iter()
            .map(|p| {
                (0..self.workers)
                    .map(|w| self.share_of(w, p.panels()))
                    .collect()
            })
            .collect()
    }
}

/// The stages with this worker's share computed here and the others' copied in.
impl Stages for Team<'_> {
    /// `x·Wᵀ + b` of each of `linears` for every token, this worker's panels of rows
    /// computed here, then `finish` over them.
    fn apply<const N: usize>(
        &mut self,
        linears: [&Linear; N],
        acts: &QuantizedActs,
        tokens: usize,
        finish: fn(&mut [f32]),
    ) -> [Vec<f32>; N] {
        let packed: [&PackedQ4; N] =
            linears.map(|l| l.packed.as_ref().expect("a team needs packed weights"));
        let mine = linears
            .iter()
            .zip(&packed)
            .map(|(l, p)| {
                let panels = self.share(p.panels());
                let mut y = vec![0f32; tokens * panels.len() * p.panel_rows()];
                matmul_packed(p, &l.bias, acts, 0..tokens, panels, &mut y);
                finish(&mut y);
                y
            })
            .collect();
        let shares: Vec<_> = self.share_ranges(&packed);
        let all = self.exchange(Piece::Floats(mine));
        let mut outs: [Vec<f32>; N] = linears.map(|l| vec![0f32; tokens * l.rows]);
        for (i, (out, p)) in outs.iter_mut().zip(&packed).enumerate() {
            let rows = p.panels() * p.panel_rows();
            for (pieces, panels) in all.iter().zip(&shares[i]) {
                let (from, width) = (panels.start * p.panel_rows(), panels.len() * p.panel_rows());
                if width == 0 {
                    continue;
                }
                for (t, piece) in pieces.floats()[i].chunks_exact(width).enumerate() {
                    out[t * rows + from..t * rows + from + width].copy_from_slice(piece);
                }
            }
        }
        outs
    }

    /// [`quantize`] of `x`'s rows, this worker's share quantized here.
    fn quantize(&mut self, x: &[f32], cols: usize) -> QuantizedActs {
        let mine = self.share(x.len() / cols);
        let part = quantize(&x[mine.start * cols..mine.end * cols], cols);
        let all = self.exchange(Piece::Acts(part));
        let mut acts = QuantizedActs {
            q: Vec::with_capacity(x.len()),
            d: Vec::new(),
            s: Vec::new(),
            cols,
        };
        for piece in &all {
            let part = piece.acts();
            acts.q.extend_from_slice(&part.q);
            acts.d.extend_from_slice(&part.d);
            acts.s.extend_from_slice(&part.s);
        }
        acts
    }

    /// [`add_layernorm`] row by row, this worker's share of the rows here.
    fn add_layernorm(
        &mut self,
        x: &mut [f32],
        y: Option<&[f32]>,
        ln: &(Vec<f32>, Vec<f32>),
        cols: usize,
        eps: f32,
    ) {
        let rows = x.len() / cols;
        let mine = self.share(rows);
        let at = mine.start * cols..mine.end * cols;
        let mut part = x[at.clone()].to_vec();
        add_layernorm(&mut part, y.map(|y| &y[at]), &ln.0, &ln.1, cols, eps);
        let ranges: Vec<_> = (0..self.workers).map(|w| self.share_of(w, rows)).collect();
        let all = self.exchange(Piece::Floats(vec![part]));
        for (piece, rows) in all.iter().zip(ranges) {
            x[rows.start * cols..rows.end * cols].copy_from_slice(&piece.floats()[0]);
        }
    }

    /// Attention, this worker's heads of every segment computed here (as
    /// [`E5Encoder::attention`] computes each).
    fn attention(
        &mut self,
        q: &[f32],
        k: &[f32],
        v: &[f32],
        segments: &[(usize, usize)],
    ) -> Vec<f32> {
        let (hidden, heads) = (self.hidden, self.heads);
        let hd = hidden / heads;
        let mine = segments
            .iter()
            .flat_map(|&(a, b)| {
                self.share(heads)
                    .map(move |head| attend_head(q, k, v, hidden, a * hidden + head * hd, b - a))
            })
            .collect();
        let workers = self.workers;
        let ranges: Vec<_> = (0..workers).map(|w| self.share_of(w, heads)).collect();
        let all = self.exchange(Piece::Floats(mine));
        let mut ctx = vec![0f32; q.len()];
        for (pieces, shared) in all.iter().zip(&ranges) {
            let mut piece = pieces.floats().iter();
            for &(a, _) in segments {
                for head in shared.clone() {
                    let o = piece.next().expect("one piece per segment and head");
                    super::put_head(&mut ctx, hidden, heads, a, head, o);
                }
            }
        }
        ctx
    }
}

impl E5Encoder {
    /// [`Self::forward`] with the pool's workers as one team (see the module's text);
    /// `None` when another team pass is under way.
    pub(super) fn forward_team(
        &self,
        ids: &[u32],
        segments: &[(usize, usize)],
    ) -> Option<Vec<f32>> {
        // A poisoned lock only means an earlier pass panicked; its state is gone with it.
        let _one_team_at_a_time = match self.team.try_lock() {
            Ok(guard) => guard,
            Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return None,
        };
        let workers = self.pool.current_num_threads();
        let barrier = SpinBarrier::new(workers);
        let shares: [Shares; 2] = std::array::from_fn(|_| {
            (0..workers)
                .map(|_| RwLock::new(Piece::Floats(Vec::new())))
                .collect()
        });
        let mut outs = self.pool.broadcast(|ctx| {
            let _poison = PoisonOnPanic(&barrier);
            assert_eq!(ctx.num_threads(), workers);
            let mut team = Team {
                worker: ctx.index(),
                workers,
                barrier: &barrier,
                shares: &shares,
                stage: 0,
                hidden: self.cfg.hidden,
                heads: self.cfg.heads,
            };
            self.forward_with(&mut team, ids, segments)
        });
        Some(outs.swap_remove(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_barrier_holds_every_worker_until_all_arrive() {
        // Each round every worker adds 1, waits, then reads the total: it must be the
        // whole round's, never a count from the middle of it.
        let workers = 3;
        let barrier = SpinBarrier::new(workers);
        let count = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..workers {
                s.spawn(|| {
                    for round in 1..=200 {
                        count.fetch_add(1, Ordering::Relaxed);
                        barrier.wait();
                        assert_eq!(count.load(Ordering::Relaxed), round * workers);
                        barrier.wait();
                    }
                });
            }
        });
    }

    /// Three workers, so the tokens' rows split unevenly (4 tokens: 1, 1 and 2), on texts
    /// of 4 to ~30 tokens in one and two segments: the same bits as one thread's pass.
    #[test]
    fn uneven_shares_give_the_same_bits_as_one_thread() {
        let path = std::env::var_os("COAL_MODEL")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| {
                concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/../../shared/models/e5-small-q4.bin"
                )
                .into()
            });
        let load = |threads| {
            E5Encoder::load(&path, &crate::EncoderOptions { threads }).expect("the model")
        };
        let (one, three) = (load(1), load(3));
        if three.layers.iter().any(|l| l.q.packed.is_none()) {
            return; // no packed kernel on this CPU: no team either
        }
        let text = one.tokenize(
            "公司拖欠工资三个月，我可以解除劳动合同并要求经济补偿吗？",
            super::super::TextKind::Query,
        );
        for n in [2, 5, 17, text.len()] {
            let mut ids = vec![one.tokenizer.bos];
            ids.extend_from_slice(&text[..n.min(text.len())]);
            ids.push(one.tokenizer.eos);
            let whole = [(0, ids.len())];
            let want = one.pool.install(|| one.forward(&ids, &whole));
            assert_eq!(three.forward_team(&ids, &whole), Some(want), "{n} tokens");
            let halves = [(0, 3), (3, ids.len())];
            let want = one.pool.install(|| one.forward(&ids, &halves));
            assert_eq!(
                three.forward_team(&ids, &halves),
                Some(want),
                "{n} tokens in two segments"
            );
        }
    }

    #[test]
    fn a_worker_that_panics_releases_the_others() {
        let barrier = SpinBarrier::new(2);
        let outcomes: Vec<bool> = std::thread::scope(|s| {
            let spawn = |fail: bool| {
                let barrier = &barrier;
                s.spawn(move || {
                    let _poison = PoisonOnPanic(barrier);
                    if fail {
                        panic!("a kernel's assertion");
                    }
                    barrier.wait();
                })
            };
            let (a, b) = (spawn(true), spawn(false));
            vec![a.join().is_err(), b.join().is_err()]
        });
        assert_eq!(outcomes, vec![true, true], "both end, neither hangs");
    }
}
