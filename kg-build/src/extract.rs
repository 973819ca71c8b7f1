//! Triple extraction by an LLM (when a chat endpoint is configured): per article, a prompt
//! that demands JSON only, triples over a fixed relation vocabulary, schema validation,
//! a few attempts, then a skip with a warning. Every valid response is cached on disk by
//! (model, prompt hash) and appended as it arrives, so a rebuild of unchanged articles
//! makes no call and an interrupted extraction resumes where it stopped.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use coal_models::ChatModel;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The relations a triple may use (METHOD.md §2's extraction vocabulary).
pub const RELATIONS: &[&str] = &[
    "规定",
    "定义",
    "适用于",
    "引用",
    "依据",
    "修改",
    "废止",
    "解释",
    "主体-权利",
    "主体-义务",
    "主体-责任",
    "条件-结果",
    "程序-步骤",
    "层级",
    "隶属",
    "地域范围",
    "时间",
    "生效",
];
/// Attempts per article when the reply is not valid JSON of the schema.
const ATTEMPTS: usize = 2;
const MAX_TERM_CHARS: usize = 100;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Triple {
    pub subject: String,
    pub relation: String,
    pub object: String,
}

/// What the extraction did, for the build summary.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ExtractReport {
    pub model: String,
    pub articles: usize,
    pub calls: usize,
    pub from_cache: usize,
    pub triples: usize,
    /// Triples dropped for a relation outside the vocabulary or an empty/overlong term.
    pub invalid_triples: usize,
    /// Valid triples that their article does not support (see [`crate::grounding`]),
    /// dropped, and how many for each reason.
    pub ungrounded_triples: usize,
    pub ungrounded_reasons: std::collections::BTreeMap<String, usize>,
    /// Supported triples a reply repeated for its article, kept once (a small model
    /// repeats itself: 67 of 371 kept triples of one run were copies).
    pub duplicate_triples: usize,
    /// Supported triples of a relation the configuration leaves out (`skip_relations`).
    pub left_out_triples: usize,
    /// Replies cut at the token bound whose complete triples were kept (the cut one dropped).
    pub closed_replies: usize,
    /// Articles skipped after every attempt failed, with the reason (first 20).
    pub skipped: usize,
    pub skipped_examples: Vec<String>,
    /// Tokens and seconds of the replies this extraction generated (backends that count).
    pub generation: Option<coal_models::ChatTotals>,
    /// The model's second look at the kept triples, when asked for (`triples` counts
    /// what it kept).
    pub verification: Option<crate::verify::VerifyReport>,
}

/// Keeps the triples of one reply that their article supports (see [`crate::grounding`]),
/// each distinct one once; counts the others in `report`.
fn keep_supported(
    triples: &mut Vec<Triple>,
    article: &str,
    statute: &str,
    report: &mut ExtractReport,
) {
    let mut seen = std::collections::HashSet::new();
    triples.retain(|t| match crate::grounding::check(t, article, statute) {
        Ok(()) if seen.insert((t.subject.clone(), t.relation.clone(), t.object.clone())) => true,
        Ok(()) => {
            report.duplicate_triples += 1;
            false
        }
        Err(why) => {
            report.ungrounded_triples += 1;
            *report
                .ungrounded_reasons
                .entry(why.as_str().to_owned())
                .or_default() += 1;
            false
        }
    });
}

pub fn system_prompt() -> String {
    format!(
        "你从中国法律条文中抽取知识三元组。只输出 JSON，不要任何其他文字。\
         格式：{{\"triples\":[{{\"subject\":\"…\",\"relation\":\"…\",\"object\":\"…\"}}]}}。\
         relation 只能是以下之一：{}。subject 和 object 用条文中的词语，不超过{MAX_TERM_CHARS}字。\
         没有可抽取的内容时输出 {{\"triples\":[]}}。\
         示例：输入《劳动法》第三条：劳动者享有平等就业的权利。用人单位应当支付劳动报酬。\
         输出 {{\"triples\":[{{\"subject\":\"劳动者\",\"relation\":\"主体-权利\",\"object\":\"平等就业\"}},\
         {{\"subject\":\"用人单位\",\"relation\":\"主体-义务\",\"object\":\"支付劳动报酬\"}}]}}",
        RELATIONS.join("、")
    )
}

