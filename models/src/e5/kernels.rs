//! Numeric kernels. The arithmetic follows the reference C engine so results agree: Q4_0
//! weights (fp16 scale + 32 nibbles per block), activations quantized per block to int8,
//! int8×int4 block dot products scaled in float; layer norm, GELU, attention. The loop
//! order is ours: with AVX-512 VNNI, 16-row weight panels (one int32 lane per row) so the
//! float work is per 16 rows and block; attention in register blocks. The crate is built
//! for baseline x86-64, so each hot loop has `#[target_feature]` copies chosen at run
//! time, each tested against its portable body.

/// Weights per quantization block.
pub const QK: usize = 32;
/// Bytes per Q4_0 block: fp16 scale + 16 bytes of nibbles.
pub const Q4_BLOCK_BYTES: usize = 18;
/// Output rows computed together (each activation block is loaded once for all of them).
const RO: usize = 8;

/// Defines a function whose body is compiled three times, for AVX-512F, for AVX2+FMA
/// and for baseline x86-64 (the crate's target), and picks the widest the CPU has at run
/// time. `wide` runs with AVX-512F, `narrow` with AVX2+FMA and on other CPUs.
macro_rules! simd_dispatch {
    ($(#[$meta:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty {
        wide: $wide:expr,
        narrow: $narrow:expr $(,)?
    }) => {
        $(#[$meta])*
        $vis fn $name($($arg: $ty),*) -> $ret {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f,avx2,fma")]
                unsafe fn wide($($arg: $ty),*) -> $ret {
                    $wide
                }
                #[target_feature(enable = "avx2,fma")]
                unsafe fn narrow($($arg: $ty),*) -> $ret {
                    $narrow
                }
                if std::arch::is_x86_feature_detected!("avx512f") {
                    // SAFETY: the CPU has AVX-512F (checked just above).
                    return unsafe { wide($($arg),*) };
                }
                if std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma")
                {
                    // SAFETY: the CPU has AVX2 and FMA (checked just above).
                    return unsafe { narrow($($arg),*) };
                }
            }
            $narrow
        }
    };
}

pub fn fp16_to_f32(h: u16) -> f32 {
    let sign = ((h & 0x8000) as u32) << 16;
    let exp = ((h >> 10) & 0x1f) as u32;
    let man = (h & 0x3ff) as u32;
    let bits = if exp == 0 {
        if man == 0 {
            sign
        } else {
            let mut e = 1u32;
            let mut m = man;
            while m & 0x400 == 0 {
                m <<= 1;
                e += 1;
            }
            sign | ((127 - 15 - e + 1) << 23) | ((m & 0x3ff) << 13)
        }
    } else if exp == 31 {
        sign | 0x7f80_0000 | (man << 13)
    } else {
        sign | ((exp + 127 - 15) << 23) | (man << 13)
    };
    f32::from_bits(bits)
}

/// A matrix of Q4_0 rows: `rows` × `cols` weights.
#[derive(Clone, Copy)]
pub struct Q4Matrix<'a> {
    pub bytes: &'a [u8],
    pub rows: usize,
    pub cols: usize,
}

impl Q4Matrix<'_> {
    fn block(&self, row: usize, b: usize) -> &[u8] {
        let nb = self.cols / QK;
        let at = (row * nb + b) * Q4_BLOCK_BYTES;
        &self.bytes[at..at + Q4_BLOCK_BYTES]
    }

    /// Dequantizes one row into `out` (used for the word embeddings).
    pub fn dequantize_row(&self, row: usize, out: &mut [f32]) {
        for b in 0..self.cols / QK {
            let blk = self.block(row, b);
            let d = fp16_to_f32(u16::from_le_bytes([blk[0], blk[1]]));
            for j in 0..16 {
                let q = blk[2 + j];
                out[b * QK + j] = ((q & 0x0f) as f32 - 8.0) * d;
                out[b * QK + j + 16] = ((q >> 4) as f32 - 8.0) * d;
            }
        }
    }
}

/// Activations quantized per 32-value block: int8 values, scale and the block's sum.
pub struct QuantizedActs {
    pub q: Vec<i8>,
    pub d: Vec<f32>,
    pub s: Vec<i32>,
    pub cols: usize,
}

impl QuantizedActs {
    /// The rows of `parts`, in order (all of `cols` columns).
    pub fn concat(parts: Vec<QuantizedActs>, cols: usize) -> QuantizedActs {
        let mut all = QuantizedActs {
            q: Vec::with_capacity(parts.iter().map(|p| p.q.len()).sum()),
            d: Vec::with_capacity(parts.iter().map(|p| p.d.len()).sum()),
            s: Vec::with_capacity(parts.iter().map(|p| p.s.len()).sum()),
            cols,
        };
        for p in parts {
            assert_eq!(p.cols, cols);
            all.q.extend_from_slice(&p.q);
            all.d.extend_from_slice(&p.d);
            all.s.extend_from_slice(&p.s);
        }
        all
    }
}

simd_dispatch! {
    pub fn quantize(x: &[f32], cols: usize) -> QuantizedActs {
        wide: quantize_body(x, cols),
        narrow: quantize_body(x, cols),
    }
}

#[inline(always)]
fn quantize_body(x: &[f32], cols: usize) -> QuantizedActs {
    let rows = x.len() / cols;
    let nb = cols / QK;
    let mut q = vec![0i8; x.len()];
    let mut d = vec![0f32; rows * nb];
    let mut s = vec![0i32; rows * nb];
    // Whole blocks zipped (no index arithmetic) and the maximum in independent lanes: the
    // shapes LLVM vectorizes. The maximum of exact values is the same in any order.
    for (((xs, qs), dd), sum) in x
        .chunks_exact(QK)
        .zip(q.chunks_exact_mut(QK))
        .zip(d.iter_mut())
        .zip(s.iter_mut())
    {
        let mut lanes = [0f32; 16];
        for half in xs.chunks_exact(16) {
            for (m, v) in lanes.iter_mut().zip(half) {
                *m = m.max(v.abs());
            }
        }
        let amax = lanes.iter().fold(0f32, |m, &v| m.max(v));
        *dd = amax / 127.0;
        let id = if *dd > 0.0 { 1.0 / *dd } else { 0.0 };
        let mut acc = [0i32; QK];
        for ((out, &v), a) in qs.iter_mut().zip(xs).zip(acc.iter_mut()) {
            // Round half to even like C's lrintf: adding 1.5·2^23 leaves the integer part
            // in the mantissa (|v·id| <= 127 here, far inside the trick's range).
            // The integer is read from the mantissa bits, so the loop stays vectorized.
            const MAGIC: f32 = 12_582_912.0;
            let r = (((v * id) + MAGIC).to_bits() as i32 - MAGIC.to_bits() as i32).clamp(-128, 127);
            *out = r as i8;
            *a = r;
        }
        *sum = acc.iter().sum();
    }
    QuantizedActs { q, d, s, cols }
}

