//! Opening a table directory for a command, with hints when it holds no tables of the rule
//! set asked for.

use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use dtb_probe::{Rules, Tablebase};

/// Open the tables of `rules`' variant in `dir`, with a hint when the directory holds
/// another variant's tables or none.
pub fn open_tables(dir: &Path, rules: &Rules) -> Result<Tablebase> {
    require_dir(dir)?;
    if !dir.is_dir() {
        bail!("{} is not a directory", dir.display());
    }
    let tb = Tablebase::open(dir, *rules)?;
    if tb.max_pieces() == 0 {
        let others = rule_sets_in(dir, rules);
        if others.is_empty() {
            bail!(
                "no {} tables in {} (build them with `dtb gen --variant {} --out {}`)",
                rules.name,
                dir.display(),
                shell_word(&rules.spec()),
                shell_word(&dir.display().to_string())
            );
        }
        let described: Vec<String> = others
            .iter()
            .map(|o| format!("{} ({})", o.name, rules.differences(o)))
            .collect();
        bail!(
            "no {} tables in {}; it holds tables of other rules: {}: pass --variant {}",
            rules.name,
            dir.display(),
            described.join(", "),
            shell_word(&others[0].spec())
        );
    }
    Ok(tb)
}

/// An error naming table directory `dir` where it does not exist, with how to build one:
/// what every command that reads tables says.
pub fn require_dir(dir: &Path) -> Result<()> {
    if !dir.exists() {
        bail!(
            "table directory {} does not exist (build one with `dtb gen --out {}`)",
            dir.display(),
            shell_word(&dir.display().to_string())
        );
    }
    Ok(())
}

/// `word` as one word of a POSIX shell command line: as it is when it holds only characters
/// no shell reads specially (a `--variant` spec, most paths), else in single quotes.
fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-+=,.:/@%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// The rule sets other than `rules` whose tables `dir` holds, from the headers of files named
/// like tables (`NAME-wmwkbmbk.wld` or `.dtw`), one each, in name order.
fn rule_sets_in(dir: &Path, rules: &Rules) -> Vec<Rules> {
    let mut found: Vec<Rules> = Vec::new();
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    names.sort();
    for p in names {
        let Some(name) = p.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some((variant, _)) = name.rsplit_once('-') else {
            continue;
        };
        if variant == rules.name
            || found.iter().any(|r| r.name == variant)
            || dtb_probe::internal::format::parse_file_name(name, variant).is_none()
        {
            continue;
        }
        let mut head = [0u8; dtb_probe::internal::format::HEADER_LEN];
        let read = File::open(&p).and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head));
        if let Some(r) = read
            .ok()
            .and_then(|()| dtb_probe::internal::format::Header::decode(&head).ok())
            .and_then(|h| Rules::decode(&h.rules_code))
        {
            if r.encode() != rules.encode() && !found.iter().any(|f| f.encode() == r.encode()) {
                found.push(r);
            }
        }
    }
    found
}
