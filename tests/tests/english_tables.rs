//! English tables against outside reference data: the Checkers Arena totals and sample
//! (`english-4piece-sample.tsv`), the king-v-king slice report and classic positions
//! (`endgame-facts.tsv`), the published placement counts (`position-counts.tsv`), plus the
//! index bijection and the colour symmetry tested as a symmetry of the game.

mod common;

use std::collections::{BTreeSet, HashMap};

use common::{both_sides_materials, english4, english5, materials_with, size, Rng};
use dtb_probe::internal::board::{Geometry, GEOMETRY_10, GEOMETRY_8};
use dtb_probe::internal::format::{table_file_name, ValueKind};
use dtb_probe::internal::index::SliceIndex;
use dtb_probe::internal::value::normalize;
use dtb_probe::movegen::{has_capture, legal_moves, Counting, Move};
use dtb_probe::{fen, Color, Dtw, Material, Position, Rules, Tablebase, Wld};
use dtb_tests::read_tsv;
use rayon::prelude::*;

const E: Rules = Rules::ENGLISH;

/// Published (Checkers Arena, shared/data/README.md): English 2-4 pieces, one side to move,
/// both sides present.
const POSITIONS_2_4: u64 = 6_408_836;
const WINS_2_4: u64 = 2_675_270;
const LOSSES_2_4: u64 = 2_004_797;
const DRAWS_2_4: u64 = 1_728_769;
const LONGEST_WIN_2_4: u16 = 109;

fn tb4() -> Tablebase {
    Tablebase::open(english4(), E).expect("open 4-piece tables")
}

fn wld_slot(w: Wld) -> usize {
    match w {
        Wld::Win => 0,
        Wld::Loss => 1,
        Wld::Draw => 2,
    }
}

fn add3(a: [u64; 3], b: [u64; 3]) -> [u64; 3] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

fn dtw_code(d: Dtw) -> u16 {
    d.plies.map_or(0, |p| p + 1)
}

// ---------------------------------------------------------------------------------------
// 1. Totals
// ---------------------------------------------------------------------------------------

/// The W/L/D counts in the WLD and DTW file headers, summed over the stored sides, are the
/// published White-to-move totals: a canonical asymmetric slice stores White to move (its
/// own) and Black to move (= White to move of its mirror), a symmetric slice White only.
#[test]
fn file_statistics_match_published_totals() {
    let tb = tb4();
    for kind in [ValueKind::Wld, ValueKind::Dtw] {
        let materials = tb.materials(kind);
        assert_eq!(materials.len(), 23, "{kind:?} slices with 2-4 pieces");
        let mut positions = 0u64;
        let mut counts = [0u64; 3];
        let mut longest = 0u16;
        for m in materials {
            assert!(m.white() > 0 && m.black() > 0 && m.pieces() <= 4, "{m}");
            let t = tb.table(m, kind).unwrap();
            let h = t.header();
            let symmetric = m == m.mirror();
            assert_eq!(h.sides, if symmetric { 1 } else { 3 }, "{m} {kind:?} sides");
            assert_eq!(h.positions_per_side, size(m, &GEOMETRY_8), "{m}");
            for side in 0..2 {
                if h.sides & (1 << side) != 0 {
                    positions += h.positions_per_side;
                    counts = add3(counts, h.counts[side]);
                    assert_eq!(
                        h.counts[side].iter().sum::<u64>(),
                        h.positions_per_side,
                        "{m} {kind:?} side {side}: counts cover every position"
                    );
                }
            }
            longest = longest.max(h.max_plies);
        }
        assert_eq!(positions, POSITIONS_2_4, "{kind:?}");
        assert_eq!(counts, [WINS_2_4, LOSSES_2_4, DRAWS_2_4], "{kind:?}");
        if kind == ValueKind::Dtw {
            assert_eq!(
                longest, LONGEST_WIN_2_4,
                "longest distance in any DTW header"
            );
        }
    }
}

