//! The count rules' oracle (issue 35): `common::counted`, a solver of the states (position,
//! counter) themselves, which DTC tables are checked against. Here it is checked first on its
//! own: without a limit it must give the WLD tables' values; with limits its values must be
//! monotone in the counter, game-theoretically sound and colour-symmetric; and one position
//! checked by hand shows a win the limit turns into a draw.
//!
//! Then DTC tables are checked against it: every position of every slice, every counter below
//! the limit, the stored code read through `CountProfile::result_at` must give the oracle's
//! result.
//!
//! The larger runs are ignored (`cargo test --release -p dtb-tests --test count_rules --
//! --ignored`): English 2-4 at the preset's 80 plies, gracz8 2-4, International 2-4.

mod common;

use std::path::Path;
use std::sync::OnceLock;

use common::counted::{solve, Counted};
use dtb_gen::build::{run, Plan, Quiet};
use dtb_gen::values::Values;
use dtb_probe::internal::format::ValueKind;
use dtb_probe::movegen::{legal_moves, Counting};
use dtb_probe::{fen, CountProfile, Rules, Tablebase, Wld};

/// English with its count limit set to `limit` (the text of `count=`).
fn english(limit: &str) -> CountProfile {
    CountProfile::ENGLISH.with_limits(limit, "english").unwrap()
}

/// The oracle without a limit: English 2-3, shared by the tests of this binary.
fn english_none_3() -> &'static Counted {
    static C: OnceLock<Counted> = OnceLock::new();
    C.get_or_init(|| solve(&Rules::ENGLISH, &CountProfile::NONE, 3))
}

/// The oracle of International 2-3 under its preset, shared by the tests of this binary.
fn international_3() -> &'static Counted {
    static C: OnceLock<Counted> = OnceLock::new();
    C.get_or_init(|| solve(&Rules::INTERNATIONAL, &CountProfile::INTERNATIONAL, 3))
}

/// WLD tables of `rules` up to `pieces` pieces, built into `dir`.
fn build_wld(rules: Rules, pieces: u32, dir: &Path) {
    let plan = Plan::new(rules, pieces, dir)
        .expect("valid plan")
        .with_values(Values::WLD);
    run(&plan, &Quiet).expect("build");
}

/// DTC tables of `rules` under `count` up to `pieces` pieces, built into `dir`, and a
/// tablebase reading them under that profile.
fn build_dtc(rules: Rules, count: CountProfile, pieces: u32, dir: &Path) -> Tablebase {
    let plan = Plan::new(rules, pieces, dir)
        .expect("valid plan")
        .with_values(Values::WLD_DTC)
        .with_count(count);
    run(&plan, &Quiet).expect("build");
    let mut tb = Tablebase::open(dir, rules).expect("tables");
    tb.set_count_profile(count);
    tb
}

/// DTC tables built under `count` agree with the oracle at every state up to `pieces`.
fn assert_dtc_tables_agree(rules: Rules, count: CountProfile, pieces: u32) {
    assert_dtc_tables_agree_with(&solve(&rules, &count, pieces), pieces);
}

/// DTC tables built under `oracle`'s rules and profile agree with it up to `pieces`.
fn assert_dtc_tables_agree_with(oracle: &Counted, pieces: u32) {
    let (rules, count) = (*oracle.rules(), *oracle.profile());
    let dir = tempfile::tempdir().unwrap();
    let tb = build_dtc(rules, count, pieces, dir.path());
    oracle.assert_agrees(&rules, &count, |pos| {
        tb.probe_code(pos, ValueKind::Dtc).expect("probe")
    });
}