pub fn user_prompt(law_title: &str, label: &str, text: &str) -> String {
    format!("《{law_title}》{label}：{text}")
}

#[derive(Deserialize)]
struct Reply {
    triples: Vec<serde_json::Value>,
}

/// Parses and validates a reply: `Err` when it is not the schema's JSON; otherwise the
/// valid triples and how many were dropped.
pub fn parse_reply(reply: &str) -> Result<(Vec<Triple>, usize), String> {
    let r: Reply = serde_json::from_str(coal_models::chat::json_text(reply))
        .map_err(|e| format!("not the expected JSON: {e}"))?;
    let mut out = Vec::new();
    let mut invalid = 0;
    for v in r.triples {
        let t: Option<Triple> = serde_json::from_value(v).ok();
        match t {
            Some(t)
                if RELATIONS.contains(&t.relation.trim())
                    && [&t.subject, &t.object].iter().all(|s| {
                        let n = s.trim().chars().count();
                        n > 0 && n <= MAX_TERM_CHARS
                    }) =>
            {
                out.push(Triple {
                    subject: t.subject.trim().to_owned(),
                    relation: t.relation.trim().to_owned(),
                    object: t.object.trim().to_owned(),
                });
            }
            _ => invalid += 1,
        }
    }
    Ok((out, invalid))
}

/// A reply cut off at the token bound (a small model that repeats itself until
/// `max_tokens`) is a valid `{"triples":[…` up to its last complete triple: that prefix,
/// closed with `]}`. `None` when the reply does not start the schema's array or holds no
/// complete triple.
pub fn close_cut_reply(reply: &str) -> Option<String> {
    let text = coal_models::chat::json_text(reply);
    let open = text.find('[')?;
    if !text[..open].contains("\"triples\"") {
        return None;
    }
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    let mut last_close = None;
    for (i, c) in text[open + 1..].char_indices() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' => depth += 1,
            '}' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    last_close = Some(open + 1 + i);
                }
            }
            // The array closed: the reply was not cut inside it.
            ']' if depth == 0 => return None,
            _ => {}
        }
    }
    last_close.map(|end| format!("{}]}}", &text[..=end]))
}

/// [`parse_reply`], and for a reply cut at the token bound its complete triples: the
/// triples, how many were dropped, and whether the reply had to be closed.
pub fn parse_or_close(reply: &str) -> Result<(Vec<Triple>, usize, bool), String> {
    match parse_reply(reply) {
        Ok((t, invalid)) => Ok((t, invalid, false)),
        Err(e) => match close_cut_reply(reply).map(|r| parse_reply(&r)) {
            Some(Ok((t, invalid))) if !t.is_empty() => Ok((t, invalid, true)),
            _ => Err(e),
        },
    }
}

#[derive(Serialize, Deserialize)]
struct CacheLine {
    key: String,
    reply: String,
}

/// Replies by (model, prompt) hash, in an append-only JSON-lines file.
pub struct ReplyCache {
    path: PathBuf,
    map: HashMap<String, String>,
    file: Mutex<std::fs::File>,
}

impl ReplyCache {
    pub fn open(path: &Path) -> std::io::Result<ReplyCache> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut map = HashMap::new();
        if let Ok(text) = std::fs::read_to_string(path) {
            // A line cut by a crash is skipped.
            for line in text.lines() {
                if let Ok(c) = serde_json::from_str::<CacheLine>(line) {
                    map.insert(c.key, c.reply);
                }
            }
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(ReplyCache {
            path: path.to_owned(),
            map,
            file: Mutex::new(file),
        })
    }

    pub fn key(model: &str, system: &str, user: &str) -> String {
        let mut h = Sha256::new();
        for part in [model, system, user] {
            h.update(part.as_bytes());
            h.update([0]);
        }
        hex::encode(h.finalize())
    }

    fn get(&self, key: &str) -> Option<&String> {
        self.map.get(key)
    }

