//! One JSON POST to an OpenAI-compatible endpoint, retried with backoff on server errors,
//! 429 and timeouts. The blocking client runs on a thread of its own, so callers may be
//! synchronous or inside an async runtime alike.

use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;

#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    pub base_url: String,
    pub api_key: Option<String>,
    pub timeout: Duration,
    pub attempts: u32,
}

pub(crate) fn post_json<B, R>(ep: &Endpoint, path: &str, body: &B) -> Result<R, String>
where
    B: Serialize + Sync,
    R: DeserializeOwned + Send,
{
    std::thread::scope(|s| {
        s.spawn(|| -> Result<R, String> {
            let client = reqwest::blocking::Client::builder()
                .timeout(ep.timeout)
                .build()
                .map_err(|e| e.to_string())?;
            let mut last = String::new();
            for attempt in 0..ep.attempts.max(1) {
                if attempt > 0 {
                    std::thread::sleep(Duration::from_millis(200 * (1 << attempt)));
                }
                let mut req = client.post(format!("{}{path}", ep.base_url)).json(body);
                if let Some(key) = &ep.api_key {
                    req = req.bearer_auth(key);
                }
                match req.send() {
                    Ok(resp) if resp.status().is_success() => {
                        return resp
                            .json::<R>()
                            .map_err(|e| format!("malformed response: {e}"));
                    }
                    Ok(resp)
                        if resp.status().is_server_error() || resp.status().as_u16() == 429 =>
                    {
                        last = format!("HTTP {}", resp.status());
                    }
                    Ok(resp) => {
                        return Err(format!(
                            "HTTP {}: {}",
                            resp.status(),
                            resp.text().unwrap_or_default()
                        ));
                    }
                    Err(e) => last = e.to_string(),
                }
            }
            Err(format!("{last} after {} attempt(s)", ep.attempts.max(1)))
        })
        .join()
        .unwrap_or_else(|_| Err("the request thread panicked".to_owned()))
    })
}
