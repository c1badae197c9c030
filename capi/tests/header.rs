//! The checked-in header `include/dtb.h` is what cbindgen makes of `src/lib.rs` now: a change
//! to the C ABI without regenerating it fails here. `DTB_BLESS=1 cargo test -p dtb-capi --test
//! header` rewrites it.

use std::path::Path;

#[test]
fn header_is_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml");
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_config(config)
        .with_src(root.join("src/lib.rs"))
        .generate()
        .expect("cbindgen parses src/lib.rs")
        .write(&mut generated);
    let path = root.join("include/dtb.h");
    if std::env::var_os("DTB_BLESS").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let checked_in = std::fs::read(&path).unwrap_or_default();
    assert!(
        checked_in == generated,
        "{} is stale: run `DTB_BLESS=1 cargo test -p dtb-capi --test header` and commit it",
        path.display()
    );
    let text = String::from_utf8(generated).unwrap();
    // The names engines and scripts rely on.
    for sig in [
        "int dtb_open(const char *dir, const char *variant, size_t cache_bytes, dtb_tablebase **out);",
        "void dtb_close(dtb_tablebase *tb);",
        "int dtb_probe_fen(const dtb_tablebase *tb, const char *fen, dtb_value *out);",
        "int dtb_best_move_fen(const dtb_tablebase *tb, const char *fen, char *buf, size_t len);",
        "const char *dtb_last_error(void);",
        "int dtb_probe_dtc_fen(const dtb_tablebase *tb, const char *fen, int counter, dtb_dtc *out);",
        "} dtb_dtc;",
        "typedef struct dtb_tablebase dtb_tablebase;",
    ] {
        assert!(text.contains(sig), "header lacks `{sig}`");
    }
}