/// Every position with 2-4 pieces (both sides present), over every material (canonical and
/// mirrored) through the index: Black to move by `probe_wld`, White to move by `probe_dtw`
/// and `probe_wld` (which must agree). Both give the published totals, and the longest win
/// is 109 plies, in two men against two men.
#[test]
fn probing_every_position_matches_published_totals() {
    let tb = tb4();
    let g = E.geometry();
    let mut black = [0u64; 3];
    let mut white = [0u64; 3];
    let mut longest: Option<(u16, Material)> = None;
    for m in both_sides_materials(4, 12) {
        let ix = SliceIndex::new(m, g);
        let (b, w, lw) = (0..ix.size())
            .into_par_iter()
            .map(|i| {
                let pb = ix.unindex(i, Color::Black);
                let vb = tb
                    .probe_wld(&pb)
                    .unwrap_or_else(|e| panic!("{}: {e}", fen::write(&pb)));
                let pw = ix.unindex(i, Color::White);
                let dw = tb
                    .probe_dtw(&pw)
                    .unwrap_or_else(|e| panic!("{}: {e}", fen::write(&pw)));
                let vw = tb.probe_wld(&pw).unwrap();
                assert_eq!(dw.wld, vw, "{}: DTW and WLD disagree", fen::write(&pw));
                match dw.wld {
                    Wld::Win => assert_eq!(dw.plies.unwrap() % 2, 1, "{}", fen::write(&pw)),
                    Wld::Loss => assert_eq!(dw.plies.unwrap() % 2, 0, "{}", fen::write(&pw)),
                    Wld::Draw => assert_eq!(dw.plies, None, "{}", fen::write(&pw)),
                }
                let mut b = [0u64; 3];
                b[wld_slot(vb)] += 1;
                let mut w = [0u64; 3];
                w[wld_slot(vw)] += 1;
                let lw = if dw.wld == Wld::Win {
                    dw.plies.unwrap()
                } else {
                    0
                };
                (b, w, lw)
            })
            .reduce(
                || ([0; 3], [0; 3], 0),
                |a, b| (add3(a.0, b.0), add3(a.1, b.1), a.2.max(b.2)),
            );
        black = add3(black, b);
        white = add3(white, w);
        if longest.is_none_or(|(l, _)| lw > l) {
            longest = Some((lw, m));
        }
    }
    assert_eq!(black, [WINS_2_4, LOSSES_2_4, DRAWS_2_4], "Black to move");
    assert_eq!(white, [WINS_2_4, LOSSES_2_4, DRAWS_2_4], "White to move");
    let (plies, m) = longest.unwrap();
    assert_eq!(plies, LONGEST_WIN_2_4);
    assert_eq!(
        (m.white_men, m.black_men, m.pieces()),
        (2, 2, 4),
        "longest win in {m}"
    );
}

// ---------------------------------------------------------------------------------------
// 2. The Checkers Arena sample
// ---------------------------------------------------------------------------------------

fn outcome(s: &str) -> Wld {
    match s {
        "win" => Wld::Win,
        "loss" => Wld::Loss,
        "draw" => Wld::Draw,
        other => panic!("outcome {other:?}"),
    }
}

/// (from, to) in PDN numbers of a move list written `19-23 3x12x19 ...`.
fn listed_moves(text: &str) -> BTreeSet<(u32, u32)> {
    text.split_whitespace()
        .map(|t| {
            let sq: Vec<u32> = t
                .split(['-', 'x'])
                .map(|s| s.parse().unwrap_or_else(|_| panic!("move {t:?}")))
                .collect();
            (sq[0], *sq.last().unwrap())
        })
        .collect()
}

fn our_moves(pos: &Position) -> Vec<Move> {
    let mut v = Vec::new();
    legal_moves(&E, pos, Counting::Unique, &mut v);
    v
}

/// Every sample row: outcome (probe_wld), exact plies (probe_dtw), moves = ceil(plies / 2),
/// and the legal moves as a set of (from, to).
#[test]
fn sample_rows_value_distance_and_legal_moves() {
    let tb = tb4();
    let rows = read_tsv("english-4piece-sample.tsv");
    assert_eq!(rows.len(), 100);
    let mut seen = [0usize; 3];
    for row in &rows {
        let f = &row["fen"];
        let pos = fen::parse(f, &E).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert!((2..=4).contains(&pos.material().pieces()), "{f}");
        let want = outcome(&row["outcome"]);
        seen[wld_slot(want)] += 1;
        assert_eq!(tb.probe_wld(&pos).unwrap(), want, "{f} WLD");
        let plies: u16 = row["plies"].parse().unwrap();
        let d = tb.probe_dtw(&pos).unwrap();
        assert_eq!(d.wld, want, "{f} DTW outcome");
        let want_plies = if want == Wld::Draw { None } else { Some(plies) };
        assert_eq!(d.plies, want_plies, "{f} plies");
        let moves_col: u16 = row["moves"].parse().unwrap();
        assert_eq!(
            d.plies.unwrap_or(0).div_ceil(2),
            moves_col,
            "{f} moves column"
        );
        let got: BTreeSet<(u32, u32)> = our_moves(&pos)
            .iter()
            .map(|m| (m.from as u32 + 1, m.to as u32 + 1))
            .collect();
        assert_eq!(got, listed_moves(&row["legal_moves"]), "{f} legal moves");
    }
    assert!(
        seen.iter().all(|&n| n > 20),
        "wins/losses/draws in the sample: {seen:?}"
    );
}

