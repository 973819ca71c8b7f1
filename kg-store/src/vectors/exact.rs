//! The exact search of an index under 40,000 vectors: a scan of byte codes of the
//! vectors whose error bounds say which rows could be among the nearest, those rescored
//! with the floats, so that the result is the float scan's by construction.

/// The `want` nearest of an exact scan's rows that `keep` lets through, exactly the float
/// scan's. A floor that `want` rows' lower bounds (approximate dot less its error bound,
/// counted in `floor` for the rows kept) reach rules out every row whose upper bound stays
/// below it. Of the rest, the `want` best by their codes are scored with the floats; their
/// `want`-th dot product is a cut that only the rows left with an upper bound above it
/// could beat, and those are scored too (near-ties at the cut-off, which identical closing
/// articles of many laws make, are among them). On the eval profile that is ~2.4× `want`
/// rows of ~24,000 (counted with a timer and counter added for the measurement). Returns (vector id, 1 − dot), nearest first.
pub(super) fn rescore(
    approximate: &[Approximate],
    keep: impl Fn(&Approximate) -> bool,
    floor: &LowerBounds,
    want: usize,
    ids: &[usize],
    rows: &[f32],
    q: &[f32],
) -> Vec<(usize, f32)> {
    // Float rounding of the dot products themselves: ~3 times the worst f32 error of a
    // 384-term dot product of unit vectors (~3e-6).
    const SLACK: f32 = 1e-5;
    if want == 0 {
        return Vec::new();
    }
    let floor = floor.floor(want) - SLACK;
    let mut candidates: Vec<Approximate> = approximate
        .iter()
        .filter(|a| a.dot + a.error >= floor && keep(a))
        .copied()
        .collect();
    // The `want` best by their codes first: their floats make a cut near the final one.
    let first = want.min(candidates.len());
    if candidates.len() > first {
        candidates.select_nth_unstable_by(first - 1, |a, b| b.dot.total_cmp(&a.dot));
    }
    let exact = |scored: &mut dyn Iterator<Item = &Approximate>| -> Vec<(usize, f32)> {
        let which: Vec<usize> = scored.map(|a| a.row).collect();
        which
            .iter()
            .zip(float_dots(rows, &which, q))
            .map(|(&row, dot)| (ids[row], 1.0 - dot))
            .collect()
    };
    let (first, rest) = candidates.split_at(first);
    let mut d = exact(&mut first.iter());
    if !rest.is_empty() {
        let cut = d.iter().map(|x| 1.0 - x.1).fold(f32::INFINITY, f32::min) - SLACK;
        d.extend(exact(&mut rest.iter().filter(|a| a.dot + a.error >= cut)));
    }
    let by = |a: &(usize, f32), b: &(usize, f32)| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0));
    if d.len() > want {
        d.select_nth_unstable_by(want, by);
        d.truncate(want);
    }
    d.sort_by(by);
    d
}

/// Counts of values in fixed buckets of [−[`BOUND_RANGE`], [`BOUND_RANGE`]]: the lower
/// bounds of a scan's dot products (unit vectors, so within ±1 and an error bound), from
/// which [`rescore`] takes its floor. Fixed buckets take one pass where a selection, or a
/// pass for the range first, took several times as long (~70 µs a pass over the eval
/// profile's 24,000 rows for the range alone, its minimum a chain of dependent steps).
pub(super) struct LowerBounds {
    pub(super) counts: Vec<u32>,
}

const BOUND_BUCKETS: usize = 4096;
const BOUND_RANGE: f32 = 1.0625;

impl LowerBounds {
    fn new() -> LowerBounds {
        LowerBounds {
            counts: vec![0; BOUND_BUCKETS],
        }
    }

    fn add(&mut self, v: f32) {
        self.add_if(v, true);
    }

    fn add_if(&mut self, v: f32, counted: bool) {
        self.counts[Self::bucket(v)] += counted as u32;
    }

    fn merge(&mut self, other: &LowerBounds) {
        for (mine, theirs) in self.counts.iter_mut().zip(&other.counts) {
            *mine += theirs;
        }
    }

    fn bucket(v: f32) -> usize {
        // `as` saturates: below the range is bucket 0, above it the last.
        let b = ((v + BOUND_RANGE) * (BOUND_BUCKETS as f32 / (2.0 * BOUND_RANGE))) as i32;
        b.clamp(0, BOUND_BUCKETS as i32 - 1) as usize
    }

