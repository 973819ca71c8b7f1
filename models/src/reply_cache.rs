//! A chat model's replies kept on disk: asked again under the same settings, system
//! prompt and message, the model is not run. Drafting every evaluation question with a
//! local model takes hours on a small machine; with the cache that cost is paid once for
//! every later `eval`, `fit-rerank` and `calibrate`.
//!
//! The file is JSON lines (`{"key": …, "reply": …}`), appended as replies arrive, so an
//! interrupted run keeps what it had generated. A torn last line (the process killed
//! mid-write) is cut off when the file is next opened; any other line that does not parse
//! is an error naming the line, since the file is then not one this cache wrote.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use sha2::{Digest, Sha256};

use crate::ModelError;
use crate::chat::{ChatModel, ChatTotals};

#[derive(serde::Serialize, serde::Deserialize)]
struct Entry {
    key: String,
    reply: String,
}

/// `inner` with its replies remembered in a file.
pub struct CachedChat {
    inner: Box<dyn ChatModel>,
    /// What, besides the prompt, decides a reply: the model and its sampling settings.
    settings: String,
    path: PathBuf,
    state: Mutex<State>,
}

struct State {
    replies: HashMap<String, String>,
    file: File,
    hits: usize,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ModelError + '_ {
    move |source| ModelError::Io {
        path: path.to_owned(),
        source,
    }
}

