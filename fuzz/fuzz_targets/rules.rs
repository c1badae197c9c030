//! `Rules::parse` (the `--variant` text: a preset and `FIELD=VALUE` overrides): any text. A
//! parse must never panic; when it succeeds, the rule set's `spec()` must parse back to the
//! same rules (fields, name and identity), its fields must be listed in words, and a FEN
//! (the first line of the input after the rules text, split at a newline) read under them
//! must carry their identity.
#![no_main]

use dtb_probe::{fen, Rules};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (spec, fen_text) = text.split_once('\n').unwrap_or((&text, "W:W18:B11"));
    let Ok(rules) = Rules::parse(spec) else {
        return;
    };
    let again = Rules::parse(&rules.spec()).unwrap_or_else(|e| {
        panic!(
            "{spec:?} parsed, but its spec {:?} does not: {e}",
            rules.spec()
        )
    });
    assert_eq!(again.encode(), rules.encode(), "{spec:?}");
    assert_eq!(again.name, rules.name, "{spec:?}");
    assert_eq!(again.id(), rules.id(), "{spec:?}");
    assert_eq!(
        rules.named().name,
        rules.name,
        "{spec:?}: not under its canonical name"
    );
    let _ = rules.fields();
    if let Ok(pos) = fen::parse(fen_text, &rules) {
        assert_eq!(pos.rules_id(), rules.id());
        let written = fen::write_customary(&pos, &rules);
        assert_eq!(
            fen::parse(&written, &rules),
            Ok(pos),
            "{spec:?}: {written:?}"
        );
    }
});