/// Tablebase::best_move on every sample row: the value it reports is the position's, and
/// the move leads to a position one ply closer to the end (a loss in p-1 after a win in p, a
/// win in p-1 after a loss in p), or to a draw from a draw.
#[test]
fn sample_rows_best_move_goes_one_ply_down() {
    let tb = tb4();
    for row in read_tsv("english-4piece-sample.tsv") {
        let f = &row["fen"];
        let pos = fen::parse(f, &E).unwrap();
        let d = tb.probe_dtw(&pos).unwrap();
        let (m, v) = tb
            .best_move(&pos)
            .unwrap()
            .unwrap_or_else(|| panic!("{f}: no best move"));
        assert_eq!(v, d, "{f}: best_move value");
        assert!(our_moves(&pos).contains(&m), "{f}: best move is legal");
        let child = m.apply(&E, &pos).unwrap();
        let dc = tb.probe_dtw(&child).unwrap();
        let c = fen::write(&child);
        match d.wld {
            Wld::Win => {
                assert_eq!(dc.wld, Wld::Loss, "{f} -> {c}");
                assert_eq!(dc.plies.unwrap() + 1, d.plies.unwrap(), "{f} -> {c}");
            }
            Wld::Loss => {
                assert_eq!(dc.wld, Wld::Win, "{f} -> {c}");
                assert_eq!(dc.plies.unwrap() + 1, d.plies.unwrap(), "{f} -> {c}");
            }
            Wld::Draw => assert_eq!(dc, d, "{f} -> {c}"),
        }
    }
}

// ---------------------------------------------------------------------------------------
// 3. Endgame facts
// ---------------------------------------------------------------------------------------

fn english_facts() -> Vec<HashMap<String, String>> {
    read_tsv("endgame-facts.tsv")
        .into_iter()
        .filter(|r| r["variant"] == "english")
        .collect()
}

fn fact_value(rows: &[HashMap<String, String>], key: &str, fact: &str) -> u64 {
    let row = rows
        .iter()
        .find(|r| r["fen_or_material"] == key && r["fact"] == fact)
        .unwrap_or_else(|| panic!("no fact row {key:?} / {fact:?}"));
    row["value"].parse().unwrap()
}

/// An independent solver for one king against one king under the English rules (short kings,
/// compulsory capture, a side without pieces or moves has lost), written from variants.md
/// with its own board: the DTW in plies of (mover's king, other king), both 1-based squares;
/// `None` for a draw.
fn king_v_king_dtw() -> HashMap<(u32, u32), Option<u16>> {
    // Square n (1-based) of 8x8: row (n-1)/4, column 2*((n-1)%4) + 1 on even rows, else + 0.
    let coords = |n: u32| {
        let r = (n - 1) / 4;
        let c = 2 * ((n - 1) % 4) + if r & 1 == 0 { 1 } else { 0 };
        (r as i32, c as i32)
    };
    let square = |r: i32, c: i32| {
        ((0..8).contains(&r) && (0..8).contains(&c) && (r + c) % 2 == 1)
            .then(|| (r * 4 + c / 2 + 1) as u32)
    };
    let dirs = [(-1, -1), (-1, 1), (1, -1), (1, 1)];
    // (captures, quiet moves) of the king on `a` with the other king on `b`.
    let moves = |a: u32, b: u32| {
        let (r, c) = coords(a);
        let mut caps = Vec::new();
        let mut quiet = Vec::new();
        for (dr, dc) in dirs {
            match square(r + dr, c + dc) {
                Some(s) if s == b => {
                    if let Some(l) = square(r + 2 * dr, c + 2 * dc) {
                        caps.push(l);
                    }
                }
                Some(s) => quiet.push(s),
                None => {}
            }
        }
        (caps, quiet)
    };
    let all: Vec<(u32, u32)> = (1..=32)
        .flat_map(|a| (1..=32).map(move |b| (a, b)))
        .filter(|(a, b)| a != b)
        .collect();
    let mut val: HashMap<(u32, u32), Option<u16>> = HashMap::new();
    for &(a, b) in &all {
        let (caps, quiet) = moves(a, b);
        if !caps.is_empty() {
            val.insert((a, b), Some(1)); // the capture takes the last piece
        } else if quiet.is_empty() {
            val.insert((a, b), Some(0)); // blocked
        }
    }
    // Level by level: won in L + 1 if a move reaches a position lost in L; lost in L + 1 if
    // every move reaches a position won in at most L (and one in exactly L).
    for level in 0..200u16 {
        let mut new = Vec::new();
        for &(a, b) in &all {
            if val.contains_key(&(a, b)) {
                continue;
            }
            let kids: Vec<Option<&Option<u16>>> =
                moves(a, b).1.iter().map(|&t| val.get(&(b, t))).collect();
            let lost_in_level = kids.contains(&Some(&Some(level)));
            if level % 2 == 0 && lost_in_level {
                new.push((a, b));
            }
            if level % 2 == 1
                && lost_in_level
                && kids
                    .iter()
                    .all(|k| matches!(k, Some(Some(p)) if p % 2 == 1 && *p <= level))
            {
                new.push((a, b));
            }
        }
        for p in new {
            val.insert(p, Some(level + 1));
        }
    }
    for p in all {
        val.entry(p).or_insert(None);
    }
    val
}

