//! What to do about a library error, in this CLI's words: the libraries say what went
//! wrong; the flags and commands that fix it are named only here.

use kg_store::StoreError;

/// A line of advice for the first error in `e`'s chain that has one.
pub fn hint(e: &anyhow::Error) -> Option<String> {
    for cause in e.chain() {
        if let Some(s) = cause.downcast_ref::<StoreError>() {
            return store_hint(s);
        }
        if let Some(kg_build::BuildError::Strict { .. }) = cause.downcast_ref() {
            return Some(
                "--strict refuses any problem; fix the input or build without --strict".into(),
            );
        }
        // The libraries wrap store errors transparently: look inside.
        if let Some(kg_build::BuildError::Store(s)) = cause.downcast_ref() {
            return store_hint(s);
        }
        if let Some(query_engine::QueryError::Store(s)) = cause.downcast_ref() {
            return store_hint(s);
        }
        if let Some(coal_serve::ServeError::Store(s)) = cause.downcast_ref() {
            return store_hint(s);
        }
        let corpus = match cause.downcast_ref() {
            Some(kg_build::BuildError::Corpus(c)) => Some(c),
            _ => cause.downcast_ref::<coal_corpus::CorpusError>(),
        };
        if let Some(coal_corpus::CorpusError::ProfileWithoutRoot(_)) = corpus {
            return Some("pass the corpus folder with --corpus DIR (or COAL_CORPUS)".into());
        }
    }
    None
}

fn store_hint(e: &StoreError) -> Option<String> {
    match e {
        StoreError::NoBuild(dir) => {
            Some(format!("run `coal build --store {}` first", dir.display()))
        }
        StoreError::UpdateRefused => Some("pass --allow-update to change the graph".into()),
        StoreError::NoEmbeddings(_) => Some(
            "rebuild without --no-embeddings/--structure-only to use dense or hybrid search".into(),
        ),
        StoreError::DbConnect { .. } => {
            Some("check --db-url (or COAL_DB_URL): the server, the database and the login".into())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_errors_deep_in_a_chain_get_their_hint() {
        let e = anyhow::Error::from(StoreError::NoBuild("s".into())).context("opening");
        assert_eq!(
            hint(&e).as_deref(),
            Some("run `coal build --store s` first")
        );
        let e = anyhow::Error::from(kg_build::BuildError::Store(StoreError::UpdateRefused));
        assert!(hint(&e).unwrap().contains("--allow-update"));
        assert!(hint(&anyhow::anyhow!("other")).is_none());
    }
}
