//! PDN move parser: arbitrary text against a fixed set of positions (English and
//! International, built once by deterministic pseudo-random play from the start positions,
//! capture positions included). The first input byte picks the position, the rest is the move
//! text. `parse_move` must never panic; a move it returns must be legal there; and every legal
//! move of the position must read back from its own notation (`pdn_in` short form and
//! `to_pdn(true)` full path).
#![no_main]

use std::sync::OnceLock;

use dtb_probe::movegen::{has_capture, legal_moves, parse_move, pdn_in, Counting};
use dtb_probe::{fen, Position, Rules};
use libfuzzer_sys::fuzz_target;

/// The next number of the splitmix64 stream.
fn next(s: &mut u64) -> u64 {
    dtb_probe::internal::rng::splitmix64(s)
}

fn positions() -> &'static [(Rules, Position)] {
    static P: OnceLock<Vec<(Rules, Position)>> = OnceLock::new();
    P.get_or_init(|| {
        let mut out = Vec::new();
        let fixed = [
            (Rules::ENGLISH, "W:W18,K27:B3,K12"),
            (Rules::ENGLISH, "B:WK5,22:B9,K30"),
            (Rules::ENGLISH, "W:W15,K1:BK10,K20,11"),
            (Rules::ENGLISH, "W:W26,27:B23,14"),
            (Rules::ENGLISH, "W:WK32:BK26"),
        ];
        for (rules, f) in fixed {
            out.push((rules, fen::parse(f, &rules).expect("fixed FEN parses")));
        }
        let mut seed = 0x6d6f_7665_u64;
        for rules in [Rules::ENGLISH, Rules::INTERNATIONAL] {
            let mut kept = 0;
            for _game in 0..40 {
                let mut pos = Position::start(&rules);
                for ply in 0..160 {
                    let mut moves = Vec::new();
                    legal_moves(&rules, &pos, Counting::Unique, &mut moves);
                    if moves.is_empty() {
                        break;
                    }
                    if kept < 120
                        && (ply % 11 == 5 || (has_capture(&rules, &pos) && moves.len() > 1))
                    {
                        out.push((rules, pos));
                        kept += 1;
                    }
                    pos = moves[(next(&mut seed) % moves.len() as u64) as usize]
                        .apply(&rules, &pos)
                        .expect("a generated move is legal");
                }
            }
        }
        out
    })
}

fuzz_target!(|data: &[u8]| {
    let all = positions();
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let (rules, pos) = &all[first as usize % all.len()];
    let text = String::from_utf8_lossy(rest);
    let mut moves = Vec::new();
    legal_moves(rules, pos, Counting::Unique, &mut moves);
    if let Ok(m) = parse_move(rules, pos, &text) {
        assert!(
            moves.contains(&m),
            "{}: {text:?} in {} gave a move that is not legal: {m:?}",
            rules.name,
            fen::write(pos)
        );
    }
    for m in &moves {
        for text in [pdn_in(m, &moves), m.to_pdn(true)] {
            let back = parse_move(rules, pos, &text);
            assert_eq!(
                back.as_ref().ok(),
                Some(m),
                "{}: {} does not read back in {}: {back:?}",
                rules.name,
                text,
                fen::write(pos)
            );
        }
    }
});
