//! PDN FEN parser: any text, English and International rules. A parse must never panic; when
//! it succeeds, `fen::write` of the position must parse back to the same position and write
//! the same text again, and generating and playing the position's legal moves must not panic.
#![no_main]

use dtb_probe::movegen::{legal_moves, Counting};
use dtb_probe::{fen, Rules};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for rules in [Rules::ENGLISH, Rules::INTERNATIONAL] {
        let Ok(pos) = fen::parse(&text, &rules) else {
            continue;
        };
        let written = fen::write(&pos);
        let again = fen::parse(&written, &rules).unwrap_or_else(|e| {
            panic!(
                "{}: {text:?} parsed, but its written form {written:?} does not: {e}",
                rules.name
            )
        });
        assert_eq!(
            again, pos,
            "{}: {text:?} -> {written:?} -> another position",
            rules.name
        );
        assert_eq!(
            fen::write(&again),
            written,
            "{}: writing is not stable",
            rules.name
        );
        let mut moves = Vec::new();
        legal_moves(&rules, &pos, Counting::Unique, &mut moves);
        for m in &moves {
            m.apply(&rules, &pos).expect("a generated move is legal");
        }
    }
});
