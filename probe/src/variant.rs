//! Rule sets as players write them: a preset and field overrides, in words.
//!
//! `international,capture=optional,blocked=draw` is the International preset with optional
//! capture and a blocked side drawing ([`Rules::parse`]). Every field of [`Rules`] has a name
//! and its values have words ([`FIELDS`]), the terms of `../shared/docs/variants.md`; a rule
//! set that equals a preset is that preset (its name included), any other gets a name derived
//! from its fields alone ([`Rules::derived_name`]), so that tables of different rule sets
//! never share a file name.

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

use crate::count::{CountError, CountProfile};
use crate::fen::clip;
use crate::rules::{
    BlockedOutcome, Color, KingLanding, KingRange, MidCapturePromotion, Numbering, Precedence,
    Removal, Rules,
};

/// One rule field as written in `--variant` overrides and printed by `dtb variants`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    /// The name in `FIELD=VALUE` (`capture`).
    pub key: &'static str,
    /// The row of variants.md's preset table it is (`capture compulsory`).
    pub row: &'static str,
    /// Its values in words, in the order of the field's code in [`Rules::encode`].
    pub values: &'static [&'static str],
}

/// Every rule field, in the order of [`Rules`]' declaration (and of [`Rules::encode`]'s bytes
/// 1-12). Values are lower-case words; `board` is `8` or `10`.
pub const FIELDS: [Field; 12] = [
    Field {
        key: "board",
        row: "board",
        values: &["8", "10"],
    },
    Field {
        key: "first",
        row: "first to move",
        values: &["white", "black"],
    },
    Field {
        key: "men-capture-backward",
        row: "men capture backward",
        values: &["no", "yes"],
    },
    Field {
        key: "kings",
        row: "kings",
        values: &["short", "flying"],
    },
    Field {
        key: "capture",
        row: "capture compulsory",
        values: &["optional", "compulsory"],
    },
    Field {
        key: "precedence",
        row: "which capture (precedence)",
        values: &[
            "free",
            "most-pieces",
            "most-pieces-then-kings",
            "italian",
            "king-first",
        ],
    },
    Field {
        key: "removal",
        row: "captured pieces removed",
        values: &["at-end", "immediately"],
    },
    Field {
        key: "mid-capture-crowning",
        row: "man reaching the far row mid-capture",
        values: &["crown-and-stop", "crown-and-continue", "continue-as-man"],
    },
    Field {
        key: "men-capture-kings",
        row: "men may capture kings",
        values: &["no", "yes"],
    },
    Field {
        key: "king-landing",
        row: "flying king's landing square in a capture",
        values: &["any", "must-continue"],
    },
    Field {
        key: "blocked",
        row: "blocked side to move: pieces, no legal move",
        values: &["loss", "draw", "majority"],
    },
    Field {
        key: "numbering",
        row: "square numbering",
        values: &["standard", "italian", "spanish"],
    },
];

/// Why a `--variant` text is not a rule set. Each message is one line that says what is
/// allowed; the text it quotes is cut to 24 characters (as [`crate::fen::FenError`]'s).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RulesError {
    /// The first item is not a preset's name.
    #[error("unknown variant {name:?}: the presets are {}", presets())]
    UnknownPreset { name: String },
    /// An item is empty (`english,,blocked=draw`, a trailing comma, an empty text).
    #[error(
        "empty item {item} in {spec:?}: write PRESET[,FIELD=VALUE]... (fields: {})",
        keys()
    )]
    EmptyItem { spec: String, item: usize },
    /// An override that is not `FIELD=VALUE`.
    #[error("{item:?} is not FIELD=VALUE (fields: {})", keys())]
    NotFieldValue { item: String },
    /// A field name that is not one of [`FIELDS`].
    #[error("unknown rule field {key:?}: the fields are {}", keys())]
    UnknownField { key: String },
    /// A value that the field does not take.
    #[error("{key}={value}: {key} is one of {}", allowed.join(", "))]
    BadValue {
        key: &'static str,
        value: String,
        allowed: &'static [&'static str],
    },
    /// A field given twice.
    #[error("rule field {key} is given twice (each field at most once)")]
    Repeated { key: &'static str },
    /// Fields that contradict each other (the text says which).
    #[error("{0}")]
    Contradiction(String),
    /// `count=` given to [`Rules::parse`], which reads rule fields only: a count profile is
    /// read with the rules by [`Variant::parse`].
    #[error(
        "count= is a count profile, not a rule field (WLD and DTW values ignore it): read \
         the text with Variant::parse"
    )]
    CountIsNotARule,
    /// A bad `count=` value ([`CountError`]).
    #[error("{0}")]
    Count(#[from] CountError),
}

