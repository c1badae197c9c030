//! DTC tables (issue 35): built, checked by `dtb verify`, their outcomes the game-theoretic
//! ones, and the count rule visible in their values. The comparison with a solver of
//! (position, counter) states is `count_rules.rs`.

use dtb_gen::build::{run, Plan, Quiet, Values};
use dtb_probe::internal::format::ValueKind;
use dtb_probe::{fen, Category, CountProfile, Rules, Tablebase, Wld};

fn build(rules: Rules, count: CountProfile, values: Values, pieces: u32) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temporary directory");
    let plan = Plan::new(rules, pieces, dir.path())
        .expect("valid plan")
        .with_values(values)
        .with_count(count);
    run(&plan, &Quiet).expect("build");
    dir
}

/// English 2-4 under a limit of 20 plies: `dtb verify` finds every DTC code equal to the best
/// over its successors as the count rule combines them; every position's DTC outcome is its
/// WLD value; cursed wins and blessed losses exist, and a cursed win is a draw at every
/// counter but won by the DTW tables; a rule win is won exactly at the counters its distance
/// leaves room for.
#[test]
fn english_dtc_under_a_short_limit() {
    let rules = Rules::ENGLISH;
    let count = CountProfile::ENGLISH
        .with_limits("20", "english")
        .expect("a limit");
    let dtc = build(rules, count, Values::WLD_DTC, 4);
    let reports = dtb_gen::verify::verify_dir(dtc.path(), rules, &|_| {}).expect("verify");
    assert_eq!(reports.len(), 23);
    for r in &reports {
        assert!(r.problems.is_empty(), "{}: {:?}", r.material, r.problems);
    }
    let mut tb = Tablebase::open(dtc.path(), rules).expect("tables");
    tb.set_count_profile(count);
    let dtw_dir = build(rules, CountProfile::ENGLISH, Values::WLD_DTW, 4);
    let dtw = Tablebase::open(dtw_dir.path(), rules).expect("tables");
    let (mut cursed, mut blessed, mut wins) = (0u64, 0u64, 0u64);
    for m in tb.materials(ValueKind::Dtc) {
        let ix = dtb_probe::internal::index::SliceIndex::new(m, rules.geometry());
        for side in [dtb_probe::Color::White, dtb_probe::Color::Black] {
            for i in (0..ix.size()).step_by(7) {
                let pos = ix.unindex(i, side);
                let d = tb.probe_dtc(&pos, 0).expect("probe");
                let w = dtw.probe_dtw(&pos).expect("probe");
                assert_eq!(d.category.game_theoretic(), w.wld, "{}", fen::write(&pos));
                match d.category {
                    Category::CursedWin => {
                        cursed += 1;
                        assert!(d.plies.unwrap() > 20);
                        for c in [0, 10, 19] {
                            assert_eq!(tb.probe_dtc(&pos, c).unwrap().result, Wld::Draw);
                        }
                    }
                    Category::BlessedLoss => blessed += 1,
                    Category::Win => {
                        wins += 1;
                        let p = d.plies.unwrap();
                        assert!(p <= 20);
                        if p > 0 {
                            assert_eq!(tb.probe_dtc(&pos, 20 - p).unwrap().result, Wld::Win);
                            if 20 - p < 19 {
                                let at = tb.probe_dtc(&pos, 21 - p).unwrap();
                                assert_eq!(at.result, Wld::Draw, "{}", fen::write(&pos));
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    assert!(
        cursed > 0 && blessed > 0 && wins > 0,
        "{cursed} {blessed} {wins}"
    );
    // A counter at the limit is refused, not guessed.
    let pos = fen::parse("W:WK32:BK26", &rules).unwrap();
    assert!(matches!(
        tb.probe_dtc(&pos, 20),
        Err(dtb_probe::ProbeError::CounterOutOfRange { limit: 20, .. })
    ));
    // Tables of one profile are refused under another.
    let other = Tablebase::open(dtc.path(), rules).expect("tables");
    assert!(matches!(
        other.probe_dtc(&pos, 0),
        Err(dtb_probe::ProbeError::Mismatch { .. })
    ));
}

/// A DTC build's WLD files are byte for byte those of a version 1 WLD-only build: the
/// outcomes of DTC codes are the game-theoretic ones.
#[test]
fn a_dtc_build_writes_the_game_theoretic_wld_files() {
    for rules in [Rules::ENGLISH, Rules::INTERNATIONAL] {
        let pieces = if rules == Rules::ENGLISH { 4 } else { 3 };
        let dtc = build(
            rules,
            CountProfile::for_rules(&rules),
            Values::WLD_DTC,
            pieces,
        );
        let dir = tempfile::tempdir().unwrap();
        let plan = Plan::new(rules, pieces, dir.path())
            .unwrap()
            .with_values(Values::WLD)
            .with_threats(false);
        run(&plan, &Quiet).unwrap();
        let mut n = 0;
        for e in std::fs::read_dir(dir.path()).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "wld") {
                let other = dtc.path().join(p.file_name().unwrap());
                assert_eq!(
                    std::fs::read(&p).unwrap(),
                    std::fs::read(&other).unwrap(),
                    "{p:?}"
                );
                n += 1;
            }
        }
        assert!(n > 5);
    }
}