/// Every position of `oracle` (solved without a limit) has the value the WLD tables in `dir`
/// give it.
fn assert_matches_tables(oracle: &Counted, dir: &Path) {
    let rules = *oracle.rules();
    assert!(oracle.profile().is_none());
    let tb = Tablebase::open(dir, rules).unwrap();
    let mut n = 0u64;
    oracle.for_each_position(|board_pos, limit| {
        assert_eq!(limit, None);
        let pos = board_pos.with_rules(&rules).unwrap();
        let want = tb.probe_wld(&pos).unwrap();
        assert_eq!(
            oracle.value(&pos, 0),
            want,
            "{}: the oracle without a limit against the WLD tables",
            fen::write_for(&pos, &rules)
        );
        n += 1;
    });
    assert!(n > 0);
}

/// What [`assert_invariants`] saw.
#[derive(Debug, Default)]
struct Seen {
    /// Positions won game-theoretically, not under the rule at counter 0.
    cursed: u64,
    /// The most plies a win at counter 0 of a limited regime needs: L + 1 less the number of
    /// counters it is won at (a statistic of the report, not how the oracle works).
    longest_win: usize,
}

/// What must hold of an oracle `c` solved under a limited profile, given `gt`, the oracle of
/// the same rules and pieces without a limit (game-theoretic values), for every position and
/// counter:
/// - monotone: a win at counter k + 1 is a win at k, and a loss at k + 1 a loss at k (less
///   room never helps the winner, nor hurts the loser);
/// - at the limit only a game that is over (no legal move) has a result;
/// - sound: a win (loss) under the rule is a game-theoretic win (loss);
/// - colour-symmetric: a colour-symmetric slice's position and its colour-reversed one have
///   the same values at every counter (the solver stores both sides to move).
///
/// Returns how many positions are won game-theoretically but not at counter 0 (cursed wins),
/// and the longest win under the rule, so that a caller can see the limit at work.
fn assert_invariants(c: &Counted, gt: &Counted) -> Seen {
    let rules = *c.rules();
    let g = rules.geometry();
    let mut moves = Vec::new();
    let mut seen = Seen::default();
    c.for_each_position(|pos, limit| {
        let f = || fen::write_for(pos, &rules);
        let v = c.values_at(pos);
        let game = gt.value(pos, 0);
        match limit {
            Some(l) => assert_eq!(v.len(), l as usize + 1, "{}", f()),
            None => assert_eq!(v.len(), 1, "{}", f()),
        }
        for k in 0..v.len() - 1 {
            if v[k + 1] == Wld::Win {
                assert_eq!(v[k], Wld::Win, "{}: won at counter {} not {k}", f(), k + 1);
            }
            if v[k + 1] == Wld::Loss {
                assert_eq!(
                    v[k],
                    Wld::Loss,
                    "{}: lost at counter {} not {k}",
                    f(),
                    k + 1
                );
            }
        }
        if limit.is_some() && v[v.len() - 1] != Wld::Draw {
            legal_moves(&rules, pos, Counting::Unique, &mut moves);
            assert!(moves.is_empty(), "{}: a result at the limit", f());
        }
        for (k, &w) in v.iter().enumerate() {
            if w != Wld::Draw {
                assert_eq!(w, game, "{} at counter {k}: not the game's value", f());
            }
        }
        if limit.is_some() && v[0] == Wld::Win && v[v.len() - 1] != Wld::Win {
            let won = v.iter().take_while(|&&w| w == Wld::Win).count();
            seen.longest_win = seen.longest_win.max(v.len() - won);
        }
        if game == Wld::Win && v[0] != Wld::Win {
            seen.cursed += 1;
        }
        let m = pos.material();
        if m == m.mirror() {
            let flipped = pos.flipped(g);
            assert_eq!(c.values_at(&flipped), v, "{}: colours reversed", f());
        }
    });
    seen
}

/// Without a limit the oracle is the game-theoretic solver: English 2-4 against the WLD
/// tables (the tables are those `english4` builds for every test binary).
#[test]
fn without_a_limit_the_oracle_gives_the_wld_tables() {
    let oracle = solve(&Rules::ENGLISH, &CountProfile::NONE, 4);
    assert_matches_tables(&oracle, common::english4());
}

