//! `capi/install.sh` as an integrator runs it: the library this test was built with installed
//! into a temporary prefix (`--from`, so the test does not build a release), then
//! `examples/first_probe.c` compiled with the system's `cc` and the flags `pkg-config
//! --cflags --libs dtb` gives, an rpath to the prefix, and run to probe a position; the same
//! program linked statically from the installed `libdtb.a`. The installed shared library
//! carries its soname (`readelf -d`), the program records it, and debug info is stripped.
//!
//! pkg-config is a test dependency (`.ci/install-test-deps` installs Debian's `pkg-config`);
//! where it is missing the pkg-config part is skipped with a message saying so, and the
//! program is compiled with the flags `dtb.pc` states instead.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{built_lib_dir, root, tables};

const SONAME: &str = env!("DTB_SONAME");

fn run(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn has(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn cc() -> String {
    std::env::var("CC").unwrap_or_else(|_| "cc".into())
}

/// The flags of `dtb.pc` (`Cflags`, `Libs`, and with `--static` `Libs.private`), from
/// pkg-config, or read from the file itself where pkg-config is missing.
fn pc_flags(prefix: &Path, args: &[&str]) -> Vec<String> {
    let pc_dir = prefix.join("lib/pkgconfig");
    if has("pkg-config") {
        let out = run(Command::new("pkg-config")
            .args(args)
            .arg("dtb")
            .env("PKG_CONFIG_PATH", &pc_dir));
        return out.split_whitespace().map(String::from).collect();
    }
    eprintln!(
        "SKIPPED the pkg-config part: pkg-config is not installed (.ci/install-test-deps \
         installs it: apt-get install pkg-config); reading dtb.pc by hand instead"
    );
    let pc = std::fs::read_to_string(pc_dir.join("dtb.pc")).unwrap();
    let field = |name: &str| -> String {
        pc.lines()
            .find_map(|l| l.strip_prefix(name))
            .unwrap_or_default()
            .replace("${libdir}", &prefix.join("lib").display().to_string())
            .replace(
                "${includedir}",
                &prefix.join("include").display().to_string(),
            )
    };
    let mut flags = field("Cflags:") + " " + &field("Libs:");
    if args.contains(&"--static") {
        flags = flags + " " + &field("Libs.private:");
    }
    flags.split_whitespace().map(String::from).collect()
}

fn readelf(args: &[&str], file: &Path) -> String {
    run(Command::new("readelf").args(args).arg(file))
}

#[test]
fn install_then_compile_with_pkg_config_and_probe() {
    let tmp = tempfile::tempdir().unwrap();
    let prefix = tmp.path().join("prefix");
    let status = Command::new("sh")
        .arg(root().join("install.sh"))
        .arg("--prefix")
        .arg(&prefix)
        .arg("--from")
        .arg(built_lib_dir())
        .status()
        .unwrap();
    assert!(status.success(), "install.sh failed");

    // The layout of a C library's install.
    let lib = prefix.join("lib");
    let version = env!("CARGO_PKG_VERSION");
    let real = lib.join(format!("libdtb.so.{version}"));
    assert!(real.is_file() && !real.is_symlink());
    assert_eq!(
        std::fs::read_link(lib.join(SONAME)).unwrap(),
        PathBuf::from(format!("libdtb.so.{version}"))
    );
    assert_eq!(
        std::fs::read_link(lib.join("libdtb.so")).unwrap(),
        PathBuf::from(SONAME)
    );
    assert!(lib.join("libdtb.a").is_file());
    assert_eq!(
        std::fs::read(prefix.join("include/dtb.h")).unwrap(),
        std::fs::read(root().join("include/dtb.h")).unwrap()
    );
    let pc = std::fs::read_to_string(lib.join("pkgconfig/dtb.pc")).unwrap();
    assert!(
        pc.contains(&format!("prefix={}\n", prefix.display())),
        "{pc}"
    );
    assert!(pc.contains(&format!("Version: {version}\n")), "{pc}");

    let have_readelf = has("readelf");
    if have_readelf {
        // The soname, and no debug info in what was installed (symbols stay).
        let dynamic = readelf(&["-d"], &real);
        assert!(
            dynamic.contains(&format!("Library soname: [{SONAME}]")),
            "{dynamic}"
        );
        for f in [&real, &lib.join("libdtb.a")] {
            let sections = readelf(&["-S", "-W"], f);
            assert!(
                !sections.contains(".debug_info"),
                "{} keeps debug info",
                f.display()
            );
        }
    } else {
        eprintln!("SKIPPED the readelf checks: readelf (binutils) is not installed");
    }

    // A program built as README says: pkg-config's flags and an rpath to the prefix.
    let exe = tmp.path().join("first_probe");
    let mut cmd = Command::new(cc());
    cmd.args(["-std=c11", "-O2", "-Wall", "-Wextra", "-Werror"])
        .arg(root().join("examples/first_probe.c"))
        .arg("-o")
        .arg(&exe)
        .args(pc_flags(&prefix, &["--cflags", "--libs"]))
        .arg(format!("-Wl,-rpath,{}", lib.display()));
    run(&mut cmd);
    if have_readelf {
        let needed = readelf(&["-d"], &exe);
        assert!(
            needed.contains(&format!("Shared library: [{SONAME}]")),
            "{needed}"
        );
    }
    let probe = |exe: &Path| {
        run(Command::new(exe)
            .arg(tables())
            .arg("english")
            .arg("W:WK32:BK26")
            .env_remove("LD_LIBRARY_PATH"))
    };
    assert_eq!(probe(&exe), "win in 9 plies, best 32-27\n");

    // Without the rpath, LD_LIBRARY_PATH finds it (README's other way).
    let bare = tmp.path().join("first_probe_bare");
    let mut cmd = Command::new(cc());
    cmd.args(["-std=c11", "-O2"])
        .arg(root().join("examples/first_probe.c"))
        .arg("-o")
        .arg(&bare)
        .args(pc_flags(&prefix, &["--cflags", "--libs"]));
    run(&mut cmd);
    let out = run(Command::new(&bare)
        .arg(tables())
        .arg("english")
        .arg("B:WK32:BK26")
        .env("LD_LIBRARY_PATH", &lib));
    assert!(out.starts_with("draw, best "), "{out}");

    // The static library, stripped, still links (with Libs.private) and probes.
    let stat = tmp.path().join("first_probe_static");
    let flags: Vec<String> = pc_flags(&prefix, &["--static", "--cflags", "--libs"])
        .into_iter()
        .filter(|f| f != "-ldtb")
        .collect();
    let mut cmd = Command::new(cc());
    cmd.args(["-std=c11", "-O2"])
        .arg(root().join("examples/first_probe.c"))
        .arg(lib.join("libdtb.a"))
        .arg("-o")
        .arg(&stat)
        .args(&flags);
    run(&mut cmd);
    assert_eq!(probe(&stat), "win in 9 plies, best 32-27\n");
}

#[test]
fn install_refuses_bad_arguments_with_a_message() {
    let script = root().join("install.sh");
    let fails = |args: &[&str], words: &str| {
        let out = Command::new("sh").arg(&script).args(args).output().unwrap();
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(words), "{args:?}: {err}");
    };
    fails(&[], "--prefix is required");
    fails(&["--prefix"], "Usage");
    fails(
        &["--prefix", "/tmp/x", "--bogus"],
        "unknown argument: --bogus",
    );
    let empty = tempfile::tempdir().unwrap();
    fails(
        &[
            "--prefix",
            empty.path().join("p").to_str().unwrap(),
            "--from",
            empty.path().to_str().unwrap(),
        ],
        "no libdtb.so in",
    );
}