/// The 1 king v 1 king slice report (White to move): 992 positions, 230 wins, 654 draws,
/// 108 losses, 72 wins by an immediate jump, longest win 11 plies. Every position (both sides
/// to move) is compared with the independent solver above, and the totals with the report
/// and the file headers.
///
/// The report's "number of wins of maximal length" is 32; dtb and the independent solver both
/// find 34. The two extra positions are W:WK4:BK29 and W:WK29:BK4 (both kings on the long
/// diagonal; each is its own mirror image under the board's reflection in that diagonal, the
/// other 32 fall in orbits of four). W:WK4:BK29 wins in 11 by 4-8 29-25 8-11 25-21 11-15
/// 21-17 15-18 17-13 18-14 13-9 14x5, and Black has no other move at plies 2 (29-25 only);
/// the row is treated as the report counting symmetry classes differently, and the test
/// asserts 34 with the list.
#[test]
fn king_v_king_slice_report() {
    let rows = english_facts();
    let k = "1 king vs 1 king, White to move";
    let want_total = fact_value(
        &rows,
        "1 king vs 1 king (WK vs BK), White to move",
        "total positions",
    );
    let want = [
        fact_value(&rows, k, "wins"),
        fact_value(&rows, k, "losses"),
        fact_value(&rows, k, "draws"),
    ];
    let want_jump = fact_value(&rows, k, "wins that are an immediate jump");
    let want_longest = fact_value(&rows, k, "longest win (plies)");
    let reported_longest_n = fact_value(&rows, k, "number of wins of maximal length");
    assert_eq!(
        (
            want_total,
            want,
            want_jump,
            want_longest,
            reported_longest_n
        ),
        (992, [230, 108, 654], 72, 11, 32)
    );

    let reference = king_v_king_dtw();
    let tb = tb4();
    let m = Material::new(0, 1, 0, 1);
    let ix = SliceIndex::new(m, E.geometry());
    assert_eq!(ix.size(), want_total);
    let mut counts = [0u64; 3];
    let mut jumps = 0u64;
    let mut captures = 0u64;
    let mut by_len: HashMap<u16, Vec<String>> = HashMap::new();
    for i in 0..ix.size() {
        for side in [Color::White, Color::Black] {
            let p = ix.unindex(i, side);
            let d = tb.probe_dtw(&p).unwrap();
            let sq = |bb: u64| bb.trailing_zeros() + 1;
            let (a, b) = match side {
                Color::White => (sq(p.white()), sq(p.black())),
                Color::Black => (sq(p.black()), sq(p.white())),
            };
            assert_eq!(d.plies, reference[&(a, b)], "{}", fen::write(&p));
            if side == Color::Black {
                continue;
            }
            counts[wld_slot(d.wld)] += 1;
            let capture = has_capture(&E, &p);
            captures += capture as u64;
            if d.wld == Wld::Win {
                by_len
                    .entry(d.plies.unwrap())
                    .or_default()
                    .push(fen::write(&p));
                if capture {
                    jumps += 1;
                    assert_eq!(d.plies, Some(1), "{}: a jump ends the game", fen::write(&p));
                }
            }
        }
    }
    assert_eq!(counts, want);
    assert_eq!(jumps, want_jump);
    assert_eq!(captures, want_jump, "every capture in 1K v 1K wins at once");
    let longest = *by_len.keys().max().unwrap();
    assert_eq!(u64::from(longest), want_longest);
    let mut longest_wins = by_len[&longest].clone();
    longest_wins.sort();
    assert_eq!(longest_wins.len(), 34, "{longest_wins:?}");
    for f in ["W:WK4:BK29", "W:WK29:BK4", "W:WK32:BK20", "W:WK1:BK13"] {
        assert!(longest_wins.iter().any(|w| w == f), "{f}");
    }

    let h = tb.table(m, ValueKind::Wld).unwrap().header().clone();
    assert_eq!(h.counts[0], want, "WLD header counts");
    let h = tb.table(m, ValueKind::Dtw).unwrap().header().clone();
    assert_eq!(h.counts[0], want, "DTW header counts");
    assert_eq!(u64::from(h.max_plies), want_longest, "DTW header max plies");
}

/// "a kings vs b kings (no men)" placement counts, C(32,a) * C(32-a,b), are the sizes of the
/// kings-only slices (both colour orders).
#[test]
fn kings_only_placement_counts() {
    let mut checked = 0;
    for row in english_facts() {
        let key = &row["fen_or_material"];
        let Some(rest) = key.strip_suffix(" kings (no men)") else {
            continue;
        };
        let (a, b) = rest.split_once(" kings vs ").expect("a kings vs b kings");
        let (a, b): (u8, u8) = (a.parse().unwrap(), b.parse().unwrap());
        let want: u64 = row["value"].parse().unwrap();
        assert_eq!(size(Material::new(0, a, 0, b), &GEOMETRY_8), want, "{key}");
        assert_eq!(size(Material::new(0, b, 0, a), &GEOMETRY_8), want, "{key}");
        checked += 1;
    }
    assert_eq!(checked, 20);
}

