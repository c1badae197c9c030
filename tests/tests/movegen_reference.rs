//! Move generation against outside reference data: perft counts (perft.tsv) and complete
//! legal move lists (movegen-cases.tsv).

use dtb_probe::fen;
use dtb_probe::movegen::{legal_moves, perft, Counting};
use dtb_probe::rules::Rules;
use dtb_tests::read_tsv;

fn counting(note: &str) -> Counting {
    if note.starts_with("paths") {
        Counting::Paths
    } else {
        Counting::Unique
    }
}

/// Every perft row of the variants dtb supports, up to `max_nodes` leaves (the rest run in
/// the ignored test below).
fn check_perft(max_nodes: u64, min_nodes: u64) -> usize {
    let mut checked = 0;
    for row in read_tsv("perft.tsv") {
        let Some(rules) = Rules::by_name(&row["variant"]) else {
            continue;
        };
        let nodes: u64 = match row["nodes"].parse() {
            Ok(n) => n,
            Err(_) => continue,
        };
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
        checked += 1;
    }
    checked
}

#[test]
fn perft_matches_reference_rows() {
    let n = check_perft(5_000_000, 0);
    assert!(n >= 18, "only {n} perft rows checked");
}

#[test]
#[ignore = "long: perft rows above 5 million nodes"]
fn perft_matches_reference_rows_long() {
    check_perft(u64::MAX, 5_000_001);
}

#[test]
fn movegen_cases_give_exactly_the_listed_moves() {
    let mut checked = 0;
    for row in read_tsv("movegen-cases.tsv") {
        let Some(rules) = Rules::by_name(&row["variant"]) else {
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
            moves.iter().map(|m| m.to_pdn(true)).collect::<Vec<_>>()
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
                .map(|m| (m.from as u32 + 1, m.to as u32 + 1))
                .collect();
            want.sort();
            got.sort();
            assert_eq!(got, want, "{} {}", rules.name, row["fen"]);
        }
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} cases checked");
}
