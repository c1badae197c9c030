//! Move generation against outside reference data: perft counts (perft.tsv) and complete
//! legal move lists (movegen-cases.tsv), for every preset of variants.md that has rows.
//!
//! Positions and moves are in each variant's own numbering (Italian and Spanish number their
//! mirrored boards). A row of a variant that is neither a preset nor named out of scope below
//! fails the test, so no row is skipped silently.

use std::collections::BTreeMap;

use dtb_probe::fen;
use dtb_probe::internal::rules::Rules;
use dtb_probe::movegen::{legal_moves, perft, Counting};
use dtb_tests::read_tsv;

/// Variants of the reference data that dtb does not implement (issue "Every variant in the
/// rules reference": out of scope for now), and every 6x6 board.
const OUT_OF_SCOPE: &[&str] = &["frisian", "killer", "thai-12men", "turkish", "canadian"];

/// The rules of a row's variant; `None` for an out-of-scope variant; panics on a variant that
/// is neither.
fn rules_of(variant: &str) -> Option<Rules> {
    if OUT_OF_SCOPE.contains(&variant) || variant.ends_with("-6x6") {
        assert_eq!(
            Rules::by_name(variant),
            None,
            "{variant} is out of scope but a preset matches it"
        );
        return None;
    }
    Some(Rules::by_name(variant).unwrap_or_else(|| panic!("no preset for variant {variant:?}")))
}

fn counting(note: &str) -> Counting {
    if note.starts_with("paths") {
        Counting::Paths
    } else {
        Counting::Unique
    }
}

/// Every perft row of the presets with `min_nodes <= nodes <= max_nodes`; the number of rows
/// checked per variant.
fn check_perft(max_nodes: u64, min_nodes: u64) -> BTreeMap<String, usize> {
    let mut checked = BTreeMap::new();
    for row in read_tsv("perft.tsv") {
        let Some(rules) = rules_of(&row["variant"]) else {
            continue;
        };
        let nodes: u64 = row["nodes"]
            .parse()
            .unwrap_or_else(|_| panic!("perft.tsv: nodes {:?}", row["nodes"]));
        if nodes > max_nodes || nodes < min_nodes {
            continue;
        }
        let depth: u32 = row["depth"].parse().unwrap();
        let pos = fen::parse(&row["fen"], &rules).unwrap();
        let got = perft(&rules, &pos, depth, counting(&row["counting_note"]));
        assert_eq!(
            got, nodes,
            "{} perft {} depth {depth} ({})",
            rules.name, row["fen"], row["counting_note"]
        );
        *checked.entry(rules.name.to_string()).or_insert(0) += 1;
    }
    eprintln!("perft rows checked per variant: {checked:?}");
    checked
}

#[test]
fn perft_matches_reference_rows() {
    let checked = check_perft(5_000_000, 0);
    // Every row of perft.tsv for these presets is at most 5 million nodes.
    let want = [
        ("brazilian", 18),
        ("czech", 18),
        ("english", 18),
        ("international", 39),
        ("italian", 39),
        ("pool", 18),
        ("russian", 18),
        ("spanish", 18),
    ];
    for (v, n) in want {
        assert!(
            checked.get(v).copied().unwrap_or(0) >= n,
            "{v}: only {checked:?} rows checked"
        );
    }
}

#[test]
#[ignore = "long: perft rows above 5 million nodes"]
fn perft_matches_reference_rows_long() {
    check_perft(u64::MAX, 5_000_001);
}

#[test]
fn movegen_cases_give_exactly_the_listed_moves() {
    let mut checked: BTreeMap<String, usize> = BTreeMap::new();
    for row in read_tsv("movegen-cases.tsv") {
        let Some(rules) = rules_of(&row["variant"]) else {
            continue;
        };
        let pos = fen::parse(&row["fen"], &rules).unwrap();
        let mut moves = Vec::new();
        legal_moves(&rules, &pos, Counting::Unique, &mut moves);
        let count: usize = row["count"].parse().unwrap();
        assert_eq!(
            moves.len(),
            count,
            "{} {}: {:?}",
            rules.name,
            row["fen"],
            moves
                .iter()
                .map(|m| m.to_pdn_for(&rules, true))
                .collect::<Vec<_>>()
        );
        // Where the row lists the moves in notation, compare them as sets of (from, to).
        let listed = &row["legal_moves"];
        if listed
            .split_whitespace()
            .all(|t| t.contains(['-', 'x']) && t.chars().next().unwrap().is_ascii_digit())
            && !listed.contains('(')
        {
            let mut want: Vec<(u32, u32)> = listed
                .split_whitespace()
                .map(|t| {
                    let sq: Vec<u32> = t.split(['-', 'x']).map(|s| s.parse().unwrap()).collect();
                    (sq[0], *sq.last().unwrap())
                })
                .collect();
            let mut got: Vec<(u32, u32)> = moves
                .iter()
                .map(|m| (rules.square_number(m.from), rules.square_number(m.to)))
                .collect();
            want.sort();
            got.sort();
            assert_eq!(got, want, "{} {}", rules.name, row["fen"]);
        }
        *checked.entry(rules.name.to_string()).or_insert(0) += 1;
    }
    eprintln!("movegen cases checked per variant: {checked:?}");
    assert!(checked.get("international").copied().unwrap_or(0) >= 23);
    assert!(checked.get("italian").copied().unwrap_or(0) >= 18);
}