/// The placement totals of endgame-facts.tsv (A055213 for n = 1..24 pieces, their sum, and
/// the "1..k pieces per side" sums) from slice sizes, summed exactly in u128.
#[test]
fn placement_totals_from_endgame_facts() {
    let g = &GEOMETRY_8;
    let per_n: Vec<u128> = (0..=24)
        .map(|n| {
            materials_with(n, 12)
                .iter()
                .map(|&m| size(m, g) as u128)
                .sum()
        })
        .collect();
    let mut checked = 0;
    for row in english_facts() {
        let key = &row["fen_or_material"];
        let value = &row["value"];
        if let Some(n) = key.strip_suffix(" pieces total (any colour split incl. one side empty)") {
            let n: usize = n.parse().unwrap();
            assert_eq!(per_n[n], value.parse::<u128>().unwrap(), "{key}");
            checked += 1;
        } else if key == "1..24 pieces" {
            let total: u128 = per_n[1..].iter().sum();
            assert_eq!(total, value.parse::<u128>().unwrap(), "{key}");
            checked += 1;
        } else if let Some(k) = key
            .strip_prefix("all slices with 1..")
            .and_then(|s| s.strip_suffix(" pieces per side"))
        {
            let k: u32 = k.parse().unwrap();
            let mut total = 0u128;
            for n in 2..=2 * k {
                for m in materials_with(n, k) {
                    if m.white() >= 1 && m.black() >= 1 {
                        total += size(m, g) as u128;
                    }
                }
            }
            assert_eq!(total, value.parse::<u128>().unwrap(), "{key}");
            checked += 1;
        }
    }
    assert_eq!(checked, 23 + 1 + 2, "rows checked");
}

/// "WIN", "DRAW", "LOSS (for side to move)" of a fact row, if it names a FEN position.
fn fen_fact(row: &HashMap<String, String>) -> Option<(Position, Wld)> {
    let pos = fen::parse(&row["fen_or_material"], &E).ok()?;
    let v = match row["value"].split_whitespace().next()? {
        "WIN" => Wld::Win,
        "DRAW" => Wld::Draw,
        "LOSS" => Wld::Loss,
        _ => return None,
    };
    Some((pos, v))
}

fn check_fen_facts(tb: &Tablebase, min_pieces: u32, max_pieces: u32) -> usize {
    let mut checked = 0;
    for row in english_facts() {
        let Some((pos, want)) = fen_fact(&row) else {
            continue;
        };
        let n = pos.material().pieces();
        if n < min_pieces || n > max_pieces {
            continue;
        }
        let f = &row["fen_or_material"];
        assert_eq!(tb.probe_wld(&pos).unwrap(), want, "{f}: {}", row["fact"]);
        match tb.probe_dtw(&pos) {
            Ok(d) => assert_eq!(d.wld, want, "{f} (DTW)"),
            // 7-piece tables are built WLD only (`dtb gen --wld-only`): no DTW to compare.
            Err(dtb_probe::ProbeError::MissingTable {
                kind: ValueKind::Dtw,
                ..
            }) if n >= 7 => {}
            Err(e) => panic!("{f} (DTW): {e}"),
        }
        checked += 1;
    }
    checked
}

/// Classic positions with 4 pieces or fewer (Lasker's Diagram 88 and First Position, the ACF
/// first position, "first position without").
#[test]
fn fen_facts_up_to_four_pieces() {
    assert_eq!(check_fen_facts(&tb4(), 2, 4), 6);
    // The literature's winning move in Diagram 88: 32-27 ("taking the move").
    let tb = tb4();
    let pos = fen::parse("W:WK32:BK26", &E).unwrap();
    let (m, _) = tb.best_move(&pos).unwrap().unwrap();
    assert_eq!(m.to_pdn(false), "32-27");
}

/// The 5-piece classic positions (3 kings v 2 kings, Banks' problem).
#[test]
#[ignore = "long: needs 5-piece tables (builds them, minutes)"]
fn fen_facts_five_pieces() {
    let tb = Tablebase::open(english5(), E).unwrap();
    assert_eq!(check_fen_facts(&tb, 5, 5), 3);
    // Everything up to 4 pieces still agrees with the 5-piece directory.
    assert_eq!(check_fen_facts(&tb, 2, 4), 6);

    // Qualitative (Lasker): "the three Kings will always win when handled right", the
    // weaker side's best defence being the two double corners. Every 3K v 2K position with
    // White (three kings) to move, one black king in each double corner (1 or 5; 28 or 32)
    // and no capture for either side at once, is a win for White.
    let ix = SliceIndex::new(Material::new(0, 3, 0, 2), E.geometry());
    let (top, bottom) = (common::squares(&[1, 5]), common::squares(&[28, 32]));
    let positions: Vec<Position> = (0..ix.size())
        .map(|i| ix.unindex(i, Color::White))
        .filter(|p| {
            p.black() & top != 0
                && p.black() & bottom != 0
                && !has_capture(&E, p)
                && !has_capture(&E, &p.with_side_to_move(Color::Black))
        })
        .collect();
    assert!(positions.len() > 10_000, "{}", positions.len());
    positions.par_iter().for_each(|p| {
        assert_eq!(tb.probe_wld(p).unwrap(), Wld::Win, "{}", fen::write(p));
    });
}

