//! Reading the packed model file (`E5S1`): header, unigram vocabulary, normalization map
//! and a directory of tensors (fp32 or Q4_0 blocks).

use std::collections::HashMap;
use std::path::Path;

use crate::ModelError;

/// Hyper-parameters from the header.
#[derive(Debug, Clone, Copy)]
pub struct Config {
    pub hidden: usize,
    pub layers: usize,
    pub heads: usize,
    pub ffn: usize,
    pub vocab: usize,
    pub max_positions: usize,
    pub eps: f32,
}

/// The raw vocabulary as stored.
pub struct Vocab {
    pub pieces: Vec<Vec<u8>>,
    pub scores: Vec<f32>,
    pub bos: u32,
    pub eos: u32,
    pub unk: u32,
    /// Code point → replacement code points (NFKC-like normalization of the tokenizer).
    pub normalization: HashMap<u32, Vec<u32>>,
}

/// The parsed file: configuration, vocabulary and tensors by name (byte ranges).
pub struct ModelFile {
    pub config: Config,
    pub vocab: Vocab,
    pub data: Vec<u8>,
    pub tensors: HashMap<String, (usize, usize)>,
}

struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], String> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or("truncated")?;
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn u16(&mut self) -> Result<u16, String> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().unwrap()))
    }
    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn i32(&mut self) -> Result<i32, String> {
        Ok(i32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }
    fn f32(&mut self) -> Result<f32, String> {
        Ok(f32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn usize(&mut self) -> Result<usize, String> {
        usize::try_from(self.i32()?).map_err(|_| "negative size".to_owned())
    }
}

impl ModelFile {
    pub fn read(path: &Path) -> Result<ModelFile, ModelError> {
        let data = std::fs::read(path).map_err(|e| ModelError::Io {
            path: path.to_owned(),
            source: e,
        })?;
        Self::parse(data).map_err(|reason| ModelError::BadFormat {
            path: path.to_owned(),
            reason,
        })
    }

    pub fn parse(data: Vec<u8>) -> Result<ModelFile, String> {
        if data.len() < 8 || &data[..4] != b"E5S1" {
            return Err("bad magic".into());
        }
        let mut c = Cursor {
            bytes: &data,
            pos: 8,
        };
        let hidden = c.usize()?;
        let layers = c.usize()?;
        let heads = c.usize()?;
        let ffn = c.usize()?;
        let vocab_size = c.usize()?;
        let max_positions = c.usize()?;
        let _type_vocab = c.usize()?;
        let eps = c.f32()?;
        let qk = c.usize()?;
        if qk != super::kernels::QK
            || heads == 0
            || hidden != heads * super::kernels::HEAD_DIM
            || hidden % qk != 0
            || ffn % qk != 0
        {
            return Err(format!(
                "unsupported shape: hidden {hidden}, heads {heads}, ffn {ffn}, block {qk}"
            ));
        }
        let n_pieces = c.usize()?;
        let bos = c.u32()?;
        let eos = c.u32()?;
        let _pad = c.u32()?;
        let unk = c.u32()?;
        let blob_len = usize::try_from(c.u64()?).map_err(|_| "blob too large")?;
        let mut offsets = Vec::with_capacity(n_pieces + 1);
        for _ in 0..=n_pieces {
            offsets.push(c.u32()? as usize);
        }
        let mut scores = Vec::with_capacity(n_pieces);
        for _ in 0..n_pieces {
            scores.push(c.f32()?);
        }
        let blob = c.take(blob_len)?;
        let mut pieces = Vec::with_capacity(n_pieces);
        for w in offsets.windows(2) {
            pieces.push(
                blob.get(w[0]..w[1])
                    .ok_or("piece offset out of range")?
                    .to_vec(),
            );
        }
        let n_norm = c.usize()?;
        let norm_bytes = c.u32()? as usize;
        let norm_end = c.pos + norm_bytes;
        let mut normalization = HashMap::with_capacity(n_norm);
        for _ in 0..n_norm {
            let cp = c.u32()?;
            let n = c.take(1)?[0] as usize;
            let mut out = Vec::with_capacity(n);
            for _ in 0..n {
                out.push(c.u32()?);
            }
            normalization.insert(cp, out);
        }
        if c.pos != norm_end {
            return Err("normalization map length mismatch".into());
        }
        let n_dir = c.usize()?;
        let mut tensors = HashMap::with_capacity(n_dir);
        for _ in 0..n_dir {
            let name_len = c.u16()? as usize;
            let name = String::from_utf8_lossy(c.take(name_len)?).into_owned();
            let _dtype = c.take(1)?[0];
            let _n = c.u32()?;
            let off = usize::try_from(c.u64()?).map_err(|_| "offset too large")?;
            let nbytes = usize::try_from(c.u64()?).map_err(|_| "size too large")?;
            if off.checked_add(nbytes).is_none_or(|e| e > data.len()) {
                return Err(format!("tensor {name} lies outside the file"));
            }
            tensors.insert(name, (off, nbytes));
        }
        let config = Config {
            hidden,
            layers,
            heads,
            ffn,
            vocab: vocab_size,
            max_positions,
            eps,
        };
        let vocab = Vocab {
            pieces,
            scores,
            bos,
            eos,
            unk,
            normalization,
        };
        Ok(ModelFile {
            config,
            vocab,
            data,
            tensors,
        })
    }

    /// The bytes of a tensor, checked to hold `expected` bytes.
    pub fn tensor(&self, name: &str, expected: usize) -> Result<&[u8], String> {
        let &(off, n) = self
            .tensors
            .get(name)
            .ok_or_else(|| format!("missing tensor {name}"))?;
        if n < expected {
            return Err(format!("tensor {name} has {n} bytes, expected {expected}"));
        }
        Ok(&self.data[off..off + expected])
    }

    pub fn f32_tensor(&self, name: &str, count: usize) -> Result<Vec<f32>, String> {
        let bytes = self.tensor(name, count * 4)?;
        Ok(bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
            .collect())
    }
}
