//! The generator's modules form layers: no import circle among the modules of gen/src
//! (a module is a file of gen/src, or a folder with its submodules: `solve/`, `build/`).
//!
//! Read from the source: every `crate::MODULE` a module names in code (not in comments, not
//! in its `#[cfg(test)]` part, which may reach anywhere) is an edge, and the graph of edges
//! must have no cycle. `cargo test -p dtb-gen --test layers` prints the modules bottom first.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The module a file of gen/src belongs to (`solve/group.rs` -> `solve`).
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).expect("under gen/src");
    let first = rel.components().next().expect("a path");
    let name = first.as_os_str().to_string_lossy();
    name.trim_end_matches(".rs").to_string()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("readable source folder") {
        let p = e.expect("a folder entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The code of a file before its test part: a `#[cfg(test)]` line followed by a module
/// (`mod tests {` runs to the end of the file; `mod reference;` declares a test-only file,
/// left out by the caller) ends what is read, except a `#[cfg(test)]` item of one line.
fn code_lines(text: &str) -> Vec<&str> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i].trim();
        if l == "#[cfg(test)]" {
            let next = lines.get(i + 1).map_or("", |n| n.trim());
            if next.starts_with("mod ") && next.ends_with('{') {
                break; // the test module, at the end of the file
            }
            i += 2; // one test-only line (`mod reference;`, a `use`)
            continue;
        }
        if !l.starts_with("//") {
            out.push(lines[i]);
        }
        i += 1;
    }
    out
}

/// Files declared test-only (`#[cfg(test)] mod x;`): not part of the library's layers.
fn test_only_files(text: &str, dir: &Path) -> Vec<PathBuf> {
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    lines
        .windows(2)
        .filter(|w| w[0] == "#[cfg(test)]" && w[1].starts_with("mod ") && w[1].ends_with(';'))
        .map(|w| dir.join(format!("{}.rs", &w[1][4..w[1].len() - 1])))
        .collect()
}

/// The modules `line` names as `crate::MODULE`, also inside `use crate::{a, b::c}` groups.
fn named_modules(line: &str, known: &BTreeSet<String>) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("crate::") {
        let after = &rest[at + "crate::".len()..];
        if let Some(group) = after.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for part in group[..end].split(',') {
                let name: String = part
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                out.push(name);
            }
        } else {
            let name: String = after
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            out.push(name);
        }
        rest = after;
    }
    out.retain(|m| known.contains(m));
    out
}

/// The import graph of gen/src: module -> modules it names.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut skip = BTreeSet::new();
    for f in &files {
        let text = std::fs::read_to_string(f).expect("readable source");
        skip.extend(test_only_files(&text, f.parent().expect("a folder")));
    }
    let known: BTreeSet<String> = files
        .iter()
        .map(|f| module_of(&src, f))
        .filter(|m| m != "lib")
        .collect();
    let mut g: BTreeMap<String, BTreeSet<String>> =
        known.iter().map(|m| (m.clone(), BTreeSet::new())).collect();
    for f in files.iter().filter(|f| !skip.contains(*f)) {
        let from = module_of(&src, f);
        if from == "lib" {
            continue;
        }
        let text = std::fs::read_to_string(f).expect("readable source");
        for line in code_lines(&text) {
            for to in named_modules(line, &known) {
                if to != from {
                    g.get_mut(&from).expect("known module").insert(to);
                }
            }
        }
    }
    g
}

/// The modules bottom first (each after every module it names), or a cycle.
fn layers(g: &BTreeMap<String, BTreeSet<String>>) -> Result<Vec<String>, Vec<String>> {
    fn visit(
        m: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
        order: &mut Vec<String>,
    ) -> Result<(), Vec<String>> {
        match state.get(m) {
            Some(2) => return Ok(()),
            Some(1) => {
                let at = path.iter().position(|p| p == m).expect("on the path");
                let mut cycle = path[at..].to_vec();
                cycle.push(m.to_string());
                return Err(cycle);
            }
            _ => {}
        }
        state.insert(m.to_string(), 1);
        path.push(m.to_string());
        for to in &g[m] {
            visit(to, g, state, path, order)?;
        }
        path.pop();
        state.insert(m.to_string(), 2);
        order.push(m.to_string());
        Ok(())
    }
    let mut state = BTreeMap::new();
    let mut order = Vec::new();
    for m in g.keys() {
        visit(m, g, &mut state, &mut Vec::new(), &mut order)?;
    }
    Ok(order)
}

#[test]
fn no_import_circle_among_the_generators_modules() {
    let g = graph();
    // The graph is read at all: the modules the build is made of, and edges we know.
    for m in [
        "build", "solve", "store", "scratch", "packed", "words", "write",
    ] {
        assert!(g.contains_key(m), "module {m} not found: {:?}", g.keys());
    }
    assert!(g["build"].contains("solve") && g["build"].contains("store"));
    match layers(&g) {
        Ok(order) => {
            println!("gen/src modules, bottom first:");
            for m in &order {
                println!("  {m:<10} names {:?}", g[m]);
            }
        }
        Err(cycle) => panic!("import circle: {}", cycle.join(" -> ")),
    }
}

#[test]
fn a_circle_is_found_and_named() {
    let known: BTreeSet<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
    assert_eq!(
        named_modules("use crate::{a::X, b, zz}; crate::c::f()", &known),
        ["a", "b", "c"]
    );
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.insert("a".into(), ["b".to_string()].into());
    g.insert("b".into(), ["c".to_string()].into());
    g.insert("c".into(), BTreeSet::new());
    assert_eq!(layers(&g).unwrap(), ["c", "b", "a"]);
    g.get_mut("c").unwrap().insert("a".into());
    assert_eq!(layers(&g).unwrap_err(), ["a", "b", "c", "a"]);
    // Test parts and comments do not count.
    let text = "use crate::a;\n// crate::b\n#[cfg(test)]\nmod tests {\n use crate::c;\n}\n";
    let lines = code_lines(text);
    assert_eq!(lines, ["use crate::a;"]);
}