/// The 7-piece rows (Banks: Black to play and draw; the Fourth Position, both sides to move)
/// need 7-piece tables, which are far beyond a test build: point DTB_ENGLISH7_DIR at a
/// directory holding them.
#[test]
#[ignore = "long: needs 7-piece tables (set DTB_ENGLISH7_DIR)"]
fn fen_facts_seven_pieces() {
    let tb = tables_named_by("DTB_ENGLISH7_DIR", "English 2-7 piece tables");
    assert_eq!(check_fen_facts(&tb, 6, 7), 3);
}

/// The 8-piece rows (Bowen's Twins, both sides to move: slice 2213, stored as 1322) need
/// 8-piece tables: point DTB_ENGLISH8_DIR at a directory holding the 2-7 tables and the
/// 8-piece slices those positions reach (`dtb gen --slice 2213 --with-deps` over the 2-7
/// tables builds them: 0404, 0413, 0422, 1313 and 1322).
#[test]
#[ignore = "long: needs 8-piece tables (set DTB_ENGLISH8_DIR)"]
fn fen_facts_eight_pieces() {
    let tb = tables_named_by("DTB_ENGLISH8_DIR", "English 8-piece tables");
    assert_eq!(check_fen_facts(&tb, 8, 8), 2);
}

/// The English tables in the directory environment variable `var` names (`what` they must
/// be, for the message where it is not set).
fn tables_named_by(var: &str, what: &str) -> Tablebase {
    let dir =
        std::env::var_os(var).unwrap_or_else(|| panic!("set {var} to a directory with {what}"));
    Tablebase::open(dir, E).unwrap()
}

/// Qualitative fact (Lasker, Diagram 88 text): two kings force the win against a king in a
/// double corner. Every 2K v 1K position, White (the two kings) to move, with the black king
/// on a double-corner square (1, 5, 28, 32) and no capture available to either side at once,
/// is a win for White.
#[test]
fn two_kings_beat_a_king_in_the_double_corner() {
    let tb = tb4();
    let ix = SliceIndex::new(Material::new(0, 2, 0, 1), E.geometry());
    let corners = common::squares(&[1, 5, 28, 32]);
    let mut checked = 0;
    for i in 0..ix.size() {
        let p = ix.unindex(i, Color::White);
        if p.black() & corners == 0
            || has_capture(&E, &p)
            || has_capture(&E, &p.with_side_to_move(Color::Black))
        {
            continue;
        }
        assert_eq!(tb.probe_wld(&p).unwrap(), Wld::Win, "{}", fen::write(&p));
        checked += 1;
    }
    assert!(checked > 1000, "{checked}");
}

// ---------------------------------------------------------------------------------------
// 4. Position counts
// ---------------------------------------------------------------------------------------

/// position-counts.tsv: for 8x8 and 10x10, 1..=8 pieces, the sum of slice sizes over every
/// material (one side possibly empty) and over those with both sides present.
#[test]
fn position_counts_match_reference() {
    let mut checked = 0;
    for row in read_tsv("position-counts.tsv") {
        let (g, max_side): (&'static Geometry, u32) = match row["board"].as_str() {
            "8x8" => (&GEOMETRY_8, 12),
            "10x10" => (&GEOMETRY_10, 20),
            b => panic!("board {b}"),
        };
        let n: u32 = row["pieces"].parse().unwrap();
        let mut all = 0u64;
        let mut both = 0u64;
        for m in materials_with(n, max_side) {
            let s = size(m, g);
            all += s;
            if m.white() > 0 && m.black() > 0 {
                both += s;
            }
        }
        let want_all: u64 = row["configurations"].parse().unwrap();
        let want_both: u64 = row["configurations_both_sides_present"].parse().unwrap();
        assert_eq!(all, want_all, "{} {n} pieces", row["board"]);
        assert_eq!(both, want_both, "{} {n} pieces, both sides", row["board"]);
        checked += 1;
    }
    assert_eq!(checked, 16);
}

// ---------------------------------------------------------------------------------------
// 5. Index round trip
// ---------------------------------------------------------------------------------------

/// The checks of one index: unindex gives a legal position of the slice (Position::new
/// accepts it, its material is the slice's) and index gives the index back.
fn round_trip(rules: &Rules, ix: &SliceIndex, i: u64) {
    let m = ix.material();
    for side in [Color::White, Color::Black] {
        let p = ix.unindex(i, side);
        assert_eq!(p.side_to_move(), side);
        let checked = Position::new(rules, p.white(), p.black(), p.kings(), side)
            .unwrap_or_else(|e| panic!("{m} index {i}: illegal position {}: {e}", fen::write(&p)));
        assert_eq!(checked, p);
        assert_eq!(p.material(), m, "{m} index {i}: {}", fen::write(&p));
        assert_eq!(ix.index(&p), i, "{m}: {}", fen::write(&p));
    }
}

