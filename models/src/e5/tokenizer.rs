//! The XLM-RoBERTa SentencePiece unigram tokenizer: the model file's normalization map,
//! whitespace collapsing, the ▁ metaspace, and Viterbi segmentation by piece scores.

use std::collections::HashMap;

use super::format::Vocab;

const METASPACE: char = '\u{2581}';

pub struct Tokenizer {
    ids: HashMap<Vec<u8>, u32>,
    scores: Vec<f32>,
    normalization: HashMap<u32, Vec<u32>>,
    pub bos: u32,
    pub eos: u32,
    unk: u32,
    unk_score: f32,
    max_piece_bytes: usize,
}

impl Tokenizer {
    pub fn new(vocab: &Vocab) -> Tokenizer {
        let mut ids = HashMap::with_capacity(vocab.pieces.len());
        for (i, p) in vocab.pieces.iter().enumerate() {
            // First piece wins, like the C engine's open-addressing table.
            if !p.is_empty() {
                ids.entry(p.clone()).or_insert(i as u32);
            }
        }
        let min_score = vocab.scores.iter().copied().fold(f32::INFINITY, f32::min);
        let max_piece_bytes = vocab
            .pieces
            .iter()
            .map(|p| p.len())
            .max()
            .unwrap_or(1)
            .max(1);
        Tokenizer {
            ids,
            scores: vocab.scores.clone(),
            normalization: vocab.normalization.clone(),
            bos: vocab.bos,
            eos: vocab.eos,
            unk: vocab.unk,
            unk_score: min_score - 10.0,
            max_piece_bytes,
        }
    }

    /// Content token ids (no `<s>`/`</s>`) of `text`, exactly as the reference engine.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        // 1. normalization map, per code point
        let mut cps: Vec<char> = Vec::with_capacity(text.len());
        for c in text.chars() {
            match self.normalization.get(&(c as u32)) {
                Some(out) => cps.extend(out.iter().filter_map(|&u| char::from_u32(u))),
                None => cps.push(c),
            }
        }
        // 2. collapse runs of ASCII spaces
        cps.dedup_by(|b, a| *a == ' ' && *b == ' ');
        // 3. metaspace: a leading ▁ unless the text starts with a space; spaces become ▁
        let mut buf = String::with_capacity(cps.len() * 3 + 3);
        let mut starts = Vec::with_capacity(cps.len() + 2);
        if cps.first() != Some(&' ') {
            starts.push(0);
            buf.push(METASPACE);
        }
        for &c in &cps {
            starts.push(buf.len());
            buf.push(if c == ' ' { METASPACE } else { c });
        }
        starts.push(buf.len());
        let bytes = buf.as_bytes();
        let n = starts.len() - 1;

        // 4. Viterbi over pieces; an unknown single character is the fallback.
        let mut best = vec![f32::NEG_INFINITY; n + 1];
        let mut piece = vec![u32::MAX; n + 1];
        let mut from = vec![0usize; n + 1];
        best[0] = 0.0;
        for i in 0..n {
            if best[i] == f32::NEG_INFINITY {
                continue;
            }
            let b = starts[i];
            for e in i + 1..=n {
                let len = starts[e] - b;
                if len > self.max_piece_bytes {
                    break;
                }
                if let Some(&id) = self.ids.get(&bytes[b..starts[e]])
                    && id != self.unk
                {
                    let s = best[i] + self.scores[id as usize];
                    if s > best[e] {
                        best[e] = s;
                        piece[e] = id;
                        from[e] = i;
                    }
                }
            }
            let s = best[i] + self.unk_score;
            if s > best[i + 1] {
                best[i + 1] = s;
                piece[i + 1] = u32::MAX;
                from[i + 1] = i;
            }
        }
        let mut out = Vec::new();
        let mut i = n;
        while i > 0 {
            out.push(if piece[i] == u32::MAX {
                self.unk
            } else {
                piece[i]
            });
            i = from[i];
        }
        out.reverse();
        out
    }
}
