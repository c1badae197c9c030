//! International draughts (10x10, flying kings, majority capture) tables against the longest
//! wins per material split published in ../shared/data/endgame-facts.tsv.

use std::path::PathBuf;

use dtb_gen::build::{self, Plan, Quiet};
use dtb_probe::{fen, Rules, Tablebase, Wld};

fn shared(name: &str) -> PathBuf {
    match std::env::var_os("DTB_SHARED_DATA") {
        Some(d) => PathBuf::from(d).join(name),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared/data")
            .join(name),
    }
}

#[test]
fn international_longest_wins_match_endgame_facts() {
    let rules = Rules::INTERNATIONAL;
    let dir = tempfile::tempdir().unwrap();
    build::run(&Plan::new(rules, 3, dir.path()).unwrap(), &Quiet).unwrap();
    let tb = Tablebase::open(dir.path(), rules).unwrap();
    let text = std::fs::read_to_string(shared("endgame-facts.tsv")).unwrap();
    let mut checked = 0;
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() < 4 || f[0] != "international" || !f[1].starts_with("W:") {
            continue;
        }
        let Ok(plies) = f[3].parse::<u16>() else {
            continue;
        };
        let pos = fen::parse(f[1], &rules).unwrap();
        if pos.material().pieces() > 3 {
            continue;
        }
        let d = tb.probe_dtw(&pos).unwrap();
        assert_eq!(d.wld, Wld::Win, "{}", f[1]);
        assert_eq!(d.plies, Some(plies), "{}: {}", f[1], f[2]);
        checked += 1;
    }
    // 16 longest-win rows of 2-3 pieces plus "David & Goliath".
    assert_eq!(checked, 17);
}