/// English 2-3 under limits of 6 and 20 plies: the invariants, and the limit matters (cursed
/// wins at 6, fewer at 20).
#[test]
fn english_values_are_monotone_and_sound() {
    let gt = english_none_3();
    let seen: Vec<Seen> = ["6", "20"]
        .iter()
        .map(|l| assert_invariants(&solve(&Rules::ENGLISH, &english(l), 3), gt))
        .collect();
    assert!(
        seen[0].cursed > seen[1].cursed && seen[0].longest_win == 6,
        "at 6 and 20 plies: {seen:?}"
    );
}

/// A win in 7 plies of king moves is a draw under a limit of 6 plies and a win under 7,
/// and a man move resets the count. Found by searching English 3-piece positions for a win
/// (DTW) just over the limit; the line is the tables' best play.
#[test]
fn a_win_beyond_the_limit_is_a_draw() {
    let rules = Rules::ENGLISH;
    let tb = Tablebase::open(common::english4(), rules).unwrap();
    // Black's kings on 5 and 8 against White's king in the double corner (1): 8-3 1-6 3-7
    // 6-1 7-2 1-6 2x9, the capture on the 7th ply, which Black plays at counter 6. Every
    // move is a king's and only the last captures: nothing resets before it.
    let pos = fen::parse("B:WK1:BK5,K8", &rules).unwrap();
    let dtw = tb.probe_dtw(&pos).unwrap();
    assert_eq!((dtw.wld, dtw.plies), (Wld::Win, Some(7)));
    assert_eq!(english_none_3().value(&pos, 0), Wld::Win);
    let six = solve(&rules, &english("6"), 3);
    for k in 0..=6 {
        assert_eq!(six.value(&pos, k), Wld::Draw, "limit 6, counter {k}");
    }
    let seven = solve(&rules, &english("7"), 3);
    assert_eq!(seven.value(&pos, 0), Wld::Win);
    assert_eq!(seven.value(&pos, 1), Wld::Draw);
    // After 8-3, White to move loses in 6 plies: at counter 1 the capture comes at counter 6,
    // inside a limit of 7; at counter 2 it would come at 7.
    let after = fen::parse("W:WK1:BK3,K5", &rules).unwrap();
    let dtw = tb.probe_dtw(&after).unwrap();
    assert_eq!((dtw.wld, dtw.plies), (Wld::Loss, Some(6)));
    assert_eq!(seven.value(&after, 1), Wld::Loss);
    assert_eq!(seven.value(&after, 2), Wld::Draw);
    // Black's man on 1 and king on 9 against White's king on 2: a win in 11 plies, yet won
    // under a limit of 6 from counter 0, since Black's man moves reset the count.
    let man = fen::parse("B:WK2:B1,K9", &rules).unwrap();
    let dtw = tb.probe_dtw(&man).unwrap();
    assert_eq!((dtw.wld, dtw.plies), (Wld::Win, Some(11)));
    assert_eq!(six.value(&man, 0), Wld::Win);
    // A blocked side to move (White's king on 4 behind Black's kings on 8 and 11) has lost
    // at every counter, the limit and past it included: the end of the game comes first.
    let blocked = fen::parse("W:WK4:BK8,K11", &rules).unwrap();
    let mut moves = Vec::new();
    legal_moves(&rules, &blocked, Counting::Unique, &mut moves);
    assert!(moves.is_empty());
    for k in [0, 5, 6, 100] {
        assert_eq!(six.value(&blocked, k), Wld::Loss, "counter {k}");
    }
    assert_eq!(six.values_at(&blocked), vec![Wld::Loss; 7]);
}