/// `y[t, o] = bias[o] + Σ w[o,·]·x[t,·]` for the tokens `tokens` of `acts`, writing rows of
/// `y` (which holds exactly those tokens).
pub fn matmul(
    w: Q4Matrix<'_>,
    bias: &[f32],
    acts: &QuantizedActs,
    tokens: std::ops::Range<usize>,
    y: &mut [f32],
) {
    let (nout, nin) = (w.rows, w.cols);
    let nb = nin / QK;
    let mut wexp = vec![0i8; RO * nin];
    let mut dw = vec![0f32; RO * nb];
    let mut acc = [0f32; RO];
    #[cfg(target_arch = "x86_64")]
    let avx2 = avx2::available();
    #[cfg(target_arch = "x86_64")]
    let vnni = nb.is_multiple_of(2) && avx512::available();
    let mut dwx = Vec::new();
    for oo in (0..nout).step_by(RO) {
        let ro = RO.min(nout - oo);
        if ro < RO {
            wexp.fill(0);
            dw.fill(0.0);
        }
        expand_rows(w, oo, ro, &mut wexp, &mut dw);
        #[cfg(target_arch = "x86_64")]
        if vnni {
            avx512::expand_scales(&dw, nb, &mut dwx);
        }
        for (ti, t) in tokens.clone().enumerate() {
            let a = &acts.q[t * nin..(t + 1) * nin];
            let da = &acts.d[t * nb..(t + 1) * nb];
            let sa = &acts.s[t * nb..(t + 1) * nb];
            #[cfg(target_arch = "x86_64")]
            if vnni {
                // SAFETY: AVX-512 F/DQ/VNNI checked by `available`; lengths as below.
                unsafe { avx512::rows(&wexp, &dwx, ro, nin, a, da, sa, &mut acc) };
            } else if avx2 {
                // SAFETY: the CPU supports AVX2 and FMA (checked above); slices have the
                // lengths the kernel reads (ro rows of nin weights, nin activations).
                unsafe { avx2::rows(&wexp, &dw, ro, nin, a, da, sa, &mut acc) };
            } else {
                rows_scalar(&wexp, &dw, ro, nin, a, da, sa, &mut acc);
            }
            #[cfg(not(target_arch = "x86_64"))]
            rows_scalar(&wexp, &dw, ro, nin, a, da, sa, &mut acc);
            let out = &mut y[ti * nout + oo..ti * nout + oo + ro];
            for r in 0..ro {
                out[r] = bias[oo + r] + acc[r];
            }
        }
    }
}

