//! Gives `libdtb.so` a soname, as C libraries have one: the name the dynamic linker looks for
//! at run time (`libdtb.so.0.1` for version 0.1.x), so a program built against this ABI never
//! loads an incompatible later one. `capi/install.sh` installs the library under that name,
//! with `libdtb.so` (what `-ldtb` finds when linking) a link to it.
//!
//! The soname carries the major version, and below 1.0 the minor one as well: under semver a
//! 0.x minor release may break the ABI (cargo-c names 0.x libraries the same way).

use std::env;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let major = env::var("CARGO_PKG_VERSION_MAJOR").unwrap_or_else(|_| "0".into());
    let minor = env::var("CARGO_PKG_VERSION_MINOR").unwrap_or_else(|_| "0".into());
    let abi = if major == "0" {
        format!("0.{minor}")
    } else {
        major
    };
    let soname = format!("libdtb.so.{abi}");
    // The tests check the installed names against this.
    println!("cargo:rustc-env=DTB_SONAME={soname}");
    // ELF systems only: macOS names a dylib with -install_name, Windows has no soname.
    let os = env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let elf = [
        "linux",
        "android",
        "freebsd",
        "netbsd",
        "openbsd",
        "dragonfly",
        "illumos",
        "solaris",
    ];
    if elf.contains(&os.as_str()) {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{soname}");
    }
}