    /// A value that at least `want` of the values counted reach, just below the `want`-th
    /// highest (−∞ when fewer were counted): the lower edge of the bucket before its own,
    /// since a value's bucket is computed in floats, a rounding off its true edge.
    pub(super) fn floor(&self, want: usize) -> f32 {
        let width = 2.0 * BOUND_RANGE / BOUND_BUCKETS as f32;
        let mut reached = 0usize;
        for b in (0..BOUND_BUCKETS).rev() {
            reached += self.counts[b] as usize;
            if reached >= want {
                // Bucket 0 holds whatever fell below the range too.
                return match b {
                    0 | 1 => f32::NEG_INFINITY,
                    _ => (b - 1) as f32 * width - BOUND_RANGE,
                };
            }
        }
        f32::NEG_INFINITY
    }
}

/// Rows quantized to signed bytes, each with its own scale (its largest |component| / 127),
/// so an exact scan reads a byte per dimension instead of four.
///
/// With v = s·(c + e) (codes c, rounding residual e, |e_i| ≤ ½), and the query in two
/// bytes per dimension, q = t·(h + l/254 + r) (high codes h, low codes l, what is left r,
/// |r_i| ≤ 1/508), the approximate dot s·t·(c·h + c·l/254) misses s·t·(c·r + e·q/t),
/// which by Cauchy–Schwarz is at most s·t·(‖c‖‖r‖ + ‖e‖‖q‖/t): each row keeps ‖c‖ and
/// ‖e‖ so that [`rescore`] can tell which rows could still be among the nearest. The
/// query's second byte halves that bound (its first byte alone left ‖c‖‖e_q‖, as large as
/// the row's term) at no cost in memory read: the scan reads each row's codes once.
pub(super) struct QuantizedRows {
    dim: usize,
    codes: Vec<i8>,
    scales: Vec<f32>,
    /// Per row, (‖c‖, ‖e‖).
    norms: Vec<(f32, f32)>,
}

/// A query in two bytes per dimension (see [`QuantizedRows`]).
pub(super) struct QuantizedQuery {
    pub(super) high: Vec<i8>,
    pub(super) low: Vec<i8>,
    pub(super) scale: f32,
    /// ‖q‖ / scale.
    pub(super) norm: f32,
    /// ‖r‖: what the two bytes leave.
    pub(super) residual: f32,
    /// Σ h and Σ l ([`dot_i8_vnni`] reads codes shifted by 128 and takes 128·Σ back off).
    pub(super) sums: (i32, i32),
}

/// What a scan of byte codes gives: each row's approximate dot product, and the lower
/// bounds of all of them and of the rows marked, counted for [`rescore`]'s floor.
pub(super) struct Scanned {
    pub(super) approximate: Vec<Approximate>,
    pub(super) all: LowerBounds,
    pub(super) marked: LowerBounds,
}

impl Scanned {
    /// Appends the scan of the rows that follow.
    fn extend(&mut self, other: Scanned) {
        self.approximate.extend(other.approximate);
        self.all.merge(&other.all);
        self.marked.merge(&other.marked);
    }
}

/// The low byte's step: a high code's rounding residual (within ±½) times 254 fits a byte.
const LOW_STEP: f32 = 254.0;

/// A row's approximate dot product with the query and a bound on its error.
#[derive(Debug, Clone, Copy)]
pub(super) struct Approximate {
    pub(super) row: usize,
    pub(super) dot: f32,
    pub(super) error: f32,
}

/// Appends `v`'s codes to `out`: (scale, (‖codes‖, ‖rounding residual‖)).
fn quantize(v: &[f32], out: &mut Vec<i8>) -> (f32, (f32, f32)) {
    let scale = byte_scale(v);
    let (mut codes, mut residual) = (0f64, 0f64);
    out.extend(v.iter().map(|x| {
        let c = (x / scale).round() as i8;
        codes += (c as f64).powi(2);
        residual += (*x as f64 / scale as f64 - c as f64).powi(2);
        c
    }));
    (scale, (codes.sqrt() as f32, residual.sqrt() as f32))
}

/// The scale that maps `v`'s largest |component| to 127.
fn byte_scale(v: &[f32]) -> f32 {
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    if max > 0.0 { max / 127.0 } else { 1.0 }
}

impl QuantizedRows {
    pub(super) fn of(rows: &[f32], dim: usize) -> QuantizedRows {
        let mut codes = Vec::with_capacity(rows.len());
        let (scales, norms) = rows
            .chunks_exact(dim.max(1))
            .map(|row| quantize(row, &mut codes))
            .unzip();
        QuantizedRows {
            dim,
            codes,
            scales,
            norms,
        }
    }