/// Unpacks rows `first..first+count` of `w` into one int8 (0..15) per weight and one f32
/// scale per block, the form the row kernels read.
fn expand_rows(w: Q4Matrix<'_>, first: usize, count: usize, wexp: &mut [i8], dw: &mut [f32]) {
    let (nin, nb) = (w.cols, w.cols / QK);
    for r in 0..count {
        for b in 0..nb {
            let blk = w.block(first + r, b);
            dw[r * nb + b] = fp16_to_f32(u16::from_le_bytes([blk[0], blk[1]]));
            let o = &mut wexp[r * nin + b * QK..r * nin + (b + 1) * QK];
            for j in 0..16 {
                o[j] = (blk[2 + j] & 0x0f) as i8;
                o[j + 16] = (blk[2 + j] >> 4) as i8;
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn rows_scalar(
    wexp: &[i8],
    dw: &[f32],
    ro: usize,
    nin: usize,
    a: &[i8],
    da: &[f32],
    sa: &[i32],
    acc: &mut [f32; RO],
) {
    let nb = nin / QK;
    for r in 0..ro {
        let mut total = 0f32;
        for b in 0..nb {
            let wb = &wexp[r * nin + b * QK..r * nin + (b + 1) * QK];
            let ab = &a[b * QK..(b + 1) * QK];
            let isum: i32 = wb.iter().zip(ab).map(|(&w, &x)| w as i32 * x as i32).sum();
            total += dw[r * nb + b] * da[b] * (isum - 8 * sa[b]) as f32;
        }
        acc[r] = total;
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use super::{QK, RO};

    pub fn available() -> bool {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }

    /// Tokens that share each weight load in [`tile`]: 4 int16 and 4 float accumulators,
    /// the weights and the broadcast activations fit the 16 AVX2 registers.
    const TOKENS: usize = 4;

    /// One tile of tokens against every 8-row panel: per panel, block and token, 8
    /// `maddubs` (each int32 lane a row, 4 weights per step, the token's 4 activations
    /// broadcast) summed in int16, one `madd` to int32, one conversion and two FMAs —
    /// against 8 `maddubs`, 8 `madd`, 8 conversions and 16 float operations per 8 rows in
    /// [`rows`]. The int16 sums cannot overflow: 8 steps × 2 products × 15 × 128 = 30,720.
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn tile(
        w: &super::PackedQ4,
        bias: &[f32],
        acts: &super::QuantizedActs,
        tokens: std::ops::Range<usize>,
        panels: std::ops::Range<usize>,
        y: &mut [f32],
    ) {
        use super::PANEL_AVX2 as P;
        let (nout, nin) = (w.rows, w.cols);
        let nb = nin / QK;
        // A token's outputs are the panels' rows side by side.
        let stride = panels.len() * P;
        assert!(w.panel == P && w.w.len() == nout * nin && w.d.len() == nout * nb);
        assert!(acts.q.len() >= tokens.end * nin && acts.d.len() >= tokens.end * nb);
        assert!(panels.end * P <= nout && y.len() >= tokens.len() * stride && bias.len() == nout);
        for p in panels.clone() {
            let pw = &w.w[p * nb * P * QK..(p + 1) * nb * P * QK];
            let pd = &w.d[p * nb * P..(p + 1) * nb * P];
            // SAFETY: p*P+8 <= nout = bias.len().
            let bv = unsafe { _mm256_loadu_ps(bias.as_ptr().add(p * P)) };
            let mut t = tokens.start;
            let mut put = |t: usize, v: __m256| {
                let at = (t - tokens.start) * stride + (p - panels.start) * P;
                // SAFETY: at+8 <= tokens.len()*stride <= y.len() (asserted above).
                unsafe { _mm256_storeu_ps(y.as_mut_ptr().add(at), _mm256_add_ps(v, bv)) };
            };
            while t + TOKENS <= tokens.end {
                // SAFETY: as asserted above.
                let r = unsafe { panel_tokens::<TOKENS>(pw, pd, nb, acts, t) };
                for (i, v) in r.into_iter().enumerate() {
                    put(t + i, v);
                }
                t += TOKENS;
            }
            while t < tokens.end {
                let [v] = unsafe { panel_tokens::<1>(pw, pd, nb, acts, t) };
                put(t, v);
                t += 1;
            }
        }
    }

    /// The 8 rows of one panel for tokens `t..t+TT`, without bias.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    #[allow(clippy::needless_range_loop)] // token indices feed pointer offsets
    unsafe fn panel_tokens<const TT: usize>(
        pw: &[u8],
        pd: &[f32],
        nb: usize,
        acts: &super::QuantizedActs,
        t: usize,
    ) -> [__m256; TT] {
        use super::PANEL_AVX2 as P;
        let nin = nb * QK;
        assert!(pw.len() >= nb * P * QK && pd.len() >= nb * P);
        assert!(acts.q.len() >= (t + TT) * nin && acts.d.len() >= (t + TT) * nb);
        let ones = _mm256_set1_epi16(1);
        let mut facc = [_mm256_setzero_ps(); TT];
        for b in 0..nb {
            let mut sums = [_mm256_setzero_si256(); TT];
            for step in 0..QK / 4 {
                // SAFETY: (b*8+step+1)*32 <= nb*P*QK <= pw.len() (asserted above).
                let wv = unsafe {
                    _mm256_loadu_si256(pw.as_ptr().add((b * 8 + step) * P * 4) as *const __m256i)
                };
                for i in 0..TT {
                    // SAFETY: (t+i)*nin + b*QK + step*4 + 4 <= (t+TT)*nin <= acts.q.len().
                    let a4 = unsafe {
                        std::ptr::read_unaligned(
                            acts.q.as_ptr().add((t + i) * nin + b * QK + step * 4) as *const i32,
                        )
                    };
                    let prod = _mm256_maddubs_epi16(wv, _mm256_set1_epi32(a4));
                    sums[i] = _mm256_add_epi16(sums[i], prod);
                }
            }
            // SAFETY: (b+1)*8 <= pd.len() (asserted above).
            let dw = unsafe { _mm256_loadu_ps(pd.as_ptr().add(b * P)) };
            for i in 0..TT {
                let k = (t + i) * nb + b;
                let da = acts.d[k];
                let isum = _mm256_madd_epi16(sums[i], ones);
                // Σ(nibble−8)·a = Σ nibble·a − 8·Σa.
                let v = _mm256_fmadd_ps(
                    _mm256_cvtepi32_ps(isum),
                    _mm256_set1_ps(da),
                    _mm256_set1_ps(-8.0 * da * acts.s[k] as f32),
                );
                facc[i] = _mm256_fmadd_ps(v, dw, facc[i]);
            }
        }
        facc
    }

    #[target_feature(enable = "avx2,fma")]
    unsafe fn hsum(v: __m256) -> f32 {
        let lo = _mm256_castps256_ps128(v);
        let hi = _mm256_extractf128_ps(v, 1);
        let s = _mm_add_ps(lo, hi);
        let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
        let s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
        _mm_cvtss_f32(s)
    }

    /// The C engine's AVX2 path: unsigned nibbles × signed int8 with maddubs, block
    /// partials accumulated in float. The −8 nibble offset is spread over the 8 lanes
    /// (−s_a in each lane, 8·s_a in all) so each row has one independent FMA chain, and
    /// all RO rows are computed at once (rows past `ro` are zero weights).
    #[target_feature(enable = "avx2,fma")]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn rows(
        wexp: &[i8],
        dw: &[f32],
        ro: usize,
        nin: usize,
        a: &[i8],
        da: &[f32],
        sa: &[i32],
        acc: &mut [f32; RO],
    ) {
        let nb = nin / QK;
        assert!(
            wexp.len() >= RO * nin
                && dw.len() >= RO * nb
                && a.len() >= nin
                && da.len() >= nb
                && sa.len() >= nb
        );
        let ones = _mm256_set1_epi16(1);
        let mut facc = [_mm256_setzero_ps(); RO];
        for b in 0..nb {
            // SAFETY: b*QK+32 <= nin <= a.len() and r*nin+b*QK+32 <= RO*nin <= wexp.len()
            // (asserted above).
            let av = unsafe { _mm256_loadu_si256(a.as_ptr().add(b * QK) as *const __m256i) };
            let d_a = da[b];
            let offset = _mm256_set1_ps(sa[b] as f32);
            for r in 0..RO {
                let wv = unsafe {
                    _mm256_loadu_si256(wexp.as_ptr().add(r * nin + b * QK) as *const __m256i)
                };
                let s = _mm256_madd_epi16(_mm256_maddubs_epi16(wv, av), ones);
                let v = _mm256_sub_ps(_mm256_cvtepi32_ps(s), offset);
                let scale = _mm256_set1_ps(dw[r * nb + b] * d_a);
                facc[r] = _mm256_fmadd_ps(v, scale, facc[r]);
            }
        }
        for r in 0..ro {
            acc[r] = unsafe { hsum(facc[r]) };
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    use super::{QK, RO};

    pub fn available() -> bool {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512dq")
            && std::arch::is_x86_feature_detected!("avx512vnni")
    }

    /// Per row and pair of blocks, 16 scales: 8 lanes of the first block's, 8 of the second's.
    pub fn expand_scales(dw: &[f32], nb: usize, out: &mut Vec<f32>) {
        out.clear();
        for r in 0..RO {
            for b in 0..nb {
                out.extend(std::iter::repeat_n(dw[r * nb + b], 8));
            }
        }
    }

    /// Two blocks per step with `vpdpbusd` (u8×s8 dot products accumulated in int32): per
    /// row and block pair one load, one dot, one convert and two FMAs — half the
    /// instructions of the AVX2 path. `dwx` comes from [`expand_scales`].
    #[target_feature(enable = "avx512f,avx512dq,avx512vnni")]
    #[allow(clippy::too_many_arguments)]
    #[allow(clippy::needless_range_loop)] // lane and row indices feed pointer offsets
    pub unsafe fn rows(
        wexp: &[i8],
        dwx: &[f32],
        ro: usize,
        nin: usize,
        a: &[i8],
        da: &[f32],
        sa: &[i32],
        acc: &mut [f32; RO],
    ) {
        let nb = nin / QK;
        let np = nb / 2;
        assert!(
            nb.is_multiple_of(2)
                && wexp.len() >= RO * nin
                && dwx.len() >= RO * nb * 8
                && a.len() >= nin
                && da.len() >= nb
                && sa.len() >= nb
        );
        let mut facc = [_mm512_setzero_ps(); RO];
        for p in 0..np {
            let b = 2 * p;
            // SAFETY (loads): p*64+64 <= nin <= a.len(); r*nin+p*64+64 <= RO*nin <= wexp.len();
            // (r*np+p)*16+16 <= RO*nb*8 <= dwx.len() (asserted above).
            let av = unsafe { _mm512_loadu_si512(a.as_ptr().add(p * 64) as *const __m512i) };
            let dax = _mm512_insertf32x8::<1>(_mm512_set1_ps(da[b]), _mm256_set1_ps(da[b + 1]));
            // Each lane takes off d_a·s_a, so a block's 8 lanes take off 8·d_a·s_a: the
            // −8 nibble offset.
            let off = _mm512_insertf32x8::<1>(
                _mm512_set1_ps(-da[b] * sa[b] as f32),
                _mm256_set1_ps(-da[b + 1] * sa[b + 1] as f32),
            );
            for r in 0..RO {
                let wv = unsafe {
                    _mm512_loadu_si512(wexp.as_ptr().add(r * nin + p * 64) as *const __m512i)
                };
                let dot = _mm512_dpbusd_epi32(_mm512_setzero_si512(), wv, av);
                let v = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), dax, off);
                let scale = unsafe { _mm512_loadu_ps(dwx.as_ptr().add((r * np + p) * 16)) };
                facc[r] = _mm512_fmadd_ps(v, scale, facc[r]);
            }
        }
        for r in 0..ro {
            acc[r] = _mm512_reduce_add_ps(facc[r]);
        }
    }

    /// One tile of tokens against every panel: per panel and block, 8 `vpdpbusd` per
    /// token (each lane a row, 4 weights per step, the token's 4 activations broadcast),
    /// then one conversion and two FMAs per token. Four tokens share each weight load.
    #[target_feature(enable = "avx512f,avx512dq,avx512vnni")]
    pub unsafe fn tile(
        w: &super::PackedQ4,
        bias: &[f32],
        acts: &super::QuantizedActs,
        tokens: std::ops::Range<usize>,
        panels: std::ops::Range<usize>,
        y: &mut [f32],
    ) {
        use super::PANEL;
        let (nout, nin) = (w.rows, w.cols);
        let nb = nin / QK;
        // A token's outputs are the panels' rows side by side.
        let stride = panels.len() * PANEL;
        assert!(w.panel == PANEL && w.w.len() == nout * nin && w.d.len() == nout * nb);
        assert!(acts.q.len() >= tokens.end * nin && acts.d.len() >= tokens.end * nb);
        assert!(
            panels.end * PANEL <= nout && y.len() >= tokens.len() * stride && bias.len() == nout
        );
        for p in panels.clone() {
            let pw = &w.w[p * nb * PANEL * QK..(p + 1) * nb * PANEL * QK];
            let pd = &w.d[p * nb * PANEL..(p + 1) * nb * PANEL];
            // SAFETY: p*PANEL+16 <= nout = bias.len().
            let bv = unsafe { _mm512_loadu_ps(bias.as_ptr().add(p * PANEL)) };
            let mut t = tokens.start;
            while t + 4 <= tokens.end {
                // SAFETY: as asserted above.
                let r = unsafe { panel_tokens::<4>(pw, pd, nb, acts, t) };
                for (i, v) in r.iter().enumerate() {
                    let at = (t + i - tokens.start) * stride + (p - panels.start) * PANEL;
                    unsafe { _mm512_storeu_ps(y.as_mut_ptr().add(at), _mm512_add_ps(*v, bv)) };
                }
                t += 4;
            }
            while t < tokens.end {
                let r = unsafe { panel_tokens::<1>(pw, pd, nb, acts, t) };
                let at = (t - tokens.start) * stride + (p - panels.start) * PANEL;
                unsafe { _mm512_storeu_ps(y.as_mut_ptr().add(at), _mm512_add_ps(r[0], bv)) };
                t += 1;
            }
        }
    }

    /// The 16 rows of one panel for tokens `t..t+TT`, without bias.
    #[target_feature(enable = "avx512f,avx512dq,avx512vnni")]
    #[inline]
    #[allow(clippy::needless_range_loop)] // lane and row indices feed pointer offsets
    unsafe fn panel_tokens<const TT: usize>(
        pw: &[u8],
        pd: &[f32],
        nb: usize,
        acts: &super::QuantizedActs,
        t: usize,
    ) -> [__m512; TT] {
        use super::PANEL;
        let nin = nb * QK;
        let mut facc = [_mm512_setzero_ps(); TT];
        for b in 0..nb {
            let mut iacc = [_mm512_setzero_si512(); TT];
            for step in 0..QK / 4 {
                // SAFETY: (b*8+step+1)*64 <= nb*PANEL*QK = pw.len().
                let wv = unsafe {
                    _mm512_loadu_si512(pw.as_ptr().add((b * 8 + step) * PANEL * 4) as *const _)
                };
                for i in 0..TT {
                    // SAFETY: (t+i)*nin + b*QK + step*4 + 4 <= acts.q.len() (caller).
                    let a4 = unsafe {
                        std::ptr::read_unaligned(
                            acts.q.as_ptr().add((t + i) * nin + b * QK + step * 4) as *const i32,
                        )
                    };
                    iacc[i] = _mm512_dpbusd_epi32(iacc[i], wv, _mm512_set1_epi32(a4));
                }
            }
            // SAFETY: (b+1)*16 <= pd.len().
            let dw = unsafe { _mm512_loadu_ps(pd.as_ptr().add(b * PANEL)) };
            for i in 0..TT {
                let k = (t + i) * nb + b;
                let da = acts.d[k];
                // Σ(nibble−8)·a = Σ nibble·a − 8·Σa.
                let v = _mm512_fmadd_ps(
                    _mm512_cvtepi32_ps(iacc[i]),
                    _mm512_set1_ps(da),
                    _mm512_set1_ps(-8.0 * da * acts.s[k] as f32),
                );
                facc[i] = _mm512_fmadd_ps(v, dw, facc[i]);
            }
        }
        facc
    }
}

/// Rows per panel of the VNNI layout: one 512-bit register holds an int32 per row.
pub const PANEL: usize = 16;
/// Rows per panel of the AVX2 layout: one 256-bit register holds an int32 per row.
pub const PANEL_AVX2: usize = 8;
/// Tokens per tile: a tile's activations stay in L1 while every panel passes over them.
const TOKEN_TILE: usize = 64;

/// A Q4_0 matrix repacked for [`matmul_packed`]: nibbles widened to bytes (0..15) and
/// laid out so that one vector load gives 4 consecutive weights of each of `panel` rows
/// (16 rows for AVX-512, 8 for AVX2), plus the panel's scales per block. Built once at
/// load; twice the bytes of the Q4 data.
pub struct PackedQ4 {
    w: Vec<u8>,
    d: Vec<f32>,
    rows: usize,
    cols: usize,
    panel: usize,
}

impl PackedQ4 {
    /// `None` unless the CPU has AVX-512 VNNI or AVX2+FMA and the matrix has whole panels.
    pub fn new(m: Q4Matrix<'_>) -> Option<PackedQ4> {
        let panel = Self::panel_for_this_cpu()?;
        m.rows.is_multiple_of(panel).then(|| Self::pack(m, panel))
    }

    /// Panels of rows (each [`Self::panel_rows`] rows).
    pub fn panels(&self) -> usize {
        self.rows / self.panel
    }

    /// Rows per panel.
    pub fn panel_rows(&self) -> usize {
        self.panel
    }

    /// The panel width of the widest packed kernel this CPU runs.
    fn panel_for_this_cpu() -> Option<usize> {
        #[cfg(target_arch = "x86_64")]
        {
            if avx512::available() {
                return Some(PANEL);
            }
            if avx2::available() {
                return Some(PANEL_AVX2);
            }
        }
        None
    }

    fn pack(m: Q4Matrix<'_>, panel: usize) -> PackedQ4 {
        let nb = m.cols / QK;
        let panels = m.rows / panel;
        let mut w = vec![0u8; m.rows * m.cols];
        let mut d = vec![0f32; m.rows * nb];
        for p in 0..panels {
            for b in 0..nb {
                let base = (p * nb + b) * panel * QK;
                for r in 0..panel {
                    let blk = m.block(p * panel + r, b);
                    d[(p * nb + b) * panel + r] = fp16_to_f32(u16::from_le_bytes([blk[0], blk[1]]));
                    for e in 0..QK {
                        // Element e of a block: low nibbles first, then high nibbles.
                        let q = if e < 16 {
                            blk[2 + e] & 0x0f
                        } else {
                            blk[2 + e - 16] >> 4
                        };
                        let (step, within) = (e / 4, e % 4);
                        w[base + step * panel * 4 + r * 4 + within] = q;
                    }
                }
            }
        }
        PackedQ4 {
            w,
            d,
            rows: m.rows,
            cols: m.cols,
            panel,
        }
    }
}

/// [`matmul`] over a [`PackedQ4`]: the same sums, in an order that needs a fraction of
/// the float work (one int32→float conversion per panel of rows and block instead of per
/// row and block) and loads each weight once for several tokens. Only the output rows of
/// `panels` (of [`PackedQ4::panels`]) are computed: `y` holds each token's rows of those
/// panels side by side, so that workers can share out a matrix's rows as well as its
/// tokens; each output is the same to the bit either way.
pub fn matmul_packed(
    w: &PackedQ4,
    bias: &[f32],
    acts: &QuantizedActs,
    tokens: std::ops::Range<usize>,
    panels: std::ops::Range<usize>,
    y: &mut [f32],
) {
    let stride = panels.len() * w.panel;
    assert!(acts.cols == w.cols && bias.len() == w.rows && panels.end <= w.panels());
    assert!(y.len() >= tokens.len() * stride);
    #[cfg(target_arch = "x86_64")]
    {
        let mut t0 = tokens.start;
        while t0 < tokens.end {
            let t1 = (t0 + TOKEN_TILE).min(tokens.end);
            let yo = (t0 - tokens.start) * stride;
            let (y, panels) = (&mut y[yo..], panels.clone());
            // SAFETY: a PackedQ4 of 16-row panels exists only when AVX-512 VNNI is
            // available, one of 8-row panels only with AVX2 and FMA (`new`; the tests'
            // `pack` calls check first); the tile's tokens are inside `acts`, its panels
            // inside `w` and their output rows inside `y` (asserted above).
            match w.panel {
                PANEL => unsafe { avx512::tile(w, bias, acts, t0..t1, panels, y) },
                PANEL_AVX2 => unsafe { avx2::tile(w, bias, acts, t0..t1, panels, y) },
                other => unreachable!("no kernel for {other}-row panels"),
            }
            t0 = t1;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    unreachable!("PackedQ4 is only built on x86-64");
}

/// `x = layernorm(x + y)` row by row (`y` optional).
pub fn add_layernorm(
    x: &mut [f32],
    y: Option<&[f32]>,
    w: &[f32],
    b: &[f32],
    cols: usize,
    eps: f32,
) {
    for (t, row) in x.chunks_exact_mut(cols).enumerate() {
        if let Some(y) = y {
            for (r, v) in row.iter_mut().zip(&y[t * cols..(t + 1) * cols]) {
                *r += v;
            }
        }
        let mean = row.iter().sum::<f32>() / cols as f32;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / cols as f32;
        let inv = 1.0 / (var + eps).sqrt();
        for i in 0..cols {
            row[i] = (row[i] - mean) * inv * w[i] + b[i];
        }
    }
}

simd_dispatch! {
    /// GELU over a slice (the crate is compiled for baseline x86-64, whose SSE2 would run
    /// this at a quarter of the AVX-512 width).
    pub fn gelu_inplace(xs: &mut [f32]) -> () {
        wide: xs.iter_mut().for_each(|x| *x = gelu(*x)),
        narrow: xs.iter_mut().for_each(|x| *x = gelu(*x)),
    }
}

/// Dimensions per attention head (e5-small: 384 / 12); the attention kernel is written
/// for exactly this size so its accumulators live in registers.
pub const HEAD_DIM: usize = 32;
/// Query rows of one register block of attention scores.
const QB: usize = 4;

simd_dispatch! {
    /// One head of one segment: `softmax(q·kᵀ/√d)·v`, where row `t` of `q`, `k` and `v` is
    /// the `HEAD_DIM` values at `m[t * stride + offset..]` of each matrix, for `l` rows.
    /// Returns `l × HEAD_DIM`. Scores are computed in 4×KB register blocks (KB = one
    /// vector of keys: 16 with AVX-512, 8 otherwise) over a transposed, zero-padded `k`;
    /// the weighted sum of `v` two query rows at a time.
    pub fn attend_head(
        q: &[f32],
        k: &[f32],
        v: &[f32],
        stride: usize,
        offset: usize,
        l: usize,
    ) -> Vec<f32> {
        wide: attend_head_body::<16>(q, k, v, stride, offset, l),
        narrow: attend_head_body::<8>(q, k, v, stride, offset, l),
    }
}

#[inline(always)]
fn attend_head_body<const KB: usize>(
    q: &[f32],
    k: &[f32],
    v: &[f32],
    stride: usize,
    offset: usize,
    l: usize,
) -> Vec<f32> {
    const D: usize = HEAD_DIM;
    assert!(l == 0 || (l - 1) * stride + offset + D <= q.len().min(k.len()).min(v.len()));
    let row =
        |m: &[f32], t: usize| -> [f32; D] { m[t * stride + offset..][..D].try_into().unwrap() };
    let scale = 1.0 / (D as f32).sqrt();
    let (lq, lk) = (l.div_ceil(QB) * QB, l.div_ceil(KB) * KB);
    let mut kt = vec![0f32; D * lk];
    let mut qs = vec![0f32; lq * D];
    for t in 0..l {
        let (kr, qr) = (row(k, t), row(q, t));
        for d in 0..D {
            kt[d * lk + t] = kr[d];
            qs[t * D + d] = qr[d] * scale;
        }
    }
    let mut scores = vec![0f32; lq * lk];
    for i0 in (0..lq).step_by(QB) {
        for j0 in (0..lk).step_by(KB) {
            let mut acc = [[0f32; KB]; QB];
            for d in 0..D {
                let kv: [f32; KB] = kt[d * lk + j0..][..KB].try_into().unwrap();
                for i in 0..QB {
                    let c = qs[(i0 + i) * D + d];
                    for j in 0..KB {
                        acc[i][j] = c.mul_add(kv[j], acc[i][j]);
                    }
                }
            }
            for i in 0..QB {
                scores[(i0 + i) * lk + j0..][..KB].copy_from_slice(&acc[i]);
            }
        }
    }
    for i in 0..l {
        softmax_body(&mut scores[i * lk..i * lk + l]);
    }
    // The weighted sum of `v`, QB query rows at a time (their scores rows are padded to
    // lq, so a short last group reads zeros and its extra sums are dropped); each row of
    // `v` is read in place and used for all QB rows.
    let mut out = vec![0f32; l * D];
    for i0 in (0..l).step_by(QB) {
        let mut acc = [[0f32; D]; QB];
        for s in 0..l {
            let vr: &[f32; D] = v[s * stride + offset..][..D].try_into().unwrap();
            for (r, a) in acc.iter_mut().enumerate() {
                let p = scores[(i0 + r) * lk + s];
                for d in 0..D {
                    a[d] = p.mul_add(vr[d], a[d]);
                }
            }
        }
        for (r, a) in acc.iter().enumerate().take(l - i0) {
            out[(i0 + r) * D..(i0 + r + 1) * D].copy_from_slice(a);
        }
    }
    out
}

/// Softmax in place. The maximum and the sum run in 16 independent lanes: a plain fold
/// is one dependent scalar chain (4 cycles an element), which cost more than the scores.
#[inline(always)]
fn softmax_body(xs: &mut [f32]) {
    const LANES: usize = 16;
    let mut m = [f32::NEG_INFINITY; LANES];
    let chunks = xs.chunks_exact(LANES);
    let tail = chunks.remainder();
    for c in chunks {
        for (a, v) in m.iter_mut().zip(c) {
            *a = a.max(*v);
        }
    }
    let mx = m
        .iter()
        .chain(tail)
        .fold(f32::NEG_INFINITY, |a, &v| a.max(v));
    xs.iter_mut().for_each(|x| *x = exp(*x - mx));
    let mut acc = [0f32; LANES];
    let chunks = xs.chunks_exact(LANES);
    let tail: f32 = chunks.remainder().iter().sum();
    for c in chunks {
        for (a, v) in acc.iter_mut().zip(c) {
            *a += v;
        }
    }
    let inv = 1.0 / (acc.iter().sum::<f32>() + tail);
    xs.iter_mut().for_each(|x| *x *= inv);
}

/// Exact GELU, `x·Φ(x)`, with a fast erf (error < 1e-6 in f32, Numerical Recipes' erfc
/// Chebyshev fit): the C engine's libm `erff` costs a tenth of the whole forward pass.
#[inline(always)]
pub fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2))
}

#[inline(always)]
pub fn erf(x: f32) -> f32 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_2
        + t * (1.000_023_7
            + t * (0.374_092
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_204
                                + t * (1.488_515_9 + t * (-0.822_152_2 + t * 0.170_872_77))))))));
    (1.0 - t * exp(poly)).copysign(x)
}

