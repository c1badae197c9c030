//! What the C tests share: English 2-4 tables and compiling a C or C++ file against libdtb.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use dtb_gen::build::{self, Plan, Quiet};
use dtb_probe::Rules;

pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// English 2-4 tables, built once per run inside `target/`.
pub fn tables() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("dtb-capi-english-4");
        let _ = std::fs::remove_dir_all(&dir);
        let plan = Plan::new(Rules::ENGLISH, 4, &dir).expect("plan");
        build::run(&plan, &Quiet).expect("build 2-4");
        dir
    })
}

/// English 2-4 tables with DTC values under a 20-ply count limit (`english,count=20`, where
/// cursed wins occur) and WLD, built once per run inside `target/`.
pub fn dtc_tables() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("dtb-capi-english-4-count-20");
        let _ = std::fs::remove_dir_all(&dir);
        let count = dtb_probe::Variant::parse("english,count=20").unwrap().count;
        let plan = Plan::new(Rules::ENGLISH, 4, &dir)
            .expect("plan")
            .with_values(build::Values::WLD_DTC)
            .with_count(count);
        build::run(&plan, &Quiet).expect("build 2-4 DTC");
        dir
    })
}

/// The directory holding `libdtb.so` and `libdtb.a`, built by cargo with this test (the
/// cdylib and staticlib of this crate's library target): of `target/release/` (where `cargo
/// build` puts them) and its `deps/` (where `cargo test` does), the one whose library is the
/// newer, so that a library left by an earlier `cargo build` is not tested instead.
pub fn built_lib_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    let modified = |d: &Path| {
        ["libdtb.so", "libdtb.dylib"]
            .iter()
            .find_map(|n| std::fs::metadata(d.join(n)).and_then(|m| m.modified()).ok())
    };
    [deps.parent().unwrap(), deps]
        .into_iter()
        .filter_map(|d| Some((modified(d)?, d)))
        .max_by_key(|(t, _)| *t)
        .map(|(_, d)| d.to_path_buf())
        .unwrap_or_else(|| panic!("libdtb.so not found beside {}", deps.display()))
}

/// A directory where `libdtb.so` and its soname (`libdtb.so.0.1`, from `build.rs`) are links
/// to the library cargo built with this test, as an install has them: a program linked with
/// `-ldtb` records the soname, which the dynamic linker then finds there. Each link is made
/// beside its name and renamed over it, so test programs running at once never see it
/// missing.
pub fn lib_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let built = built_lib_dir().join("libdtb.so");
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("libdtb-links");
        std::fs::create_dir_all(&dir).unwrap();
        for name in ["libdtb.so", env!("DTB_SONAME")] {
            let tmp = dir.join(format!("{name}.{}", std::process::id()));
            let _ = std::fs::remove_file(&tmp);
            std::os::unix::fs::symlink(&built, &tmp).unwrap();
            std::fs::rename(&tmp, dir.join(name)).unwrap();
        }
        dir
    })
    .clone()
}

/// Compile `source` (C or C++) into an executable linked to libdtb, named `name`.
pub fn compile(source: &str, name: &str) -> PathBuf {
    let cpp = source.ends_with(".cpp");
    let compiler = std::env::var(if cpp { "CXX" } else { "CC" })
        .unwrap_or_else(|_| if cpp { "c++" } else { "cc" }.into());
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let lib = lib_dir();
    let std = if cpp { "-std=c++17" } else { "-std=c11" };
    let status = Command::new(&compiler)
        .args([std, "-O2", "-Wall", "-Wextra", "-Werror", "-pthread"])
        .arg("-I")
        .arg(root().join("include"))
        .arg(root().join("examples").join(source))
        .arg("-o")
        .arg(&out)
        .arg("-L")
        .arg(&lib)
        .arg("-ldtb")
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .status()
        .unwrap_or_else(|e| panic!("cannot run {compiler}: {e}"));
    assert!(status.success(), "{compiler} failed on {source}");
    out
}