    /// The approximate dot product with `q` of each of `rows`, with its error bound, and
    /// their lower bounds counted (those of the rows `marked` says, the 款's, apart too);
    /// the scan reads a byte per dimension where the floats take four, in two threads for
    /// long scans when the machine has two cores.
    pub(super) fn scan(&self, q: &[f32], rows: &[usize], marked: Option<&[bool]>) -> Scanned {
        static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
        let cores =
            *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        let q = QuantizedQuery::of(q);
        if rows.len() <= SPLIT_SCAN_ABOVE || cores < 2 {
            return self.scan_in_this_thread(&q, rows, marked);
        }
        let (first, second) = rows.split_at(rows.len() / 2);
        std::thread::scope(|scope| {
            let other = scope.spawn(|| self.scan_in_this_thread(&q, second, marked));
            let mut scanned = self.scan_in_this_thread(&q, first, marked);
            scanned.extend(other.join().expect("a scan does not panic"));
            scanned
        })
    }

    /// [`QuantizedRows::scan`] in this thread: one loop compiled for AVX-512 VNNI or AVX2
    /// when the CPU has it, so that the per-row product is inlined.
    fn scan_in_this_thread(
        &self,
        q: &QuantizedQuery,
        rows: &[usize],
        marked: Option<&[bool]>,
    ) -> Scanned {
        #[cfg(target_arch = "x86_64")]
        {
            #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
            unsafe fn vnni(
                codes: &QuantizedRows,
                q: &QuantizedQuery,
                rows: &[usize],
                marked: Option<&[bool]>,
            ) -> Scanned {
                // SAFETY: the caller checked for AVX-512 VNNI.
                codes.scan_with(q, rows, marked, |row| unsafe { dot_i8_vnni(row, q) })
            }
            #[target_feature(enable = "avx2")]
            unsafe fn avx2(
                codes: &QuantizedRows,
                q: &QuantizedQuery,
                rows: &[usize],
                marked: Option<&[bool]>,
            ) -> Scanned {
                // SAFETY: the caller checked for AVX2.
                codes.scan_with(q, rows, marked, |row| unsafe { dot_i8_avx2(row, q) })
            }
            if has_vnni() {
                // SAFETY: the CPU has AVX-512 F, BW and VNNI (checked just above).
                return unsafe { vnni(self, q, rows, marked) };
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU has AVX2 (checked just above).
                return unsafe { avx2(self, q, rows, marked) };
            }
        }
        self.scan_with(q, rows, marked, |row| dot_i8_scalar(row, q))
    }

    /// The scan's loop with the byte dot product `dot`, inlined into its caller so that a
    /// caller compiled for VNNI or AVX2 compiles the loop for it too. One pass makes the
    /// approximate dot products and counts their lower bounds: the eval profile's 24,000
    /// rows took ~0.1 ms a pass more when counted apart.
    #[inline(always)]
    fn scan_with(
        &self,
        q: &QuantizedQuery,
        rows: &[usize],
        marked: Option<&[bool]>,
        dot: impl Fn(&[i8]) -> (i32, i32),
    ) -> Scanned {
        let mut scanned = Scanned {
            approximate: Vec::with_capacity(rows.len()),
            all: LowerBounds::new(),
            marked: LowerBounds::new(),
        };
        for &row in rows {
            let (high, low) = dot(&self.codes[row * self.dim..(row + 1) * self.dim]);
            let scale = self.scales[row] * q.scale;
            let (c, e) = self.norms[row];
            let a = Approximate {
                row,
                dot: (high as f32 + low as f32 / LOW_STEP) * scale,
                // Rounded up a little: the bound is computed in floats too.
                error: (c * q.residual + e * q.norm) * scale * 1.001,
            };
            scanned.all.add(a.dot - a.error);
            if let Some(marked) = marked {
                // Without a branch: which rows are 款's follows no pattern a CPU predicts.
                scanned.marked.add_if(a.dot - a.error, marked[row]);
            }
            scanned.approximate.push(a);
        }
        scanned
    }

    /// The approximate dot product of row `row` with the query.
    #[cfg(test)]
    pub(super) fn dot(&self, row: usize, q: &QuantizedQuery) -> f32 {
        let codes = &self.codes[row * self.dim..(row + 1) * self.dim];
        let (high, low) = dot_i8_scalar(codes, q);
        (high as f32 + low as f32 / LOW_STEP) * self.scales[row] * q.scale
    }
}

