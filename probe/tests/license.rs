//! The licence the manifests name ("MIT OR Apache-2.0") is there in full at the repository
//! root, and no manifest points at a placeholder repository address.

use std::path::Path;

fn root_file(name: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    std::fs::read_to_string(root.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn both_licences_are_at_the_root_and_no_manifest_names_a_placeholder() {
    let mit = root_file("LICENSE-MIT");
    assert!(
        mit.starts_with("MIT License\n\nCopyright (c) 2026 the dtb authors\n"),
        "{mit}"
    );
    assert!(mit.contains("THE SOFTWARE IS PROVIDED \"AS IS\", WITHOUT WARRANTY OF ANY KIND"));
    let apache = root_file("LICENSE-APACHE");
    assert!(apache.contains("Apache License\n                        Version 2.0, January 2004"));
    assert!(apache.contains("END OF TERMS AND CONDITIONS"));
    assert_eq!(apache.lines().count(), 201);
    for manifest in ["Cargo.toml", "python/Cargo.toml", "python/pyproject.toml"] {
        let text = root_file(manifest);
        assert!(
            text.contains("MIT OR Apache-2.0"),
            "{manifest} names no licence"
        );
        assert!(
            !text.contains("example.invalid"),
            "{manifest} names a placeholder address"
        );
    }
}