impl CachedChat {
    /// Opens (or creates, with its folder) the cache file at `path`. `settings` names
    /// what besides the prompt decides a reply (model, temperature, token bound): replies
    /// given under other settings are not served.
    pub fn open(
        inner: Box<dyn ChatModel>,
        settings: &str,
        path: &Path,
    ) -> Result<CachedChat, ModelError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io(dir))?;
        }
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(path)
            .map_err(io(path))?;
        let replies = read_entries(&mut file, path)?;
        Ok(CachedChat {
            settings: format!("{}\u{1f}{settings}", inner.id()),
            inner,
            path: path.to_owned(),
            state: Mutex::new(State {
                replies,
                file,
                hits: 0,
            }),
        })
    }

    /// Replies served from the file since it was opened.
    pub fn hits(&self) -> usize {
        self.state.lock().map(|s| s.hits).unwrap_or(0)
    }

    /// Replies the file holds.
    pub fn len(&self) -> usize {
        self.state.lock().map(|s| s.replies.len()).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn key(&self, call: &str, system: &str, user: &str) -> String {
        let mut h = Sha256::new();
        for part in [self.settings.as_str(), call, system, user] {
            h.update(part.as_bytes());
            h.update([0x1f]);
        }
        hex::encode(h.finalize())
    }

    fn lookup(&self, key: &str) -> Result<Option<String>, ModelError> {
        let mut s = self.lock()?;
        let found = s.replies.get(key).cloned();
        s.hits += found.is_some() as usize;
        Ok(found)
    }

    fn remember(&self, key: String, reply: &str) -> Result<(), ModelError> {
        let mut line = serde_json::to_string(&Entry {
            key: key.clone(),
            reply: reply.to_owned(),
        })
        .map_err(|e| ModelError::Chat(format!("reply cache: {e}")))?;
        line.push('\n');
        let mut s = self.lock()?;
        // One write per line: appends from two processes do not interleave within it.
        s.file.write_all(line.as_bytes()).map_err(io(&self.path))?;
        s.replies.insert(key, reply.to_owned());
        Ok(())
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, State>, ModelError> {
        self.state
            .lock()
            .map_err(|_| ModelError::Chat("reply cache: an earlier call panicked".into()))
    }

    /// The cached reply for (`call`, `system`, `user`), or `run`'s, remembered.
    fn cached(
        &self,
        call: &str,
        system: &str,
        user: &str,
        run: impl FnOnce() -> Result<String, ModelError>,
    ) -> Result<String, ModelError> {
        let key = self.key(call, system, user);
        if let Some(reply) = self.lookup(&key)? {
            return Ok(reply);
        }
        let reply = run()?;
        self.remember(key, &reply)?;
        Ok(reply)
    }
}

impl CachedChat {
    /// The cached reply for each of `users` under (`call`, `system`); `ask` is called
    /// once, with those the cache lacks, and its replies (in their order) are remembered.
    fn cached_many(
        &self,
        call: &str,
        system: &str,
        users: &[&str],
        ask: impl FnOnce(&[&str]) -> Result<Vec<String>, ModelError>,
    ) -> Result<Vec<String>, ModelError> {
        let keys: Vec<String> = users.iter().map(|u| self.key(call, system, u)).collect();
        let mut replies = Vec::with_capacity(users.len());
        for k in &keys {
            replies.push(self.lookup(k)?);
        }
        let missing: Vec<usize> = (0..users.len()).filter(|&i| replies[i].is_none()).collect();
        if missing.is_empty() {
            return Ok(replies.into_iter().flatten().collect());
        }
        let asked: Vec<&str> = missing.iter().map(|&i| users[i]).collect();
        let fresh = ask(&asked)?;
        if fresh.len() != asked.len() {
            return Err(ModelError::Chat(format!(
                "{} gave {} replies to {} messages",
                self.inner.id(),
                fresh.len(),
                asked.len()
            )));
        }
        for (&i, reply) in missing.iter().zip(fresh) {
            self.remember(keys[i].clone(), &reply)?;
            replies[i] = Some(reply);
        }
        Ok(replies.into_iter().flatten().collect())
    }
}

/// The cache's call kind of a judgement between `options`.
fn options_call(options: &[&str]) -> String {
    format!("options\u{1f}{}", options.join("\u{1f}"))
}

impl CachedChat {
    /// Probabilities as the cache keeps them (a JSON list).
    fn probabilities(&self, reply: &str) -> Result<Vec<f64>, ModelError> {
        serde_json::from_str(reply).map_err(|e| {
            ModelError::Chat(format!(
                "reply cache {}: probabilities `{reply}`: {e}",
                self.path.display()
            ))
        })
    }
}

/// The entries of an open cache file; a torn last line is cut off.
fn read_entries(file: &mut File, path: &Path) -> Result<HashMap<String, String>, ModelError> {
    let mut replies = HashMap::new();
    let mut reader = BufReader::new(&mut *file);
    let (mut line, mut kept, mut number) = (String::new(), 0u64, 0usize);
    loop {
        line.clear();
        let n = reader.read_line(&mut line).map_err(io(path))?;
        if n == 0 {
            break;
        }
        number += 1;
        if !line.ends_with('\n') {
            // Written by a process that was stopped mid-line: dropped, and cut so the
            // next reply starts a line of its own.
            break;
        }
        let entry: Entry = serde_json::from_str(&line).map_err(|e| ModelError::Settings {
            table: "llm",
            message: format!(
                "reply_cache {} line {number}: not a cached reply ({e}); move the file away to start a new cache",
                path.display()
            ),
        })?;
        replies.insert(entry.key, entry.reply);
        kept += n as u64;
    }
    drop(reader);
    if file.metadata().map_err(io(path))?.len() != kept {
        file.set_len(kept).map_err(io(path))?;
    }
    file.seek(SeekFrom::End(0)).map_err(io(path))?;
    Ok(replies)
}

impl ChatModel for CachedChat {
    fn id(&self) -> &str {
        self.inner.id()
    }

    fn complete(&self, system: &str, user: &str) -> Result<String, ModelError> {
        self.cached("text", system, user, || self.inner.complete(system, user))
    }

    fn complete_json(&self, system: &str, user: &str) -> Result<String, ModelError> {
        self.cached("json", system, user, || {
            self.inner.complete_json(system, user)
        })
    }

    fn complete_with_grammar(
        &self,
        system: &str,
        user: &str,
        grammar: &str,
    ) -> Result<String, ModelError> {
        let call = format!("grammar\u{1f}{grammar}");
        self.cached(&call, system, user, || {
            self.inner.complete_with_grammar(system, user, grammar)
        })
    }

    fn option_probabilities(
        &self,
        system: &str,
        user: &str,
        options: &[&str],
    ) -> Result<Vec<f64>, ModelError> {
        let call = options_call(options);
        let reply = self.cached(&call, system, user, || {
            let p = self.inner.option_probabilities(system, user, options)?;
            serde_json::to_string(&p).map_err(|e| ModelError::Chat(e.to_string()))
        })?;
        self.probabilities(&reply)
    }

    fn option_probabilities_many(
        &self,
        system: &str,
        users: &[&str],
        options: &[&str],
    ) -> Result<Vec<Vec<f64>>, ModelError> {
        let replies = self.cached_many(&options_call(options), system, users, |asked| {
            let fresh = self
                .inner
                .option_probabilities_many(system, asked, options)?;
            fresh
                .iter()
                .map(|p| serde_json::to_string(p).map_err(|e| ModelError::Chat(e.to_string())))
                .collect()
        })?;
        replies.iter().map(|r| self.probabilities(r)).collect()
    }

    fn complete_many(&self, system: &str, users: &[&str]) -> Result<Vec<String>, ModelError> {
        self.cached_many("text", system, users, |asked| {
            self.inner.complete_many(system, asked)
        })
    }

    fn one_at_a_time(&self) -> bool {
        self.inner.one_at_a_time()
    }

    fn totals(&self) -> Option<ChatTotals> {
        self.inner.totals()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Replies with the user message reversed and counts the calls it answered.
    struct Counting(Arc<AtomicUsize>);

    impl ChatModel for Counting {
        fn id(&self) -> &str {
            "counting"
        }
        fn complete(&self, system: &str, user: &str) -> Result<String, ModelError> {
            self.0.fetch_add(1, Ordering::SeqCst);
            Ok(format!(
                "{system}:{}",
                user.chars().rev().collect::<String>()
            ))
        }
    }

    fn open(path: &Path, settings: &str) -> (CachedChat, Arc<AtomicUsize>) {
        let calls = Arc::new(AtomicUsize::new(0));
        let chat = CachedChat::open(Box::new(Counting(calls.clone())), settings, path).unwrap();
        (chat, calls)
    }

    #[test]
    fn a_reply_is_generated_once_and_served_after_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/replies.jsonl");
        let (chat, calls) = open(&path, "t=0");
        assert_eq!(chat.complete("s", "甲乙").unwrap(), "s:乙甲");
        assert_eq!(chat.complete("s", "甲乙").unwrap(), "s:乙甲");
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        // Another system prompt or call kind is another reply.
        assert_eq!(chat.complete("t", "甲乙").unwrap(), "t:乙甲");
        chat.complete_json("s", "甲乙").unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 3);
        drop(chat);

        let (chat, calls) = open(&path, "t=0");
        assert_eq!(chat.len(), 3);
        assert_eq!(chat.complete("s", "甲乙").unwrap(), "s:乙甲");
        assert_eq!(calls.load(Ordering::SeqCst), 0);
        assert_eq!(chat.hits(), 1);
        drop(chat);
        // Other settings (another temperature) do not share replies.
        let (chat, calls) = open(&path, "t=0.3");
        chat.complete("s", "甲乙").unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn complete_many_runs_only_the_missing_messages_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("replies.jsonl");
        let (chat, calls) = open(&path, "");
        chat.complete("s", "b").unwrap();
        let replies = chat.complete_many("s", &["ab", "b", "cd"]).unwrap();
        assert_eq!(replies, ["s:ba", "s:b", "s:dc"]);
        assert_eq!(calls.load(Ordering::SeqCst), 3);
        assert_eq!(chat.complete("s", "cd").unwrap(), "s:dc");
        assert_eq!(calls.load(Ordering::SeqCst), 3);
    }

    #[test]
    fn option_probabilities_many_asks_only_for_the_missing_messages() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("replies.jsonl");
        let (chat, calls) = open(&path, "");
        // Counting's replies start with the system prompt: option "s:" for system "s".
        let options = ["s:", "x"];
        assert_eq!(
            chat.option_probabilities("s", "b", &options).unwrap(),
            [1.0, 0.0]
        );
        let p = chat
            .option_probabilities_many("s", &["ab", "b", "cd"], &options)
            .unwrap();
        assert_eq!(p, vec![vec![1.0, 0.0]; 3]);
        assert_eq!(calls.load(Ordering::SeqCst), 3);
        assert_eq!(
            chat.option_probabilities("s", "cd", &options).unwrap(),
            [1.0, 0.0]
        );
        assert_eq!(calls.load(Ordering::SeqCst), 3);
    }

    #[test]
    fn a_torn_last_line_is_cut_and_a_corrupt_line_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("replies.jsonl");
        let (chat, _) = open(&path, "");
        chat.complete("s", "a").unwrap();
        drop(chat);
        let whole = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, format!("{whole}{{\"key\":\"12")).unwrap();
        let (chat, calls) = open(&path, "");
        assert_eq!(chat.len(), 1);
        chat.complete("s", "b").unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        drop(chat);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 2, "{text}");
        assert!(text.lines().all(|l| l.starts_with("{\"key\"")), "{text}");

        std::fs::write(&path, format!("{text}not json\n")).unwrap();
        let calls = Arc::new(AtomicUsize::new(0));
        let e = CachedChat::open(Box::new(Counting(calls)), "", &path)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("line 3") && e.contains("replies.jsonl"), "{e}");
    }
}
