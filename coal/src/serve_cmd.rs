//! `coal serve`

use std::io::Write;
use std::sync::Arc;

use crate::config::ServeArgs;

pub fn run(args: ServeArgs) -> anyhow::Result<()> {
    let config = args.config()?;
    // Read once: a new build is opened with the models and constants the server started with.
    let models = args.model.resolve()?;
    let open: coal_serve::OpenEngine = Arc::new(move |store| {
        crate::ask_cmd::engine_over(store, &models).map_err(|e| format!("{e:#}"))
    });
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(coal_serve::serve(config, open, |addr| {
        // Tests and scripts read this line to find the port (with --bind …:0).
        println!("listening on http://{addr}");
        let _ = std::io::stdout().flush();
    }))?;
    Ok(())
}