fn presets() -> String {
    Rules::PRESETS
        .iter()
        .map(|r| r.name)
        .collect::<Vec<_>>()
        .join(", ")
}

fn keys() -> String {
    FIELDS.iter().map(|f| f.key).collect::<Vec<_>>().join(", ")
}

/// The value index of each field of `r` (the field's code in [`Rules::encode`], with the
/// board as 0 for 8 and 1 for 10).
fn indices(r: &Rules) -> [u8; 12] {
    [
        u8::from(r.board == 10),
        r.first_to_move as u8,
        r.men_capture_backward as u8,
        r.kings as u8,
        r.capture_compulsory as u8,
        r.precedence as u8,
        r.removal as u8,
        r.mid_capture_promotion as u8,
        r.men_capture_kings as u8,
        r.king_landing as u8,
        r.blocked as u8,
        r.numbering as u8,
    ]
}

/// Sets field `f` (an index into [`FIELDS`]) of `r` to value index `v` (in range).
fn set(r: &mut Rules, f: usize, v: usize) {
    match f {
        0 => r.board = if v == 1 { 10 } else { 8 },
        1 => r.first_to_move = [Color::White, Color::Black][v],
        2 => r.men_capture_backward = v == 1,
        3 => r.kings = [KingRange::Short, KingRange::Flying][v],
        4 => r.capture_compulsory = v == 1,
        5 => {
            r.precedence = [
                Precedence::Free,
                Precedence::MostPieces,
                Precedence::MostPiecesThenKings,
                Precedence::Italian,
                Precedence::KingFirst,
            ][v]
        }
        6 => r.removal = [Removal::AtEnd, Removal::Immediate][v],
        7 => {
            r.mid_capture_promotion = [
                MidCapturePromotion::CrownAndStop,
                MidCapturePromotion::CrownAndContinue,
                MidCapturePromotion::ContinueAsMan,
            ][v]
        }
        8 => r.men_capture_kings = v == 1,
        9 => r.king_landing = [KingLanding::Any, KingLanding::MustContinue][v],
        10 => {
            r.blocked = [
                BlockedOutcome::Loss,
                BlockedOutcome::Draw,
                BlockedOutcome::Majority,
            ][v]
        }
        _ => r.numbering = [Numbering::Standard, Numbering::Italian, Numbering::Spanish][v],
    }
}

/// Names derived for rule sets that are not presets, each allocated once for the life of the
/// process (at most one per distinct rule set), so that [`Rules::name`] stays `&'static`.
fn intern(name: String) -> &'static str {
    static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut names = NAMES
        .get_or_init(|| Mutex::new(HashSet::new()))
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(&n) = names.get(name.as_str()) {
        return n;
    }
    let n: &'static str = Box::leak(name.into_boxed_str());
    names.insert(n);
    n
}