    fn append(&self, key: &str, reply: &str) -> std::io::Result<()> {
        let line = serde_json::to_string(&CacheLine {
            key: key.to_owned(),
            reply: reply.to_owned(),
        })
        .expect("serializes");
        let mut f = self.file.lock().unwrap();
        writeln!(f, "{line}")?;
        f.flush()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// What [`ask_cached`] got.
pub struct Asked<T> {
    pub outcome: Result<T, String>,
    pub calls: usize,
    pub from_cache: bool,
}

/// One question to the model through the reply cache: a cached reply is parsed; else up
/// to [`ATTEMPTS`] calls until `parse` accepts a reply, which is then cached. Never fails
/// on model output: the last problem comes back as `Err`.
pub fn ask_cached<T>(
    chat: &dyn ChatModel,
    cache: &ReplyCache,
    system: &str,
    user: &str,
    parse: impl Fn(&str) -> Result<T, String>,
) -> Asked<T> {
    ask_cached_with(
        chat,
        cache,
        system,
        user,
        || chat.complete_json(system, user),
        parse,
    )
}

/// [`ask_cached`] with the call to the model given: what `call` returns is what is
/// cached and parsed (a JSON reply, or a judgement written as text).
pub fn ask_cached_with<T>(
    chat: &dyn ChatModel,
    cache: &ReplyCache,
    system: &str,
    user: &str,
    call: impl Fn() -> Result<String, coal_models::ModelError>,
    parse: impl Fn(&str) -> Result<T, String>,
) -> Asked<T> {
    let key = ReplyCache::key(chat.id(), system, user);
    if let Some(reply) = cache.get(&key) {
        return Asked {
            outcome: parse(reply),
            calls: 0,
            from_cache: true,
        };
    }
    let mut last = String::new();
    for calls in 1..=ATTEMPTS {
        match call() {
            Ok(reply) => match parse(&reply) {
                Ok(parsed) => {
                    // A failed cache write only means the next build asks again.
                    let _ = cache.append(&key, &reply);
                    return Asked {
                        outcome: Ok(parsed),
                        calls,
                        from_cache: false,
                    };
                }
                Err(e) => last = e,
            },
            Err(e) => last = e.to_string(),
        }
    }
    Asked {
        outcome: Err(last),
        calls: ATTEMPTS,
        from_cache: false,
    }
}

/// The JSON object in a reply (Markdown fences removed).
pub fn reply_json(reply: &str) -> Result<serde_json::Value, String> {
    serde_json::from_str(coal_models::chat::json_text(reply))
        .map_err(|e| format!("not the expected JSON: {e}"))
}

/// One article to extract from: its IRI and prompt, and the text and statute title the
/// triples are checked against.
pub struct Job {
    pub iri: String,
    pub user: String,
    pub article: String,
    pub statute: String,
}

/// Runs the jobs with `concurrency` workers; returns (article IRI, triples) for every
/// article that produced a valid reply, and the report. Never fails on model output.
pub fn extract(
    chat: &dyn ChatModel,
    jobs: &[Job],
    cache: &ReplyCache,
    concurrency: usize,
    progress: &(dyn Fn(u64) + Sync),
) -> (Vec<(String, Vec<Triple>)>, ExtractReport) {
    let system = system_prompt();
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, Vec<Triple>)>> = Mutex::new(Vec::new());
    let report = Mutex::new(ExtractReport {
        model: chat.id().to_owned(),
        articles: jobs.len(),
        ..Default::default()
    });
    // A local model on the CPU generates one reply at a time whatever was asked for.
    let before = chat.totals();
    let workers = if chat.one_at_a_time() {
        1
    } else {
        concurrency.max(1)
    };
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(job) = jobs.get(i) else { break };
                    let asked = ask_cached(chat, cache, &system, &job.user, parse_or_close);
                    let outcome = {
                        let mut r = report.lock().unwrap();
                        r.calls += asked.calls;
                        r.from_cache += asked.from_cache as usize;
                        asked.outcome
                    };
                    {
                        let mut r = report.lock().unwrap();
                        match outcome {
                            Ok((mut triples, invalid, closed)) => {
                                r.closed_replies += closed as usize;
                                keep_supported(&mut triples, &job.article, &job.statute, &mut r);
                                r.triples += triples.len();
                                r.invalid_triples += invalid;
                                results.lock().unwrap().push((i, triples));
                            }
                            Err(why) => {
                                r.skipped += 1;
                                if r.skipped_examples.len() < 20 {
                                    r.skipped_examples.push(format!("{}: {why}", job.iri));
                                }
                            }
                        }
                    }
                    progress(done.fetch_add(1, Ordering::SeqCst) as u64 + 1);
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|(i, _)| *i);
    let out = results
        .into_iter()
        .map(|(i, t)| (jobs[i].iri.clone(), t))
        .collect();
    let mut report = report.into_inner().unwrap();
    report.generation = chat
        .totals()
        .zip(before)
        .map(|(after, before)| after.since(&before));
    (out, report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_supported_triple_is_kept_once_and_counted() {
        let t = |s: &str, r: &str, o: &str| Triple {
            subject: s.into(),
            relation: r.into(),
            object: o.into(),
        };
        let article = "用人单位应当如实告知劳动者工作内容。";
        let mut triples = vec![
            t("用人单位", "主体-义务", "如实告知劳动者工作内容"),
            t("用人单位", "主体-义务", "如实告知劳动者工作内容"),
            t("劳动者", "主体-权利", "平等就业"),
            t("用人单位", "主体-义务", "如实告知劳动者工作内容"),
        ];
        let mut report = ExtractReport::default();
        keep_supported(
            &mut triples,
            article,
            "中华人民共和国劳动合同法",
            &mut report,
        );
        assert_eq!(
            triples,
            vec![t("用人单位", "主体-义务", "如实告知劳动者工作内容")]
        );
        assert_eq!(
            (report.duplicate_triples, report.ungrounded_triples),
            (2, 1)
        );
    }

    #[test]
    fn replies_are_validated_against_the_schema_and_vocabulary() {
        let (t, invalid) = parse_reply(
            "```json\n{\"triples\":[{\"subject\":\"用人单位\",\"relation\":\"主体-义务\",\"object\":\"支付经济补偿\"},\
             {\"subject\":\"劳动者\",\"relation\":\"喜欢\",\"object\":\"休假\"},{\"subject\":\"\",\"relation\":\"规定\",\"object\":\"x\"},{\"oops\":1}]}\n```",
        )
        .unwrap();
        assert_eq!(
            t,
            vec![Triple {
                subject: "用人单位".into(),
                relation: "主体-义务".into(),
                object: "支付经济补偿".into()
            }]
        );
        assert_eq!(invalid, 3);
        assert!(parse_reply("好的，以下是三元组：").is_err());
        assert!(parse_reply("{\"triples\": [}").is_err());
        assert_eq!(parse_reply("{\"triples\":[]}").unwrap().0.len(), 0);
    }

    #[test]
    fn a_reply_cut_at_the_token_bound_keeps_its_complete_triples() {
        let cut = r#"{"triples":[{"subject":"用人单位","relation":"主体-义务","object":"支付工资"},{"subject":"劳动者","relation":"主体-权利","object":"休息{休假}"},{"subject":"劳动者","relation":"主体-"#;
        let (t, invalid, closed) = parse_or_close(cut).unwrap();
        assert!(closed);
        assert_eq!((t.len(), invalid), (2, 0));
        assert_eq!(t[1].object, "休息{休假}");
        // A whole reply is not "closed"; a reply with no complete triple stays an error.
        assert!(!parse_or_close(r#"{"triples":[]}"#).unwrap().2);
        assert!(parse_or_close(r#"{"triples":[{"subject":"用人"#).is_err());
        assert!(parse_or_close("好的，以下是三元组").is_err());
    }

    #[test]
    fn the_cache_survives_a_cut_last_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("llm.jsonl");
        {
            let c = ReplyCache::open(&path).unwrap();
            c.append("k1", "{\"triples\":[]}").unwrap();
        }
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{\"key\":\"k2\",\"rep")
            .unwrap();
        let c = ReplyCache::open(&path).unwrap();
        assert!(c.get("k1").is_some() && c.get("k2").is_none());
    }
}