/// e^x for the arguments GELU produces (x <= 0), branch-free so that loops over it
/// vectorize: 2^n by the exponent bits, e^r on [-ln2/2, ln2/2] by a degree-6 polynomial
/// (relative error below 2e-7).
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    let x = x.clamp(-87.0, 88.0);
    // n = round(x·log2 e) as a float and as the integer in the mantissa of the shifted
    // sum (|n| <= 127, where the float's spacing is 1): `n as i32` would saturate lane by
    // lane and keep the loop scalar.
    const MAGIC: f32 = 12_582_912.0;
    let shifted = x * std::f32::consts::LOG2_E + MAGIC;
    let n = shifted - MAGIC;
    let ni = shifted.to_bits() as i32 - MAGIC.to_bits() as i32;
    let r = x - n * 0.693_145_75 - n * 1.428_606_8e-6;
    let p = 1.0
        + r * (1.0
            + r * (0.5
                + r * (0.166_666_67
                    + r * (0.041_666_41 + r * (0.008_333_452 + r * 0.001_393_921_5)))));
    p * f32::from_bits(((ni + 127) as u32) << 23)
}

/// Dot product with eight independent accumulators, so it vectorizes.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    let tail: f32 = ra.iter().zip(rb).map(|(x, y)| x * y).sum();
    acc.iter().sum::<f32>() + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_erf_matches_libm() {
        for i in -400..=400 {
            let x = i as f32 / 100.0;
            assert!((erf(x) - libm::erff(x)).abs() < 1e-6, "{x}");
            let e = x * 10.0;
            assert!(
                (exp(e) - libm::expf(e)).abs() <= 2e-6 * libm::expf(e),
                "exp {e}"
            );
        }
        let a: Vec<f32> = (0..37).map(|i| i as f32 * 0.5).collect();
        let b: Vec<f32> = (0..37).map(|i| 1.0 - i as f32 * 0.1).collect();
        let naive: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((dot(&a, &b) - naive).abs() < 1e-3);
    }

    #[test]
    fn fp16_conversion() {
        assert_eq!(fp16_to_f32(0x3c00), 1.0);
        assert_eq!(fp16_to_f32(0xc000), -2.0);
        assert_eq!(fp16_to_f32(0x0000), 0.0);
        // Subnormals follow the reference engine, which reads them one binade low
        // (2^-25 for 0x0001 rather than 2^-24): the weights were converted with it.
        assert_eq!(fp16_to_f32(0x0001), 2.980_232_2e-8);
        assert_eq!(fp16_to_f32(0x0200), fp16_to_f32(0x0100) * 2.0);
        assert!(fp16_to_f32(0x7c00).is_infinite());
    }

    #[test]
    fn int8_matmul_matches_a_float_reference() {
        // 16 outputs × 64 inputs of random nibbles with scale 0.01.
        let (nout, nin) = (16, 64);
        let mut bytes = Vec::new();
        let mut seed = 7u32;
        let mut rnd = || {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            (seed >> 16) as u8
        };
        for _ in 0..nout * nin / QK {
            bytes.extend_from_slice(&0x211eu16.to_le_bytes()); // ≈ 0.01
            for _ in 0..16 {
                bytes.push(rnd());
            }
        }
        let w = Q4Matrix {
            bytes: &bytes,
            rows: nout,
            cols: nin,
        };
        let x: Vec<f32> = (0..3 * nin)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) / 25.0)
            .collect();
        let bias: Vec<f32> = (0..nout).map(|i| i as f32 * 0.1).collect();
        let acts = quantize(&x, nin);
        let mut y = vec![0f32; 3 * nout];
        matmul(w, &bias, &acts, 0..3, &mut y);
        let mut row = vec![0f32; nin];
        for t in 0..3 {
            for o in 0..nout {
                w.dequantize_row(o, &mut row);
                let exact: f32 = bias[o]
                    + row
                        .iter()
                        .zip(&x[t * nin..(t + 1) * nin])
                        .map(|(a, b)| a * b)
                        .sum::<f32>();
                assert!(
                    (y[t * nout + o] - exact).abs() < 0.02,
                    "{} vs {exact}",
                    y[t * nout + o]
                );
            }
        }
        // The scalar path and the SIMD path agree.
        let mut acc = [0f32; RO];
        let mut wexp = vec![0i8; RO * nin];
        let mut dw = vec![0f32; RO * 2];
        expand_rows(w, 0, RO, &mut wexp, &mut dw);
        rows_scalar(
            &wexp,
            &dw,
            RO,
            nin,
            &acts.q[..nin],
            &acts.d[..2],
            &acts.s[..2],
            &mut acc,
        );
        for r in 0..RO {
            assert!((bias[r] + acc[r] - y[r]).abs() < 1e-4);
        }
        // Every SIMD path this CPU has agrees with the scalar one (matmul above takes only
        // the best of them).
        #[cfg(target_arch = "x86_64")]
        {
            let (a, da, sa) = (&acts.q[..nin], &acts.d[..2], &acts.s[..2]);
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
            {
                let mut simd = [0f32; RO];
                // SAFETY: features checked; slices sized as the kernel asserts.
                unsafe { avx2::rows(&wexp, &dw, RO, nin, a, da, sa, &mut simd) };
                for r in 0..RO {
                    assert!((simd[r] - acc[r]).abs() < 1e-4, "avx2 row {r}");
                }
            }
            if avx512::available() {
                let mut dwx = Vec::new();
                avx512::expand_scales(&dw, 2, &mut dwx);
                let mut simd = [0f32; RO];
                // SAFETY: features checked; slices sized as the kernel asserts.
                unsafe { avx512::rows(&wexp, &dwx, RO, nin, a, da, sa, &mut simd) };
                for r in 0..RO {
                    assert!((simd[r] - acc[r]).abs() < 1e-4, "avx512 row {r}");
                }
            }
        }
    }

    fn random_q4(rows: usize, cols: usize, seed: u32) -> Vec<u8> {
        let mut seed = seed;
        let mut rnd = || {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            (seed >> 16) as u8
        };
        let mut bytes = Vec::new();
        for _ in 0..rows * cols / QK {
            // scales between ~0.004 and ~0.03, so blocks differ
            bytes.extend_from_slice(&(0x1c00u16 + (rnd() as u16) * 8).to_le_bytes());
            for _ in 0..16 {
                bytes.push(rnd());
            }
        }
        bytes
    }

    #[test]
    fn packed_matmul_matches_the_row_kernels() {
        // 2 panels × 3 blocks; 7 tokens = a group of 4 and 3 single tokens.
        let (nout, nin, tokens) = (32, 96, 7);
        let bytes = random_q4(nout, nin, 11);
        let w = Q4Matrix {
            bytes: &bytes,
            rows: nout,
            cols: nin,
        };
        let x: Vec<f32> = (0..tokens * nin)
            .map(|i| ((i * 53 % 97) as f32 - 48.0) / 20.0)
            .collect();
        let bias: Vec<f32> = (0..nout).map(|i| i as f32 * 0.05 - 0.5).collect();
        let acts = quantize(&x, nin);
        let mut reference = vec![0f32; tokens * nout];
        matmul(w, &bias, &acts, 0..tokens, &mut reference);
        #[cfg(target_arch = "x86_64")]
        {
            let expected = if avx512::available() {
                Some(PANEL)
            } else if avx2::available() {
                Some(PANEL_AVX2)
            } else {
                None
            };
            assert_eq!(PackedQ4::new(w).map(|p| p.panel), expected);
        }
        for panel in [PANEL, PANEL_AVX2] {
            let packed = PackedQ4::pack(w, panel);
            let runs_here = packed_kernel_runs_here(panel);
            // A token range that does not start at 0 writes only its own rows.
            let mut y = vec![f32::NAN; (tokens - 2) * nout];
            if runs_here {
                let all = 0..packed.panels();
                matmul_packed(&packed, &bias, &acts, 2..tokens, all.clone(), &mut y);
                for (got, want) in y.iter().zip(&reference[2 * nout..]) {
                    assert!((got - want).abs() < 1e-4, "panel {panel}: {got} vs {want}");
                }
                // One panel's rows, side by side per token: the same bits as in the whole.
                let mut full = vec![0f32; tokens * nout];
                matmul_packed(&packed, &bias, &acts, 0..tokens, all, &mut full);
                let mut part = vec![f32::NAN; tokens * panel];
                matmul_packed(&packed, &bias, &acts, 0..tokens, 1..2, &mut part);
                for t in 0..tokens {
                    let whole = &full[t * nout + panel..t * nout + 2 * panel];
                    assert_eq!(
                        &part[t * panel..(t + 1) * panel],
                        whole,
                        "panel {panel}, token {t}"
                    );
                }
            }
            // The layout itself, read back element by element.
            let nb = nin / QK;
            let mut row = vec![0f32; nin];
            for r in [0, 5, 16, 31] {
                w.dequantize_row(r, &mut row);
                for e in [0, 3, 17, 31, 40, 95] {
                    let (p, b, within) = (r / panel, e / QK, e % QK);
                    let at = (p * nb + b) * panel * QK
                        + (within / 4) * panel * 4
                        + (r % panel) * 4
                        + within % 4;
                    let d = packed.d[(p * nb + b) * panel + r % panel];
                    assert_eq!(
                        (packed.w[at] as f32 - 8.0) * d,
                        row[e],
                        "panel {panel}: row {r} element {e}"
                    );
                }
            }
        }
    }

    fn packed_kernel_runs_here(panel: usize) -> bool {
        #[cfg(target_arch = "x86_64")]
        return match panel {
            PANEL => avx512::available(),
            _ => avx2::available(),
        };
        #[cfg(not(target_arch = "x86_64"))]
        false
    }

    #[test]
    fn packed_int16_sums_hold_the_largest_blocks() {
        // Every nibble 15 and every activation ±127: the AVX2 kernel's int16 block sums
        // reach ±30,480 (8 steps × 2 products × 15 × 127), next to the int16 limit.
        let (nout, nin, tokens) = (16, 64, 5);
        let mut bytes = Vec::new();
        for _ in 0..nout * nin / QK {
            bytes.extend_from_slice(&0x211eu16.to_le_bytes());
            bytes.extend_from_slice(&[0xff; 16]);
        }
        let w = Q4Matrix {
            bytes: &bytes,
            rows: nout,
            cols: nin,
        };
        let x: Vec<f32> = (0..tokens * nin)
            .map(|i| if (i / nin) % 2 == 0 { 3.0 } else { -3.0 })
            .collect();
        let acts = quantize(&x, nin);
        assert!(acts.q.iter().all(|q| q.abs() == 127));
        let bias = vec![0f32; nout];
        let mut reference = vec![0f32; tokens * nout];
        matmul(w, &bias, &acts, 0..tokens, &mut reference);
        for panel in [PANEL, PANEL_AVX2] {
            if packed_kernel_runs_here(panel) {
                let mut y = vec![0f32; tokens * nout];
                let packed = PackedQ4::pack(w, panel);
                matmul_packed(&packed, &bias, &acts, 0..tokens, 0..packed.panels(), &mut y);
                for (got, want) in y.iter().zip(&reference) {
                    assert!((got - want).abs() < 1e-3 * want.abs(), "{got} vs {want}");
                }
            }
        }
    }

    #[test]
    fn attention_matches_a_naive_reference() {
        // 7 rows (padding in both blocks), heads interleaved with stride 70 at offset 3.
        let (l, stride, offset) = (7, 70, 3);
        let m = |salt: usize| -> Vec<f32> {
            (0..l * stride)
                .map(|i| (((i * 31 + salt * 17) % 41) as f32 - 20.0) / 9.0)
                .collect()
        };
        let (q, k, v) = (m(1), m(2), m(3));
        let at = |x: &[f32], t: usize, d: usize| x[t * stride + offset + d] as f64;
        let mut want = vec![0f64; l * HEAD_DIM];
        for i in 0..l {
            let scores: Vec<f64> = (0..l)
                .map(|j| {
                    (0..HEAD_DIM)
                        .map(|d| at(&q, i, d) * at(&k, j, d))
                        .sum::<f64>()
                        / (HEAD_DIM as f64).sqrt()
                })
                .collect();
            let mx = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let e: Vec<f64> = scores.iter().map(|s| (s - mx).exp()).collect();
            let sum: f64 = e.iter().sum();
            for d in 0..HEAD_DIM {
                want[i * HEAD_DIM + d] = (0..l).map(|j| e[j] / sum * at(&v, j, d)).sum();
            }
        }
        let best = attend_head(&q, &k, &v, stride, offset, l);
        let portable = attend_head_body::<8>(&q, &k, &v, stride, offset, l);
        for (name, got) in [("best", best), ("portable", portable)] {
            for (g, w) in got.iter().zip(&want) {
                assert!((*g as f64 - w).abs() < 1e-4, "{name}: {g} vs {w}");
            }
        }
    }

    #[test]
    fn quantized_pieces_concatenate_to_the_whole() {
        let x: Vec<f32> = (0..5 * 64)
            .map(|i| ((i * 29 % 71) as f32 - 35.0) / 9.0)
            .collect();
        let whole = quantize(&x, 64);
        let parts =
            QuantizedActs::concat(vec![quantize(&x[..128], 64), quantize(&x[128..], 64)], 64);
        assert_eq!((parts.q, parts.d, parts.s), (whole.q, whole.d, whole.s));
    }

    #[test]
    fn quantization_is_the_reference_engines_per_block_rounding() {
        // Block by block as the C engine does it: scale amax/127, lrintf of v/scale.
        let x: Vec<f32> = (0..4 * 64)
            .map(|i| ((i * 53 % 97) as f32 - 48.5) / 3.0 + if i % 17 == 0 { 0.5 } else { 0.0 })
            .collect();
        let got = quantize(&x, 64);
        for (b, xs) in x.chunks(QK).enumerate() {
            let amax = xs.iter().fold(0f32, |m, v| m.max(v.abs()));
            let d = amax / 127.0;
            assert_eq!(got.d[b], d);
            let q: Vec<i8> = xs
                .iter()
                .map(|v| ((v * (1.0 / d)).round_ties_even() as i32).clamp(-128, 127) as i8)
                .collect();
            assert_eq!(&got.q[b * QK..(b + 1) * QK], q.as_slice(), "block {b}");
            assert_eq!(got.s[b], q.iter().map(|&v| v as i32).sum::<i32>());
        }
    }

    #[test]
    fn the_fast_exp_needs_no_saturating_conversion() {
        // The integer part read from the mantissa is the rounded exponent at both ends of
        // the clamp and everywhere between.
        for i in -870..=880 {
            let x = i as f32 / 10.0;
            let want = libm::expf(x.clamp(-87.0, 88.0));
            assert!((exp(x) - want).abs() <= 2e-6 * want, "{x}");
        }
        assert!(exp(-1000.0) > 0.0 && exp(1000.0).is_finite());
    }

    #[test]
    fn simd_wrappers_match_the_portable_bodies() {
        let x: Vec<f32> = (0..256)
            .map(|i| ((i * 37 % 113) as f32 - 56.0) / 7.0)
            .collect();
        let (fast, portable) = (quantize(&x, 64), quantize_body(&x, 64));
        assert_eq!(fast.q, portable.q);
        assert_eq!(fast.s, portable.s);
        let mut g = x.clone();
        gelu_inplace(&mut g);
        for (a, b) in g.iter().zip(&x) {
            assert!((a - gelu(*b)).abs() < 1e-6);
        }
    }
}
