//! PDN game files: arbitrary text read by `pdn::games` and every game it yields played by
//! `analyze::analyze` (English, and International when the first byte is odd) against a
//! tablebase without tables, then written back by `analyze::write_pdn`. Nothing may panic;
//! every error names a line of the text; the PDN written reads back with the same moves.
#![no_main]

use dtb_probe::{analyze, pdn, Rules, Tablebase};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let rules = if first % 2 == 0 {
        Rules::ENGLISH
    } else {
        Rules::INTERNATIONAL
    };
    let tb = Tablebase::new(rules);
    let text = String::from_utf8_lossy(rest);
    let lines = text.lines().count().max(1);
    for game in pdn::games(&text).take(64) {
        match game {
            Err(e) => assert!(e.line >= 1 && e.line <= lines + 1, "{e} of {lines} lines"),
            Ok(g) => {
                let a = analyze::analyze(&tb, &g);
                assert!(a.plies.len() <= g.moves.len());
                let written = analyze::write_pdn(&g, &a);
                let back: Vec<_> = pdn::games(&written).collect();
                assert_eq!(back.len(), 1, "{written:?}");
                let back = back[0].as_ref().expect("written PDN reads back");
                let moves = |g: &pdn::Game| -> Vec<String> {
                    g.moves.iter().map(|m| m.text.clone()).collect()
                };
                assert_eq!(moves(back), moves(&g), "{written:?}");
                assert_eq!(back.tags, g.tags);
            }
        }
    }
});