/// International 2-3 under its preset (five and general regimes; in five a crowning or a
/// capture that keeps the regime does not reset): the invariants.
#[test]
fn international_to_three_pieces() {
    let rules = Rules::INTERNATIONAL;
    let gt = solve(&rules, &CountProfile::NONE, 3);
    let seen = assert_invariants(international_3(), &gt);
    eprintln!("international 2-3: {seen:?}");
}

/// English 2-4 under the preset's 80 plies and under 20, against the game-theoretic oracle
/// (itself against the tables).
#[test]
#[ignore]
fn english_to_four_pieces_at_80_plies() {
    let rules = Rules::ENGLISH;
    let gt = solve(&rules, &CountProfile::NONE, 4);
    assert_matches_tables(&gt, common::english4());
    for l in ["20", "80"] {
        let seen = assert_invariants(&solve(&rules, &english(l), 4), &gt);
        eprintln!("english 2-4, {l} plies: {seen:?}");
    }
}

/// gracz8 2-4 under its preset (80 plies), and its game-theoretic oracle against WLD tables.
#[test]
#[ignore]
fn gracz8_to_four_pieces() {
    let rules = Rules::GRACZ8;
    let dir = tempfile::tempdir().unwrap();
    build_wld(rules, 4, dir.path());
    let gt = solve(&rules, &CountProfile::NONE, 4);
    assert_matches_tables(&gt, dir.path());
    let seen = assert_invariants(&solve(&rules, &CountProfile::GRACZ8, 4), &gt);
    eprintln!("gracz8 2-4: {seen:?}");
}

/// International 2-4 under its preset (five, sixteen and general), and its game-theoretic
/// oracle against WLD tables (minutes).
#[test]
#[ignore]
fn international_to_four_pieces() {
    let rules = Rules::INTERNATIONAL;
    let dir = tempfile::tempdir().unwrap();
    build_wld(rules, 4, dir.path());
    let gt = solve(&rules, &CountProfile::NONE, 4);
    assert_matches_tables(&gt, dir.path());
    let seen = assert_invariants(&solve(&rules, &CountProfile::INTERNATIONAL, 4), &gt);
    eprintln!("international 2-4: {seen:?}");
}

/// The checker fails where it should: DTW codes read as DTC codes under a limit of 6 plies
/// call a win beyond the limit a win at counter 0 that the oracle draws, and the message
/// names the position, the counter, both values and the code.
#[test]
fn assert_agrees_finds_a_wrong_code() {
    let rules = Rules::ENGLISH;
    let six = english("6");
    let oracle = solve(&rules, &six, 3);
    let tb = Tablebase::open(common::english4(), rules).unwrap();
    let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        oracle.assert_agrees(&rules, &six, |pos| {
            tb.probe_code(pos, ValueKind::Dtw).unwrap()
        })
    }))
    .expect_err("DTW codes are not DTC codes under a limit");
    let msg = err.downcast_ref::<String>().expect("a message");
    assert!(
        msg.contains("states disagree; the first: ")
            && msg.contains(" at counter ")
            && msg.contains("the oracle says ")
            && msg.contains("Code("),
        "{msg}"
    );
}

/// DTC tables of English 2-3 under limits of 6 and 20 plies agree with the oracle.
#[test]
fn english_dtc_tables_to_three_pieces_agree() {
    for l in ["6", "20"] {
        assert_dtc_tables_agree(Rules::ENGLISH, english(l), 3);
    }
}

/// DTC tables of English 2-4 under a limit of 20 plies agree with the oracle at every
/// counter, and so do the results `Tablebase::probe_dtc` answers (a sample).
#[test]
#[ignore]
fn english_dtc_tables_at_20_plies_agree() {
    let rules = Rules::ENGLISH;
    let count = english("20");
    let dir = tempfile::tempdir().unwrap();
    let tb = build_dtc(rules, count, 4, dir.path());
    let oracle = solve(&rules, &count, 4);
    oracle.assert_agrees(&rules, &count, |pos| {
        tb.probe_code(pos, ValueKind::Dtc).expect("probe")
    });
    let mut n = 0u64;
    oracle.for_each_position(|board_pos, limit| {
        n += 1;
        if !n.is_multiple_of(101) {
            return;
        }
        let pos = board_pos.with_rules(&rules).unwrap();
        let v = oracle.values_at(&pos);
        for c in 0..limit.unwrap() {
            let got = tb.probe_dtc(&pos, c).expect("probe").result;
            assert_eq!(got, v[c as usize], "{} at counter {c}", fen::write(&pos));
        }
    });
}

