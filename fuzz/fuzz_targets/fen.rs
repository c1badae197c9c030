//! PDN FEN parser: any text, under every preset's rules (numbers of the standard and the
//! mirrored boards, algebraic squares of 8x8 and 10x10, PDN tags, trailing move counters). A
//! parse must never panic; when it succeeds, the position must carry its rules' identity, and
//! each written form (`fen::write_for`, `fen::write_algebraic`, `fen::write_customary`) must
//! parse back to the same position and write the same text again; generating and playing
//! the position's legal moves must not panic.
#![no_main]

use dtb_probe::movegen::{legal_moves, Counting};
use dtb_probe::{fen, Rules};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for rules in Rules::PRESETS {
        let Ok(pos) = fen::parse(&text, rules) else {
            continue;
        };
        assert_eq!(pos.rules_id(), rules.id(), "{}: {text:?}", rules.name);
        let writers: [(&str, fn(&dtb_probe::Position, &Rules) -> String); 3] = [
            ("numbers", fen::write_for),
            ("algebraic", fen::write_algebraic),
            ("customary", fen::write_customary),
        ];
        for (how, write) in writers {
            let written = write(&pos, rules);
            let again = fen::parse(&written, rules).unwrap_or_else(|e| {
                panic!(
                    "{} {how}: {text:?} parsed, but its written form {written:?} does not: {e}",
                    rules.name
                )
            });
            assert_eq!(
                again, pos,
                "{} {how}: {text:?} -> {written:?} -> another position",
                rules.name
            );
            assert_eq!(
                write(&again, rules),
                written,
                "{} {how}: writing is not stable",
                rules.name
            );
        }
        let mut moves = Vec::new();
        legal_moves(rules, &pos, Counting::Unique, &mut moves);
        for m in &moves {
            m.apply(rules, &pos).expect("a generated move is legal");
        }
    }
});
