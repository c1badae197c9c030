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

/// Path of the `dtb` binary (package `dtb-cli`), built fresh once per test process.
///
/// `CARGO_BIN_EXE_dtb` is only set for the integration tests of the package that owns the
/// binary, and `cargo test -p dtb-tests` does not build other packages' binaries, so
/// `assert_cmd`'s `cargo_bin("dtb")` would find a missing or stale `target/<profile>/dtb`.
/// This runs `cargo build -p dtb-cli --bin dtb` once, for the profile and target directory of
/// the running test executable (`target/<profile>/deps/<test>`), and returns
/// `target/<profile>/dtb`, the same path `cargo_bin` looks at. Set `DTB_BIN` to use another
/// binary and skip the build.
pub fn dtb_binary() -> PathBuf {
    static BIN: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(p) = std::env::var_os("DTB_BIN") {
            return PathBuf::from(p);
        }
        let exe = std::env::current_exe().expect("test executable path");
        let mut profile_dir = exe
            .parent()
            .expect("test executable directory")
            .to_path_buf();
        if profile_dir.ends_with("deps") {
            profile_dir.pop();
        }
        let profile = profile_dir
            .file_name()
            .and_then(|n| n.to_str())
            .expect("profile directory name")
            .to_string();
        let target_dir = profile_dir
            .parent()
            .expect("target directory")
            .to_path_buf();
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut cmd = std::process::Command::new(cargo);
        cmd.current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["build", "--quiet", "-p", "dtb-cli", "--bin", "dtb"])
            .arg("--target-dir")
            .arg(&target_dir);
        match profile.as_str() {
            "debug" => {}
            "release" => {
                cmd.arg("--release");
            }
            other => {
                cmd.args(["--profile", other]);
            }
        }
        let status = cmd
            .status()
            .unwrap_or_else(|e| panic!("cannot run cargo to build the dtb binary: {e}"));
        assert!(status.success(), "cargo build -p dtb-cli --bin dtb failed");
        let bin = profile_dir.join(format!("dtb{}", std::env::consts::EXE_SUFFIX));
        assert!(bin.is_file(), "{} missing after the build", bin.display());
        bin
    })
    .clone()
}