impl Rules {
    /// The rule set a player writes: a preset's name, then any number of `FIELD=VALUE`
    /// overrides separated by commas (`english,blocked=majority`,
    /// `international,capture=optional,blocked=draw`). Names and values are those of
    /// [`FIELDS`], case-insensitive; each field at most once. A result equal to a preset is
    /// that preset; any other is named by [`Rules::derived_name`].
    ///
    /// # Errors
    /// [`RulesError`]: an unknown preset or field, a value the field does not take, an empty
    /// item, a field given twice, or fields that contradict each other (a 10x10 board with a
    /// mirrored numbering, which is defined for 8x8 only; with short kings, a king landing
    /// rule other than the preset's, where it means nothing).
    pub fn parse(spec: &str) -> Result<Rules, RulesError> {
        let items: Vec<&str> = spec.split(',').map(str::trim).collect();
        if let Some(i) = items.iter().position(|s| s.is_empty()) {
            return Err(RulesError::EmptyItem {
                spec: clip(spec),
                item: i + 1,
            });
        }
        let preset = Rules::by_name(items[0]).ok_or_else(|| RulesError::UnknownPreset {
            name: clip(items[0]),
        })?;
        let mut r = preset;
        let mut given = [false; 12];
        for item in &items[1..] {
            let (key, value) = item
                .split_once('=')
                .map(|(k, v)| (k.trim(), v.trim()))
                .ok_or_else(|| RulesError::NotFieldValue { item: clip(item) })?;
            if key.eq_ignore_ascii_case("count") {
                return Err(RulesError::CountIsNotARule);
            }
            let f = FIELDS
                .iter()
                .position(|f| f.key.eq_ignore_ascii_case(key))
                .ok_or_else(|| RulesError::UnknownField { key: clip(key) })?;
            let field = &FIELDS[f];
            if std::mem::replace(&mut given[f], true) {
                return Err(RulesError::Repeated { key: field.key });
            }
            let v = field
                .values
                .iter()
                .position(|w| w.eq_ignore_ascii_case(value))
                .ok_or_else(|| RulesError::BadValue {
                    key: field.key,
                    value: clip(value),
                    allowed: field.values,
                })?;
            set(&mut r, f, v);
        }
        if r.board != 8 && r.numbering != Numbering::Standard {
            return Err(RulesError::Contradiction(format!(
                "numbering={} is the numbering of an 8x8 board (PDN GameType 22/24), not of \
                 board={}: use numbering=standard",
                r.field_value(11),
                r.board
            )));
        }
        // Restating the preset's own landing rule (`english,king-landing=must-continue`, as
        // `dtb variants` lists it) changes nothing and is accepted; changing it with short
        // kings would name a rule set that plays as the preset.
        if given[9] && r.kings == KingRange::Short && r.king_landing != preset.king_landing {
            return Err(RulesError::Contradiction(format!(
                "king-landing={} has no effect with kings=short: set kings=flying too, or \
                 leave king-landing out",
                r.field_value(9)
            )));
        }
        r.name = "";
        Ok(r.named())
    }

