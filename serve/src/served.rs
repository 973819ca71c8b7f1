//! The build being served, and the swap to a newly committed one.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};

use kg_store::{Store, StoreDir};
use query_engine::engine::Engine;

use crate::{App, ServeError};

/// Opens the query engine over a store (the encoder and chat model are the caller's
/// configuration, so the CLI supplies this).
pub type OpenEngine = Arc<dyn Fn(&Store) -> Result<Engine, String> + Send + Sync>;

/// One build, opened: its graph and the engine over it. Requests hold an `Arc` of it for
/// their whole run, so a swap never pulls a build from under a request.
pub struct Served {
    pub store: Store,
    pub engine: Engine,
}

impl Served {
    pub fn build(&self) -> &str {
        self.store.build_id()
    }
}

pub(crate) struct Current {
    dir: PathBuf,
    writable: bool,
    open_engine: OpenEngine,
    now: RwLock<Arc<Served>>,
    /// Why the newest committed build could not be opened (it is retried when the
    /// manifest changes again); the previous build is served meanwhile.
    reload_error: Mutex<Option<String>>,
}

fn open(dir: &PathBuf, writable: bool, open_engine: &OpenEngine) -> Result<Served, ServeError> {
    let store = Store::open(dir, writable)?;
    let engine = open_engine(&store).map_err(|message| ServeError::Engine {
        build: store.build_id().to_owned(),
        message,
    })?;
    Ok(Served { store, engine })
}

impl Current {
    pub fn open(
        dir: PathBuf,
        writable: bool,
        open_engine: OpenEngine,
    ) -> Result<Current, ServeError> {
        let served = open(&dir, writable, &open_engine)?;
        Ok(Current {
            dir,
            writable,
            open_engine,
            now: RwLock::new(Arc::new(served)),
            reload_error: Mutex::new(None),
        })
    }

    /// The build a request starting now runs on.
    pub fn get(&self) -> Arc<Served> {
        self.now.read().expect("not poisoned").clone()
    }

    pub fn reload_error(&self) -> Option<String> {
        self.reload_error.lock().expect("not poisoned").clone()
    }

    /// Opens the manifest's build if it is not the one served, then swaps it in. A build
    /// that fails to open leaves the served one in place, with the reason kept.
    fn refresh(&self, last_failed: &mut Option<String>) {
        let Ok(dir) = StoreDir::new(&self.dir, false) else {
            return;
        };
        let Ok(build) = dir.current_build() else {
            return;
        };
        if build == self.get().build() || last_failed.as_deref() == Some(build.as_str()) {
            return;
        }
        match open(&self.dir, self.writable, &self.open_engine) {
            Ok(served) => {
                *self.now.write().expect("not poisoned") = Arc::new(served);
                *self.reload_error.lock().expect("not poisoned") = None;
                *last_failed = None;
            }
            Err(e) => {
                *self.reload_error.lock().expect("not poisoned") =
                    Some(format!("build {build}: {e}"));
                *last_failed = Some(build);
            }
        }
    }
}

/// Checks the manifest every `reload_every` on a thread of its own (opening an engine
/// takes ~0.5 s of blocking work).
pub(crate) fn watch(app: Arc<App>) {
    std::thread::Builder::new()
        .name("coal-serve-reload".into())
        .spawn(move || {
            let mut last_failed = None;
            loop {
                std::thread::sleep(app.config.reload_every);
                app.current.refresh(&mut last_failed);
            }
        })
        .expect("a thread for the reload watcher");
}
