//! Progress bars for long stages (stderr, hidden when not a terminal).

use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct Bars {
    current: Mutex<Option<ProgressBar>>,
}

impl Bars {
    pub fn new() -> Bars {
        Bars {
            current: Mutex::new(None),
        }
    }

    pub fn finish(&self) {
        if let Some(pb) = self.current.lock().unwrap().take() {
            pb.finish_and_clear();
        }
    }
}

/// Crash-safety tests set `COAL_TEST_PAUSE_AT=<stage>`: the build announces the stage on
/// stderr and waits there, so the test can kill it at a known point.
fn pause_for_tests(stage: &str) {
    if std::env::var("COAL_TEST_PAUSE_AT").is_ok_and(|s| s == stage) {
        eprintln!("paused at {stage}");
        std::thread::sleep(std::time::Duration::from_secs(600));
    }
}

impl kg_build::BuildObserver for Bars {
    fn stage(&self, name: &str, total: Option<u64>) {
        pause_for_tests(name);
        let mut cur = self.current.lock().unwrap();
        if let Some(pb) = cur.take() {
            pb.finish_and_clear();
        }
        let pb = match total {
            Some(n) => ProgressBar::new(n).with_style(
                ProgressStyle::with_template(
                    "{prefix:>9} [{bar:30}] {pos}/{len} {per_sec} ETA {eta}",
                )
                .expect("valid template")
                .progress_chars("=> "),
            ),
            None => ProgressBar::new_spinner().with_style(
                ProgressStyle::with_template("{prefix:>9} {spinner} {pos} {elapsed}")
                    .expect("valid template"),
            ),
        };
        pb.set_draw_target(ProgressDrawTarget::stderr());
        pb.set_prefix(name.to_owned());
        *cur = Some(pb);
    }

    fn progress(&self, done: u64) {
        if let Some(pb) = self.current.lock().unwrap().as_ref() {
            pb.set_position(done);
        }
    }
}
