//! Numeric kernels, ported from the reference C engine so results agree: Q4_0 weights
//! (fp16 scale + 32 nibbles per block), activations quantized per block to int8, int8×int4
//! dot products (AVX2 when the CPU has it), layer norm and GELU.

/// Weights per quantization block.
pub const QK: usize = 32;
/// Bytes per Q4_0 block: fp16 scale + 16 bytes of nibbles.
pub const Q4_BLOCK_BYTES: usize = 18;
/// Output rows computed together (each activation block is loaded once for all of them).
const RO: usize = 8;

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

pub fn quantize(x: &[f32], cols: usize) -> QuantizedActs {
    let rows = x.len() / cols;
    let nb = cols / QK;
    let mut q = vec![0i8; x.len()];
    let mut d = vec![0f32; rows * nb];
    let mut s = vec![0i32; rows * nb];
    for blk in 0..rows * nb {
        let xs = &x[blk * QK..(blk + 1) * QK];
        let amax = xs.iter().fold(0f32, |m, v| m.max(v.abs()));
        let dd = amax / 127.0;
        let id = if dd > 0.0 { 1.0 / dd } else { 0.0 };
        let mut sum = 0i32;
        for (j, &v) in xs.iter().enumerate() {
            // Round half to even like C's lrintf: adding 1.5·2^23 leaves the integer part
            // in the mantissa (|v·id| <= 127 here, far inside the trick's range).
            const MAGIC: f32 = 12_582_912.0;
            let r = (((v * id) + MAGIC - MAGIC) as i32).clamp(-128, 127);
            q[blk * QK + j] = r as i8;
            sum += r;
        }
        d[blk] = dd;
        s[blk] = sum;
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
    let avx2 =
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma");
    #[cfg(target_arch = "x86_64")]
    let vnni = nb % 2 == 0 && avx512::available();
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
            nb % 2 == 0
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
    let n = (x * std::f32::consts::LOG2_E + 12_582_912.0) - 12_582_912.0;
    let r = x - n * 0.693_145_75 - n * 1.428_606_8e-6;
    let p = 1.0
        + r * (1.0
            + r * (0.5
                + r * (0.166_666_67
                    + r * (0.041_666_41 + r * (0.008_333_452 + r * 0.001_393_921_5)))));
    p * f32::from_bits(((n as i32 + 127) as u32) << 23)
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
}