/// DTC tables of International 2-3 under its preset agree with the oracle.
#[test]
fn international_dtc_tables_to_three_pieces_agree() {
    assert_dtc_tables_agree_with(international_3(), 3);
}

/// MTC tables (`count=mtc`: one general regime, reset by every man move and capture, no
/// limit) of International 2-3, whose own rule has other regimes, agree with the oracle
/// solved under that regime with a limit of 60 plies, above every distance the tables hold:
/// a limit no win or loss reaches changes no value, so the codes read against it give the
/// oracle's result at every counter (which checks each distance exactly).
#[test]
fn international_mtc_tables_to_three_pieces_agree() {
    let rules = Rules::INTERNATIONAL;
    let dir = tempfile::tempdir().unwrap();
    let tb = build_dtc(rules, CountProfile::MTC, 3, dir.path());
    let longest = tb
        .materials(ValueKind::Dtc)
        .into_iter()
        .map(|m| tb.table(m, ValueKind::Dtc).unwrap().header().max_plies)
        .max()
        .unwrap();
    let limited = CountProfile::MTC
        .with_limits("60", "international")
        .unwrap();
    assert!(longest > 0 && longest < 60, "longest MTC {longest}");
    assert_ne!(
        CountProfile::MTC,
        CountProfile::INTERNATIONAL
            .with_limits("none", "international")
            .unwrap()
    );
    solve(&rules, &limited, 3).assert_agrees(&rules, &limited, |pos| {
        tb.probe_code(pos, ValueKind::Dtc).expect("probe")
    });
}

/// DTC tables of English 2-4 under the preset's 80 plies agree with the oracle.
#[test]
#[ignore]
fn english_dtc_tables_at_80_plies_agree() {
    assert_dtc_tables_agree(Rules::ENGLISH, CountProfile::ENGLISH, 4);
}

/// DTC tables of gracz8 2-4 under its preset (80 plies) agree with the oracle.
#[test]
#[ignore]
fn gracz8_dtc_tables_agree() {
    assert_dtc_tables_agree(Rules::GRACZ8, CountProfile::GRACZ8, 4);
}

/// DTC tables of International 2-4 under its preset (five, sixteen, general) agree with the
/// oracle (minutes).
#[test]
#[ignore]
fn international_dtc_tables_to_four_pieces_agree() {
    assert_dtc_tables_agree(Rules::INTERNATIONAL, CountProfile::INTERNATIONAL, 4);
}

/// DTC tables of Russian 2-3 under its preset agree with the oracle: a limited regime
/// (five) beside one without a limit (general), which reads codes against
/// `UNLIMITED_MARK`.
#[test]
fn russian_dtc_tables_to_three_pieces_agree() {
    assert_dtc_tables_agree(Rules::RUSSIAN, CountProfile::RUSSIAN, 3);
}

/// DTC tables of Russian 2-4 (kings-4-5, where only a capture or a crowning resets, and
/// captures from the unlimited general regime into limited ones) and Pool 2-4 (three kings
/// against one, limited, beside an unlimited general regime) agree with the oracle.
#[test]
#[ignore]
fn russian_and_pool_dtc_tables_to_four_pieces_agree() {
    assert_dtc_tables_agree(Rules::RUSSIAN, CountProfile::RUSSIAN, 4);
    assert_dtc_tables_agree(Rules::POOL, CountProfile::POOL, 4);
}