    /// The value of field `f` (an index into [`FIELDS`]) in words.
    fn field_value(&self, f: usize) -> &'static str {
        FIELDS[f].values[indices(self)[f] as usize]
    }

    /// Every field with its value in words, in [`FIELDS`] order:
    /// `[("board", "8"), ("first", "black"), ...]`.
    pub fn fields(&self) -> [(&'static str, &'static str); 12] {
        std::array::from_fn(|f| (FIELDS[f].key, self.field_value(f)))
    }

    /// Whether these rules' fields are those of a preset (whatever the name says).
    pub fn preset(&self) -> Option<Rules> {
        let code = self.encode();
        Rules::PRESETS.iter().copied().find(|p| p.encode() == code)
    }

    /// These rules under their canonical name: a preset's name if the fields are a preset's,
    /// else [`Rules::derived_name`].
    pub fn named(mut self) -> Rules {
        self.name = match self.preset() {
            Some(p) => p.name,
            None => self.derived_name(),
        };
        self
    }

    /// These rules as a `--variant` text that [`Rules::parse`] reads back: the preset they
    /// differ from in the fewest fields, then `,FIELD=VALUE` for each field that differs
    /// (`international,capture=optional,blocked=draw` is written
    /// `international-optional,blocked=draw`).
    pub fn spec(&self) -> String {
        let (base, diff) = self.closest_preset();
        let mut s = base.name.to_string();
        for f in diff {
            s.push_str(&format!(",{}={}", FIELDS[f].key, self.field_value(f)));
        }
        s
    }

    /// The preset these rules differ from in the fewest fields (the first in
    /// [`Rules::PRESETS`] on a tie), and those fields (indices into [`FIELDS`]).
    fn closest_preset(&self) -> (&'static Rules, Vec<usize>) {
        let mine = indices(self);
        Rules::PRESETS
            .iter()
            .map(|p| {
                let theirs = indices(p);
                let diff: Vec<usize> = (0..12).filter(|&f| mine[f] != theirs[f]).collect();
                (p, diff)
            })
            .min_by_key(|(_, d)| d.len())
            .expect("presets exist")
    }

    /// The name of a rule set from its fields alone, for table files and headers (at most 32
    /// printable ASCII bytes, [`crate::format::VARIANT_MAX_LEN`]): the preset it differs from
    /// in the fewest fields (the first in [`Rules::PRESETS`] on a tie), then `+FIELD=VALUE`
    /// for each field that differs, in [`FIELDS`] order (`english+blocked=majority`). When
    /// that is longer than 32 bytes, the preset then `+r` and the rule set's number in 4
    /// hex digits (its fields' value indices as one mixed-radix number; there are 34,560
    /// rule sets): `international-optional+r9a3f`. Distinct rule sets have distinct names
    /// (a `+r` name has no `=`, and each form determines every field), and a preset's own
    /// name has no `+`.
    pub fn derived_name(&self) -> &'static str {
        let mine = indices(self);
        let (base, diff) = self.closest_preset();
        let mut name = base.name.to_string();
        for &f in &diff {
            name.push_str(&format!("+{}={}", FIELDS[f].key, self.field_value(f)));
        }
        if name.len() > crate::format::VARIANT_MAX_LEN {
            let number = FIELDS
                .iter()
                .zip(mine)
                .fold(0u32, |n, (f, v)| n * f.values.len() as u32 + u32::from(v));
            name = format!("{}+r{number:04x}", base.name);
        }
        intern(name)
    }

    /// The rules whose [`Rules::encode`] is `code`, named as [`Rules::named`] does; `None` for
    /// a code no rule set has (another encoding version, a value out of range).
    pub fn decode(code: &[u8; 16]) -> Option<Rules> {
        if code[0] != 2 || code[13..].iter().any(|&b| b != 0) {
            return None;
        }
        let mut r = Rules::ENGLISH;
        let board = match code[1] {
            8 => 0,
            10 => 1,
            _ => return None,
        };
        let mut v = [0usize; 12];
        v[0] = board;
        for f in 1..12 {
            v[f] = code[f + 1] as usize;
        }
        for (f, &x) in v.iter().enumerate() {
            if x >= FIELDS[f].values.len() {
                return None;
            }
            set(&mut r, f, x);
        }
        Some(r.named())
    }

    /// The fields in which `other` differs from these rules, each naming the rule set of
    /// each value, `FIELD: MINE for NAME, THEIRS for OTHER-NAME` (`blocked: loss for
    /// english, majority for english+blocked=majority`), joined by `; `.
    pub fn differences(&self, other: &Rules) -> String {
        let (a, b) = (self.fields(), other.fields());
        a.iter()
            .zip(b)
            .filter(|(x, y)| x.1 != y.1)
            .map(|(x, y)| {
                format!(
                    "{}: {} for {}, {} for {}",
                    x.0, x.1, self.name, y.1, other.name
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// A variant as a player names it: the rules of the game and its move-count rules
/// ([`CountProfile`]), read from one `--variant` text such as `english,count=100` or
/// `international,blocked=draw,count=general:50,sixteen:32,five:10`.
///
/// The profile is beside the rules, not a field of [`Rules`]: WLD and DTW values are
/// game-theoretic and the same under every profile (design.md decision 13), so the rules code
/// that WLD and DTW file headers store ([`Rules::encode`]) leaves the profile out, and a WLD
/// file is read whatever profile a player sets. The profile has a code of its own
/// ([`CountProfile::encode`]) for the DTC files that depend on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Variant {
    /// The rules of movement, capture, crowning and the end of the game.
    pub rules: Rules,
    /// The move-count rules: the preset's ([`CountProfile::for_rules`]) unless `count=`
    /// changes its limits.
    pub count: CountProfile,
}

impl Variant {
    /// A preset's rules with its own count profile.
    pub fn of(rules: Rules) -> Variant {
        Variant {
            rules,
            count: CountProfile::for_rules(&rules),
        }
    }

    /// The text a player writes: what [`Rules::parse`] takes, with at most one
    /// `count=LIMITS` item anywhere after the preset. `LIMITS` is `PLIES` (the general
    /// regime's limit), `REGIME:PLIES` items separated by commas
    /// (`count=general:50,sixteen:32,five:10`: the items after `count=` that are
    /// `REGIME:VALUE`, with no `=`, belong to it), `REGIME:none`, `none` (no count rule), or `mtc` (moves to conversion,
    /// [`CountProfile::MTC`]).
    /// Limits are plies (half-moves; "40 moves each" is 80). The profile changed is that of
    /// the rules' preset (the one [`Rules::spec`] writes first), so a house rule set keeps
    /// its game's count rule.
    ///
    /// # Errors
    /// [`RulesError`]: those of [`Rules::parse`], [`RulesError::Count`] for a bad count
    /// (a regime the profile lacks, a limit that is not a whole number of plies or is 0, a
    /// regime or `count=` given twice).
    pub fn parse(spec: &str) -> Result<Variant, RulesError> {
        let items: Vec<&str> = spec.split(',').map(str::trim).collect();
        if items.iter().any(|s| s.is_empty()) {
            // The rules' parser names the empty item.
            return Rules::parse(spec).map(Variant::of);
        }
        let mut rule_items: Vec<&str> = vec![items[0]];
        let mut count: Option<Vec<&str>> = None;
        let mut in_count = false;
        for item in &items[1..] {
            let key = item.split_once('=').map(|(k, _)| k.trim());
            if key.is_some_and(|k| k.eq_ignore_ascii_case("count")) {
                if count.is_some() {
                    return Err(CountError::Twice.into());
                }
                let value = item.split_once('=').map_or("", |(_, v)| v.trim());
                count = Some(vec![value]);
                in_count = true;
            } else if in_count && key.is_none() && item.contains(':') {
                count.get_or_insert_with(Vec::new).push(item);
            } else {
                in_count = false;
                rule_items.push(item);
            }
        }
        let rules = Rules::parse(&rule_items.join(","))?;
        let mut v = Variant::of(rules);
        if let Some(c) = count {
            let base = v.base_name();
            v.count = v.count.with_limits(&c.join(","), &base)?;
        }
        Ok(v)
    }

    /// The preset [`Rules::spec`] names first.
    fn base_name(&self) -> String {
        let spec = self.rules.spec();
        spec.split(',').next().unwrap_or("").to_string()
    }

    /// This variant as a text [`Variant::parse`] reads back: [`Rules::spec`], then
    /// `,count=LIMITS` with the limits that differ from the preset's profile, if any
    /// (`english,count=100`; `international,count=sixteen:40`).
    pub fn spec(&self) -> String {
        let mut s = self.rules.spec();
        if let Some(t) = self
            .count
            .limits_text(&CountProfile::for_rules(&self.rules))
        {
            s.push_str(",count=");
            s.push_str(&t);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_name_the_rule_set_of_each_value() {
        let majority = Rules::parse("english,blocked=majority").unwrap();
        assert_eq!(
            Rules::ENGLISH.differences(&majority),
            "blocked: loss for english, majority for english+blocked=majority"
        );
        assert_eq!(
            majority.differences(&Rules::ENGLISH),
            "blocked: majority for english+blocked=majority, loss for english"
        );
        assert_eq!(Rules::ENGLISH.differences(&Rules::ENGLISH), "");
    }

    #[test]
    fn overrides_change_the_named_field_only() {
        let r = Rules::parse("english,blocked=majority").unwrap();
        assert_eq!(r.blocked, BlockedOutcome::Majority);
        assert_eq!(
            Rules { name: "", ..r },
            Rules {
                name: "",
                blocked: BlockedOutcome::Majority,
                ..Rules::ENGLISH
            }
        );
        assert_eq!(r.name, "english+blocked=majority");
        let r = Rules::parse("International, Capture=Optional ,blocked=DRAW").unwrap();
        assert!(!r.capture_compulsory);
        assert_eq!(r.blocked, BlockedOutcome::Draw);
        // Closest preset: international-optional, one field away; too long in words.
        assert!(r.name.starts_with("international-optional+r"), "{}", r.name);
        assert!(r.name.len() <= 32);
        // A rule set equal to a preset is the preset.
        assert_eq!(
            Rules::parse("international,capture=optional").unwrap(),
            Rules::INTERNATIONAL_OPTIONAL
        );
        assert_eq!(
            Rules::parse("english,blocked=loss").unwrap(),
            Rules::ENGLISH
        );
        assert_eq!(Rules::parse("russian").unwrap(), Rules::RUSSIAN);
        // The same rules written from two presets get one name.
        let a = Rules::parse("english,blocked=majority").unwrap();
        let b =
            Rules::parse("czech,kings=short,precedence=free,first=black,blocked=majority").unwrap();
        assert_eq!(a, b);
        assert_eq!(a.spec(), "english,blocked=majority");
        let c = Rules::parse("international,capture=optional,blocked=draw").unwrap();
        assert_eq!(c.spec(), "international-optional,blocked=draw");
        assert_eq!(Rules::parse(&c.spec()), Ok(c));
        assert_eq!(Rules::ENGLISH.spec(), "english");
    }

    #[test]
    fn every_field_and_value_round_trips_through_words_and_code() {
        for p in Rules::PRESETS {
            assert_eq!(Rules::decode(&p.encode()), Some(*p));
            // Each field restated with the preset's own value (as `dtb variants` lists it).
            for (key, value) in p.fields() {
                let spec = format!("{},{key}={value}", p.name);
                assert_eq!(Rules::parse(&spec), Ok(*p), "{spec}");
            }
            for (f, field) in FIELDS.iter().enumerate() {
                for v in field.values {
                    let spec = format!("{},{}={v}", p.name, field.key);
                    let Ok(r) = Rules::parse(&spec) else { continue };
                    assert_eq!(r.field_value(f), *v, "{spec}");
                    assert_eq!(Rules::decode(&r.encode()), Some(r), "{spec}");
                    assert!(r.name.len() <= 32 && r.name.bytes().all(|b| b.is_ascii_graphic()));
                    assert_eq!(r.preset().is_some(), !r.name.contains('+'), "{spec}");
                }
            }
        }
    }

    /// Distinct rule sets get distinct names: every rule set (34,560) once.
    #[test]
    fn derived_names_never_collide() {
        let mut seen = std::collections::HashMap::new();
        let total: usize = FIELDS.iter().map(|f| f.values.len()).product();
        assert_eq!(total, 34_560);
        for n in 0..total {
            let mut r = Rules::ENGLISH;
            let mut rest = n;
            for f in (0..12).rev() {
                let k = FIELDS[f].values.len();
                set(&mut r, f, rest % k);
                rest /= k;
            }
            let r = r.named();
            assert!(r.name.len() <= 32, "{}", r.name);
            if let Some(old) = seen.insert(r.name, r.encode()) {
                panic!(
                    "{} names two rule sets: {old:?} and {:?}",
                    r.name,
                    r.encode()
                );
            }
        }
    }

    #[test]
    fn bad_overrides_are_one_clear_error_each() {
        let e = |s: &str| Rules::parse(s).unwrap_err();
        assert_eq!(
            e("english,capture=maybe").to_string(),
            "capture=maybe: capture is one of optional, compulsory"
        );
        assert!(matches!(
            e("english,foo=1"),
            RulesError::UnknownField { .. }
        ));
        assert!(e("english,foo=1")
            .to_string()
            .contains("board, first, men-capture-backward"));
        assert_eq!(
            e("english,blocked=draw,blocked=draw"),
            RulesError::Repeated { key: "blocked" }
        );
        assert_eq!(
            e("english,,blocked=draw"),
            RulesError::EmptyItem {
                spec: "english,,blocked=draw".into(),
                item: 2
            }
        );
        assert!(matches!(
            e("english,"),
            RulesError::EmptyItem { item: 2, .. }
        ));
        assert!(matches!(e(""), RulesError::EmptyItem { item: 1, .. }));
        assert!(matches!(e("chess"), RulesError::UnknownPreset { .. }));
        assert!(matches!(
            e("english,blocked"),
            RulesError::NotFieldValue { .. }
        ));
        assert!(matches!(
            e("international,numbering=italian"),
            RulesError::Contradiction(_)
        ));
        assert!(matches!(
            e("english,king-landing=any"),
            RulesError::Contradiction(_)
        ));
        assert!(Rules::parse("english,kings=flying,king-landing=any").is_ok());
        // The preset's own value, as `dtb variants` lists it, is that preset.
        assert_eq!(
            Rules::parse("english,king-landing=must-continue"),
            Ok(Rules::ENGLISH)
        );
        assert!(matches!(
            e("gracz8,kings=short,king-landing=must-continue"),
            RulesError::Contradiction(_)
        ));
        for s in [
            "english,capture=maybe",
            "english,foo=1",
            "english,,x",
            "english,blocked=draw,blocked=loss",
        ] {
            assert!(!e(s).to_string().contains('\n'));
        }
    }

    #[test]
    fn variants_read_and_write_their_count() {
        let v = Variant::parse("english,count=100").unwrap();
        assert_eq!(v.rules, Rules::ENGLISH);
        assert_eq!(
            v.count
                .limit(v.count.regime(&crate::Material::new(0, 2, 0, 1))),
            Some(100)
        );
        assert_eq!(v.spec(), "english,count=100");
        let v = Variant::parse("international,count=general:50,sixteen:32,five:10").unwrap();
        assert_eq!(v, Variant::of(Rules::INTERNATIONAL));
        assert_eq!(v.spec(), "international");
        // count= anywhere after the preset, with rule fields after its items.
        let v = Variant::parse("international,count=sixteen:40,five:12,blocked=draw").unwrap();
        assert_eq!(v.rules, Rules::parse("international,blocked=draw").unwrap());
        assert_eq!(
            v.spec(),
            "international,blocked=draw,count=five:12,sixteen:40"
        );
        assert_eq!(Variant::parse(&v.spec()), Ok(v));
        let v = Variant::parse("italian,count=80").unwrap();
        assert_eq!(v.spec(), "italian,count=80");
        let v = Variant::parse("english,count=none").unwrap();
        assert!(v.count.is_none());
        assert_eq!(v.spec(), "english,count=none");
        // The rules code, which WLD and DTW headers store, ignores the profile.
        assert_eq!(v.rules.encode(), Rules::ENGLISH.encode());
        // Every preset round-trips, with and without a count.
        for p in Rules::PRESETS {
            let v = Variant::of(*p);
            assert_eq!(Variant::parse(&v.spec()), Ok(v), "{}", p.name);
            let w = Variant::parse(&format!("{},count=general:77", p.name)).unwrap();
            assert_eq!(Variant::parse(&w.spec()), Ok(w), "{}", w.spec());
            assert_ne!(w, v);
            let m = Variant::parse(&format!("{},count=mtc", p.name)).unwrap();
            assert_eq!(m.count, CountProfile::MTC, "{}", p.name);
            assert_eq!(Variant::parse(&m.spec()), Ok(m), "{}", m.spec());
        }
        assert_eq!(
            Variant::parse("russian,count=mtc").unwrap().spec(),
            "russian,count=mtc"
        );
        // The profile follows the rules played: pool's fields changed to Russian's are Russian.
        let v = Variant::parse("pool,first=white,mid-capture-crowning=crown-and-continue").unwrap();
        assert_eq!(v.rules, Rules::RUSSIAN);
        assert_eq!(v.count, CountProfile::RUSSIAN);
    }

    #[test]
    fn bad_counts_are_one_clear_error_each() {
        let e = |s: &str| Variant::parse(s).unwrap_err().to_string();
        assert_eq!(
            e("international,count=six:10"),
            "unknown count regime \"six\": the regimes of international are five, sixteen, general"
        );
        assert_eq!(
            e("english,count=abc"),
            "count limit \"abc\" for general: a limit is a whole number of plies, 1 to 65535, or none"
        );
        assert_eq!(
            e("english,count=0"),
            "count limit 0 for general: a limit is at least 1 ply (0 would draw every position at \
             once); none turns it off"
        );
        assert_eq!(
            e("english,count=sixteen:32"),
            "english's count profile has no regime sixteen (its regimes: general)"
        );
        assert_eq!(
            e("international,count=five:10,five:12"),
            "count regime five is given twice (each regime at most once)"
        );
        assert_eq!(
            e("english,count=80,count=90"),
            "count= is given twice (write every limit in one count=)"
        );
        assert_eq!(e("english,count="), CountError::Empty.to_string());
        // A regime item with no count= before it is not a rule field either.
        assert!(matches!(
            Variant::parse("international,sixteen:32"),
            Err(RulesError::NotFieldValue { .. })
        ));
        assert!(matches!(
            Variant::parse("english,,count=80"),
            Err(RulesError::EmptyItem { item: 2, .. })
        ));
        // The rules alone refuse count=, saying where it goes.
        assert_eq!(
            Rules::parse("english,count=100"),
            Err(RulesError::CountIsNotARule)
        );
    }
}