impl QuantizedQuery {
    pub(super) fn of(q: &[f32]) -> QuantizedQuery {
        let scale = byte_scale(q);
        let (mut norm, mut residual) = (0f64, 0f64);
        let (high, low): (Vec<i8>, Vec<i8>) = q
            .iter()
            .map(|&x| {
                let exact = x as f64 / scale as f64;
                let high = exact.round();
                let low = ((exact - high) * LOW_STEP as f64)
                    .round()
                    .clamp(-127.0, 127.0);
                norm += exact * exact;
                residual += (exact - high - low / LOW_STEP as f64).powi(2);
                (high as i8, low as i8)
            })
            .unzip();
        QuantizedQuery {
            sums: byte_sums(&high, &low),
            high,
            low,
            scale,
            norm: norm.sqrt() as f32,
            residual: residual.sqrt() as f32,
        }
    }
}

/// Σ h and Σ l of a query's bytes.
pub(super) fn byte_sums(high: &[i8], low: &[i8]) -> (i32, i32) {
    let sum = |b: &[i8]| b.iter().map(|&x| x as i32).sum();
    (sum(high), sum(low))
}

/// [`dot`] of `q` with each of `rows` (of `q.len()` floats each): compiled for AVX (no
/// FMA) when the CPU has it, one eight-lane register where SSE needs two, with the same
/// per-lane products and sums, so the results are the same to the bit.
fn float_dots(vectors: &[f32], rows: &[usize], q: &[f32]) -> Vec<f32> {
    let dim = q.len();
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx")]
        unsafe fn avx(vectors: &[f32], rows: &[usize], q: &[f32], dim: usize) -> Vec<f32> {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            // The rows are scattered over the index (tens of MB): each is asked for from
            // memory two rows ahead of its product, ~2x faster than waiting for it.
            let fetch = |at: Option<&usize>| {
                if let Some(&row) = at {
                    for line in (row * dim..(row + 1) * dim).step_by(16) {
                        // SAFETY: `line` is within `vectors` (a prefetch never faults).
                        unsafe {
                            _mm_prefetch::<_MM_HINT_T0>(vectors.as_ptr().add(line) as *const i8)
                        };
                    }
                }
            };
            fetch(rows.first());
            fetch(rows.get(1));
            rows.iter()
                .enumerate()
                .map(|(i, &row)| {
                    fetch(rows.get(i + 2));
                    dot(&vectors[row * dim..(row + 1) * dim], q)
                })
                .collect()
        }
        if std::arch::is_x86_feature_detected!("avx") {
            // SAFETY: the CPU has AVX (checked just above).
            return unsafe { avx(vectors, rows, q, dim) };
        }
    }
    per_row(vectors, dim, rows, |row| dot(row, q))
}

/// `f` of each of `rows` (of `dim` items of `data` each), inlined into its caller so that
/// a caller compiled for AVX compiles `f` for AVX too.
#[inline(always)]
fn per_row<T, R>(data: &[T], dim: usize, rows: &[usize], f: impl Fn(&[T]) -> R) -> Vec<R> {
    rows.iter()
        .map(|&r| f(&data[r * dim..(r + 1) * dim]))
        .collect()
}

/// Σ a·h and Σ a·l (a row's codes with the query's high and low bytes, all in
/// [−127, 127]), in 32-bit sums (384 products of at most 127² fit easily).
pub(super) fn dot_i8_scalar(a: &[i8], q: &QuantizedQuery) -> (i32, i32) {
    (byte_dot(a, &q.high), byte_dot(a, &q.low))
}

/// Σ a·b over bytes, in 32 bits.
fn byte_dot(a: &[i8], b: &[i8]) -> i32 {
    a.iter().zip(b).map(|(&x, &y)| x as i32 * y as i32).sum()
}