/// Every index of every English slice with 1..=4 pieces (both colours, one side possibly
/// empty): 7,361,090 positions, the sum of the published counts.
#[test]
fn index_round_trip_english_exhaustive_up_to_four_pieces() {
    let g = E.geometry();
    let mut total = 0u64;
    for n in 1..=4 {
        for m in materials_with(n, 12) {
            let ix = SliceIndex::new(m, g);
            (0..ix.size())
                .into_par_iter()
                .for_each(|i| round_trip(&E, &ix, i));
            total += ix.size();
        }
    }
    assert_eq!(total, 120 + 6972 + 261_224 + 7_092_774);
}

fn sampled_round_trip(rules: &Rules, pieces: std::ops::RangeInclusive<u32>, per_slice: u64) {
    let g = rules.geometry();
    let max_side = rules.max_pieces_per_side();
    let mut slices = 0;
    for n in pieces {
        let ms = materials_with(n, max_side);
        slices += ms.len();
        ms.par_iter().for_each(|&m| {
            let ix = SliceIndex::new(m, g);
            let s = ix.size();
            let seed = u64::from(m.white_men)
                | u64::from(m.white_kings) << 8
                | u64::from(m.black_men) << 16
                | u64::from(m.black_kings) << 24
                | u64::from(g.size) << 32;
            let mut rng = Rng(seed);
            round_trip(rules, &ix, 0);
            round_trip(rules, &ix, s - 1);
            for _ in 0..per_slice.min(s) {
                round_trip(rules, &ix, rng.below(s));
            }
        });
    }
    assert!(slices > 100, "{slices} slices");
}

/// A deterministic sample of 20,000 indices (plus the first and last) of every 8x8 slice with
/// 5..=8 pieces.
#[test]
fn index_round_trip_sampled_8x8_five_to_eight_pieces() {
    sampled_round_trip(&Rules::ENGLISH, 5..=8, 20_000);
}

/// The same on every 10x10 slice with 1..=6 pieces.
#[test]
fn index_round_trip_sampled_10x10_up_to_six_pieces() {
    sampled_round_trip(&Rules::INTERNATIONAL, 1..=6, 20_000);
}

// ---------------------------------------------------------------------------------------
// 6. Colour symmetry, as a symmetry of the game
// ---------------------------------------------------------------------------------------

/// A deterministic sample of positions with 2-4 pieces, both sides present, both sides to
/// move, every material (canonical and mirrored): every `step`-th index.
fn sample_positions(step: u64) -> Vec<Position> {
    let g = E.geometry();
    let mut v = Vec::new();
    for m in both_sides_materials(4, 12) {
        let ix = SliceIndex::new(m, g);
        let mut i = u64::from(m.white_men + 3 * m.black_kings) % step;
        while i < ix.size() {
            let side = if i & 1 == 0 {
                Color::White
            } else {
                Color::Black
            };
            v.push(ix.unindex(i, side));
            i += step;
        }
    }
    v
}

/// probe_dtw(P) == probe_dtw(P flipped) (and the same for WLD and the best move's value).
#[test]
fn colour_flip_keeps_the_value() {
    let tb = tb4();
    let g = E.geometry();
    let sample = sample_positions(97);
    assert!(sample.len() > 60_000, "{}", sample.len());
    sample.par_iter().for_each(|p| {
        let q = p.flipped(g);
        assert_eq!(q.flipped(g), *p);
        assert_eq!(q.material(), p.material().mirror());
        let f = fen::write(p);
        assert_eq!(tb.probe_dtw(p).unwrap(), tb.probe_dtw(&q).unwrap(), "{f}");
        assert_eq!(tb.probe_wld(p).unwrap(), tb.probe_wld(&q).unwrap(), "{f}");
    });
}

fn rotate_move(g: &Geometry, m: &Move) -> (u8, u8, u64, bool) {
    let r = |s: u8| g.squares - 1 - s;
    (r(m.from), r(m.to), g.rotate(m.captured), m.crowned)
}

/// The legal moves of the flipped position are the rotated moves of the position (same
/// captures, same crownings): the move generator treats the colours alike.
#[test]
fn colour_flip_rotates_the_legal_moves() {
    let g = E.geometry();
    let sample = sample_positions(31);
    sample.par_iter().for_each(|p| {
        let q = p.flipped(g);
        let mut a: Vec<_> = our_moves(p).iter().map(|m| rotate_move(g, m)).collect();
        let mut b: Vec<_> = our_moves(&q)
            .iter()
            .map(|m| (m.from, m.to, m.captured, m.crowned))
            .collect();
        a.sort();
        b.sort();
        assert_eq!(a, b, "{}", fen::write(p));
        for m in our_moves(p) {
            let child = m.apply(&E, p).unwrap().flipped(g);
            assert!(
                our_moves(&q)
                    .iter()
                    .any(|n| n.apply(&E, &q).unwrap() == child),
                "{}: {}",
                fen::write(p),
                m.to_pdn(true)
            );
        }
    });
}

