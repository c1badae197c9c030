//! Helpers shared by the integration tests: where the reference data lives.

use std::path::PathBuf;

/// `../shared/data/<name>` beside the repository (or `$DTB_SHARED_DATA/<name>`).
pub fn shared_data(name: &str) -> PathBuf {
    if let Ok(dir) = std::env::var("DTB_SHARED_DATA") {
        return PathBuf::from(dir).join(name);
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(name)
}

/// The rows of a tab-separated reference file as maps from column name to value.
pub fn read_tsv(name: &str) -> Vec<std::collections::HashMap<String, String>> {
    let path = shared_data(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reference data {} unreadable: {e}", path.display()));
    let mut lines = text.lines();
    let head: Vec<String> = lines
        .next()
        .expect("header line")
        .split('\t')
        .map(str::to_string)
        .collect();
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            head.iter()
                .cloned()
                .zip(l.split('\t').map(str::to_string))
                .collect()
        })
        .collect()
}