/// [`dot_i8_scalar`] 32 bytes at a time: |a| (unsigned) times h and l with a's sign,
/// summed in pairs into 16 bits (`vpmaddubsw`; 2·127² fits) and then into 32 (`vpmaddwd`).
/// The compiler's own vectorization of the scalar loop was no faster than the float scan
/// the codes replace.
///
/// # Safety
/// The CPU must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
pub(super) unsafe fn dot_i8_avx2(a: &[i8], q: &QuantizedQuery) -> (i32, i32) {
    use std::arch::x86_64::*;
    let (h, l) = (&q.high[..], &q.low[..]);
    let n = a.len().min(h.len()).min(l.len());
    let ones = _mm256_set1_epi16(1);
    let (mut acc_h, mut acc_l) = (_mm256_setzero_si256(), _mm256_setzero_si256());
    let mut i = 0;
    while i + 32 <= n {
        // SAFETY: i + 32 ≤ n ≤ every length; unaligned loads.
        let (va, vh, vl) = unsafe {
            (
                _mm256_loadu_si256(a.as_ptr().add(i) as *const __m256i),
                _mm256_loadu_si256(h.as_ptr().add(i) as *const __m256i),
                _mm256_loadu_si256(l.as_ptr().add(i) as *const __m256i),
            )
        };
        let magnitude = _mm256_sign_epi8(va, va);
        let pairs_h = _mm256_maddubs_epi16(magnitude, _mm256_sign_epi8(vh, va));
        let pairs_l = _mm256_maddubs_epi16(magnitude, _mm256_sign_epi8(vl, va));
        acc_h = _mm256_add_epi32(acc_h, _mm256_madd_epi16(pairs_h, ones));
        acc_l = _mm256_add_epi32(acc_l, _mm256_madd_epi16(pairs_l, ones));
        i += 32;
    }
    let lanes = |acc: __m256i| {
        let mut lanes = [0i32; 8];
        // SAFETY: `lanes` is 32 bytes; unaligned store.
        unsafe { _mm256_storeu_si256(lanes.as_mut_ptr() as *mut __m256i, acc) };
        lanes.iter().sum::<i32>()
    };
    let tail = |b: &[i8]| byte_dot(&a[i..n], &b[i..n]);
    (lanes(acc_h) + tail(h), lanes(acc_l) + tail(l))
}

/// Does the CPU have AVX-512 VNNI (and the F and BW parts it needs)?
#[cfg(target_arch = "x86_64")]
pub(super) fn has_vnni() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512vnni")
}

/// [`dot_i8_scalar`] 64 bytes at a time with one instruction per query byte vector
/// (`vpdpbusd`: unsigned times signed bytes, four products summed into each 32-bit lane)
/// where AVX2 takes four: a row's codes are shifted by 128 into unsigned bytes (a + 128,
/// a flip of the top bit), and 128·Σ of the query's bytes taken back off the sums, which
/// is exact in integers. One thread scans 24,000 rows of 384 bytes in ~0.8 ms where the
/// AVX2 loop takes ~1.2 ms (a test's warm rows); in `ask`, where the codes come from
/// memory after the query's embedding, two threads of either are at ~1 ms.
///
/// # Safety
/// The CPU must have AVX-512 F, BW and VNNI.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
#[inline]
pub(super) unsafe fn dot_i8_vnni(a: &[i8], q: &QuantizedQuery) -> (i32, i32) {
    use std::arch::x86_64::*;
    let (h, l) = (&q.high[..], &q.low[..]);
    let n = a.len().min(h.len()).min(l.len());
    let flip = _mm512_set1_epi8(i8::MIN);
    let (mut acc_h, mut acc_l) = (_mm512_setzero_si512(), _mm512_setzero_si512());
    let mut i = 0;
    while i + 64 <= n {
        // SAFETY: i + 64 ≤ n ≤ every length; unaligned loads.
        let (va, vh, vl) = unsafe {
            (
                _mm512_loadu_si512(a.as_ptr().add(i) as *const _),
                _mm512_loadu_si512(h.as_ptr().add(i) as *const _),
                _mm512_loadu_si512(l.as_ptr().add(i) as *const _),
            )
        };
        let shifted = _mm512_xor_si512(va, flip);
        acc_h = _mm512_dpbusd_epi32(acc_h, shifted, vh);
        acc_l = _mm512_dpbusd_epi32(acc_l, shifted, vl);
        i += 64;
    }
    // The shift was applied to the first i bytes only: the query's sums over them.
    let (tail_h, tail_l) = byte_sums(&h[i..n], &l[i..n]);
    let (sum_h, sum_l) = (q.sums.0 - tail_h, q.sums.1 - tail_l);
    let tail = |b: &[i8]| byte_dot(&a[i..n], &b[i..n]);
    (
        _mm512_reduce_add_epi32(acc_h) - 128 * sum_h + tail(h),
        _mm512_reduce_add_epi32(acc_l) - 128 * sum_l + tail(l),
    )
}

/// Rows a scan splits over two threads past: two cores scan faster than one (the eval
/// profile's ~24,000 current vectors, articles and 款 together: 2.0–2.2 → 1.4–1.6 ms p50
/// of the dense stage, `coal bench ask`), while a thread costs ~0.1 ms to start.
const SPLIT_SCAN_ABOVE: usize = 8_192;

/// Dot product with eight independent sums, so the compiler can keep them in vector
/// registers (one running sum would be a chain of dependent additions).
#[inline(always)]
pub(super) fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    acc.iter().sum::<f32>() + tail
}