/// The solver run on the other colour: every mirrored slice (whose values the files never
/// store: they are read through the flipped position) and both sides of every symmetric
/// slice are solved again by `dtb_gen::solve::solve_slice`, on their own board, against the
/// tables for the slices they lead to (read from the DTW files into a generator store). Each value must equal the stored value of the flipped
/// position (probed, for capture positions whose stored value is "don't care"), and the
/// counts must equal the header counts of the other side.
#[test]
fn colour_symmetry_of_the_solved_values() {
    let tb = tb4();
    let g = E.geometry();
    let mut src = dtb_gen::store::Store::new(E);
    for m in Material::solve_order(4, 12) {
        let name = table_file_name("english", m, ValueKind::Dtw);
        src.load_dtw_file(m, &english4().join(name))
            .unwrap_or_else(|e| panic!("loading {m}: {e}"));
    }
    let mut solved = 0u64;
    let mut sym_total = 0u64;
    for m in both_sides_materials(4, 12) {
        let symmetric = m == m.mirror();
        if m.is_canonical() && !symmetric {
            continue;
        }
        let canon = m.mirror();
        if symmetric {
            sym_total += size(m, g);
        }
        let s = dtb_gen::solve::solve_slice(&E, &src, m, &|_| {})
            .unwrap_or_else(|e| panic!("solving {m}: {e}"));
        let ix = SliceIndex::new(m, g);
        let cix = SliceIndex::new(canon, g);
        let table = tb.table(canon, ValueKind::Dtw).unwrap();
        let h = table.header();
        if symmetric {
            assert_eq!(
                s.counts[0], s.counts[1],
                "{m}: both sides of a symmetric slice"
            );
        }
        for side in 0..2 {
            // The flipped position has the other side to move; a symmetric slice stores
            // White only, where the flip of Black-to-move lands.
            let other = 1 - side;
            if h.sides & (1 << other) != 0 {
                assert_eq!(s.counts[side], h.counts[other], "{m} side {side} counts");
            }
            let color = if side == 0 {
                Color::White
            } else {
                Color::Black
            };
            (0..ix.size()).into_par_iter().for_each(|i| {
                let p = ix.unindex(i, color);
                let q = p.flipped(g);
                let got = s.values[side][i as usize].bits();
                let want = if s.is_capture(side, i) || h.sides & (1 << other) == 0 {
                    dtw_code(tb.probe_dtw(&q).unwrap())
                } else {
                    table.stored_code(other, cix.index(&q)).unwrap()
                };
                assert_eq!(
                    got,
                    want,
                    "{m}: {} (flipped {})",
                    fen::write(&p),
                    fen::write(&q)
                );
                // normalize() sends both to the same stored cell.
                assert_eq!(normalize(&E, &p), normalize(&E, &q));
            });
            solved += ix.size();
        }
    }
    // Mirrored slices and symmetric ones, both sides: as many positions as the files store,
    // plus the symmetric slices' Black-to-move side.
    assert_eq!(solved, POSITIONS_2_4 + sym_total);
}

/// The tiny table set checked in for dtb-probe's doc examples (`probe/tests/data/english-2`,
/// which dtb-probe cannot build itself: it never depends on dtb-gen) is exactly what a fresh
/// English 2-piece build writes: the same file names, every file byte for byte.
#[test]
fn checked_in_tables_are_a_fresh_build() {
    let checked_in =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../probe/tests/data/english-2");
    let fresh = tempfile::tempdir().expect("temporary directory");
    let plan = dtb_gen::build::Plan::new(E, 2, fresh.path()).expect("valid plan");
    dtb_gen::build::run(&plan, &dtb_gen::build::Quiet).expect("English 2-piece build");
    // The DTC files beside them (the WLD files are kept).
    let dtc = dtb_gen::build::Plan::new(E, 2, fresh.path())
        .expect("valid plan")
        .with_values(dtb_gen::build::Values::WLD_DTC);
    dtb_gen::build::run(&dtc, &dtb_gen::build::Quiet).expect("English 2-piece DTC build");
    let tables = |dir: &std::path::Path| -> BTreeSet<String> {
        std::fs::read_dir(dir)
            .expect("list directory")
            .map(|e| {
                e.expect("directory entry")
                    .file_name()
                    .into_string()
                    .unwrap()
            })
            .filter(|n| n.ends_with(".wld") || n.ends_with(".dtw"))
            .collect()
    };
    let names = tables(fresh.path());
    assert_eq!(names.len(), 6, "3 slices, WLD and DTW: {names:?}");
    assert_eq!(tables(&checked_in), names);
    for name in &names {
        let want = std::fs::read(fresh.path().join(name)).expect("fresh file");
        let have = std::fs::read(checked_in.join(name)).expect("checked-in file");
        assert!(
            have == want,
            "{name} differs from a fresh build: regenerate probe/tests/data/english-2 \
             (its README.md says how)"
        );
    }
}
