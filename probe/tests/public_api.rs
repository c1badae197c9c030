//! The engine API names only what it exports (issue 33): every type in a public signature of
//! an item reachable from the crate root without `dtb_probe::internal` (the root's items, the
//! `fen` and `movegen` modules' items, their fields and methods) is itself reachable so.
//!
//! One test builds and reads a rule set of its own with root paths alone (this file names
//! nothing under `internal`), matching every field's enum without a wildcard; another reads
//! the crate's sources and fails when a public, not `#[doc(hidden)]` signature of an exported
//! item names a type of the crate that is not exported; a third holds that reading to a
//! small crate with a leak in each place one can hide.

use std::collections::{BTreeMap, BTreeSet};

use dtb_probe::{
    fen, movegen, BlockedOutcome, Color, Field, KingLanding, KingRange, MidCapturePromotion,
    Numbering, Position, Precedence, ProbeError, Removal, Rules, RulesId, Tablebase, FIELDS,
};

/// The words `Rules::fields` writes for each field, worked out here from the field enums by
/// exhaustive matches: a new variant of any of them fails to compile until it is added.
fn words(r: &Rules) -> [&'static str; 12] {
    [
        match r.board {
            8 => "8",
            10 => "10",
            _ => unreachable!("boards are 8 or 10"),
        },
        match r.first_to_move {
            Color::White => "white",
            Color::Black => "black",
        },
        if r.men_capture_backward { "yes" } else { "no" },
        match r.kings {
            KingRange::Short => "short",
            KingRange::Flying => "flying",
        },
        if r.capture_compulsory {
            "compulsory"
        } else {
            "optional"
        },
        match r.precedence {
            Precedence::Free => "free",
            Precedence::MostPieces => "most-pieces",
            Precedence::MostPiecesThenKings => "most-pieces-then-kings",
            Precedence::Italian => "italian",
            Precedence::KingFirst => "king-first",
        },
        match r.removal {
            Removal::AtEnd => "at-end",
            Removal::Immediate => "immediately",
        },
        match r.mid_capture_promotion {
            MidCapturePromotion::CrownAndStop => "crown-and-stop",
            MidCapturePromotion::CrownAndContinue => "crown-and-continue",
            MidCapturePromotion::ContinueAsMan => "continue-as-man",
        },
        if r.men_capture_kings { "yes" } else { "no" },
        match r.king_landing {
            KingLanding::Any => "any",
            KingLanding::MustContinue => "must-continue",
        },
        match r.blocked {
            BlockedOutcome::Loss => "loss",
            BlockedOutcome::Draw => "draw",
            BlockedOutcome::Majority => "majority",
        },
        match r.numbering {
            Numbering::Standard => "standard",
            Numbering::Italian => "italian",
            Numbering::Spanish => "spanish",
        },
    ]
}

/// An engine builds a rule set of its own from root types only, and everything the API says
/// about it (its words, its name, its identity, positions checked against it, a tablebase's
/// refusal of them) is reached the same way.
#[test]
fn a_custom_rule_set_is_built_and_read_with_root_types_only() {
    // Every field named, each of its type from the root: Russian rules but short kings that
    // must capture first, a blocked side with more material winning, and the Italian
    // numbering.
    let custom = Rules {
        name: "",
        board: 8,
        first_to_move: Color::White,
        men_capture_backward: true,
        kings: KingRange::Short,
        capture_compulsory: true,
        precedence: Precedence::KingFirst,
        removal: Removal::AtEnd,
        mid_capture_promotion: MidCapturePromotion::CrownAndContinue,
        men_capture_kings: true,
        king_landing: KingLanding::MustContinue,
        blocked: BlockedOutcome::Majority,
        numbering: Numbering::Italian,
    }
    .named();
    assert_eq!(custom.preset(), None);
    assert_eq!(
        words(&custom),
        [
            "8",
            "white",
            "yes",
            "short",
            "compulsory",
            "king-first",
            "at-end",
            "crown-and-continue",
            "yes",
            "must-continue",
            "majority",
            "italian"
        ]
    );

    // FIELDS (of the root type Field) names each field and the words it takes, and agrees
    // with the matches above for every preset and the custom rule set.
    let fields: &[Field; 12] = &FIELDS;
    let keys: Vec<&str> = fields.iter().map(|f: &Field| f.key).collect();
    assert_eq!(
        keys,
        [
            "board",
            "first",
            "men-capture-backward",
            "kings",
            "capture",
            "precedence",
            "removal",
            "mid-capture-crowning",
            "men-capture-kings",
            "king-landing",
            "blocked",
            "numbering"
        ]
    );
    assert_eq!(fields[3].row, "kings");
    assert_eq!(fields[10].values, ["loss", "draw", "majority"]);
    for r in Rules::PRESETS.iter().chain([&custom]) {
        let ours = words(r);
        for (f, (key, value)) in r.fields().into_iter().enumerate() {
            assert_eq!((key, value), (fields[f].key, ours[f]), "{}", r.name);
            assert!(fields[f].values.contains(&value), "{key}={value}");
        }
    }

    // The text form reads back to the same rules, and the derived name is stable.
    let spec = custom.spec();
    assert_eq!(
        spec,
        "russian,kings=short,precedence=king-first,blocked=majority,numbering=italian"
    );
    let parsed = Rules::parse(&spec).expect("spec reads back");
    assert_eq!(parsed, custom);
    assert_eq!(Rules::parse(&spec).unwrap().name, custom.name);
    assert_ne!(custom.name, "russian");

    // RulesId: what a position carries, named from the root.
    let id: RulesId = custom.id();
    assert!(!id.is_board_only());
    assert_eq!(id.board(), 8);
    assert_ne!(id, Rules::RUSSIAN.id());
    assert_eq!(RulesId::board_only(8).board(), 8);
    assert!(RulesId::board_only(8).is_board_only());
    let rules_id: fn(&Position) -> RulesId = Position::rules_id;

    // The Italian numbering: square 1 is a8, the top-left corner of the mirrored board, which
    // is the internal (standard) board's top-right square, internal 3.
    assert_eq!(custom.square_of_number(1), Some(3));
    assert_eq!(custom.square_number(3), 1);
    assert_eq!(Rules::RUSSIAN.square_of_number(1), Some(0));

    // A position of the custom rules: White's man on 32 (h1, internal 28), Black's king on 1
    // (a8, internal 3), Black to move. It carries their identity, and its moves are the
    // custom rules' moves.
    let pos = fen::parse("B:W32:BK1", &custom).expect("legal");
    assert_eq!(pos.white(), 1 << 28);
    assert_eq!(pos.black(), 1 << 3);
    assert_eq!(pos.kings(), 1 << 3);
    assert_eq!(rules_id(&pos), id);
    assert_eq!(pos.side_to_move(), Color::Black);
    let mut moves = Vec::new();
    movegen::legal_moves(&custom, &pos, movegen::Counting::Unique, &mut moves);
    // A short king in a corner square has one diagonal: one move.
    assert_eq!(moves.len(), 1, "{moves:?}");
    assert_eq!((moves[0].from, moves[0].to), (3, 7));
    assert_eq!(moves[0].to_pdn_for(&custom, false), "1-5");
    assert_eq!(fen::write_for(&pos, &custom), "B:W32:BK1");

    // A tablebase of other rules refuses it, by name.
    let tb = Tablebase::new(Rules::RUSSIAN);
    match tb.probe_wld(&pos) {
        Err(ProbeError::VariantMismatch {
            position,
            tablebase,
        }) => {
            assert_eq!(tablebase, "russian");
            assert_eq!(position, "another rule set");
        }
        other => panic!("expected a variant mismatch, got {other:?}"),
    }
    // The same pieces checked against Russian rules are a position it accepts (and, with no
    // tables, answers with a missing table, not a mismatch).
    let russian = pos.with_rules(&Rules::RUSSIAN).expect("legal there too");
    assert_eq!(russian.rules_id(), Rules::RUSSIAN.id());
    assert!(matches!(
        tb.probe_wld(&russian),
        Err(ProbeError::MissingTable { pieces: 2, .. })
    ));
}

// ---------------------------------------------------------------------------------------
// The source scan.
//
// It reads the crate's `src/*.rs` as rustfmt lays them out (`cargo fmt --check` holds them
// so): top-level items start at column 0 and a multi-line one ends with a `}` or `]` at
// column 0; the items of an `impl` and the fields and variants of a type are indented by 4.
// Comments and the contents of string and character literals are removed first. What it
// cannot read (an exported trait, type alias or nested public module, an exported name
// defined twice) fails the test with a message, so that it is extended rather than fooled.

/// A top-level (or, inside a block, 4-space indented) item: its attributes and its lines.
#[derive(Debug)]
struct Item {
    attrs: String,
    lines: Vec<String>,
}

impl Item {
    fn header(&self) -> &str {
        &self.lines[0]
    }
    fn hidden(&self) -> bool {
        hidden(&self.attrs)
    }
    fn test_only(&self) -> bool {
        self.attrs.contains("cfg(test)")
    }
}

fn hidden(attrs: &str) -> bool {
    attrs.replace(' ', "").contains("doc(hidden)")
}

/// The source without comments and with the contents of string and character literals
/// removed (`"..."` becomes `""`), line breaks kept.
fn clean(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    while i < c.len() {
        let ch = c[i];
        let next = c.get(i + 1).copied();
        if ch == '/' && next == Some('/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && next == Some('*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if c[i] == '\n' {
                        out.push('\n');
                    }
                    i += 1;
                }
            }
        } else if ch == 'r'
            && (i == 0 || !ident(c[i - 1]))
            && matches!(next, Some('"') | Some('#'))
            && {
                let mut j = i + 1;
                while c.get(j) == Some(&'#') {
                    j += 1;
                }
                c.get(j) == Some(&'"')
            }
        {
            // A raw string: r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while c[j] == '#' {
                hashes += 1;
                j += 1;
            }
            j += 1;
            loop {
                if c[j] == '"' && (0..hashes).all(|h| c.get(j + 1 + h) == Some(&'#')) {
                    break;
                }
                if c[j] == '\n' {
                    out.push('\n');
                }
                j += 1;
            }
            out.push_str("\"\"");
            i = j + 1 + hashes;
        } else if ch == '"' {
            let mut j = i + 1;
            while c[j] != '"' {
                if c[j] == '\\' {
                    j += 1;
                }
                if c[j] == '\n' {
                    out.push('\n');
                }
                j += 1;
            }
            out.push_str("\"\"");
            i = j + 1;
        } else if ch == '\'' && next == Some('\\') {
            // An escaped character literal: '\n', '\'', '\u{..}'.
            let mut j = i + 2;
            while c[j] != '\'' || j == i + 2 {
                j += 1;
            }
            out.push_str("' '");
            i = j + 1;
        } else if ch == '\'' && c.get(i + 2) == Some(&'\'') {
            out.push_str("' '");
            i += 3;
        } else {
            out.push(ch);
            i += 1;
        }
    }
    out
}

fn indent(l: &str) -> usize {
    l.len() - l.trim_start().len()
}

/// The balance of `[` over `]` in `s`.
fn brackets(s: &str) -> i32 {
    s.chars()
        .map(|c| match c {
            '[' => 1,
            ']' => -1,
            _ => 0,
        })
        .sum()
}

/// The items at indentation `at` in `lines` (a file: 0; a block's body: 4), each with the
/// attributes above it; lines indented deeper belong to the item above them.
fn items(lines: &[String], at: usize) -> Vec<Item> {
    let mut out = Vec::new();
    let mut attrs = String::new();
    let mut i = 0;
    while i < lines.len() {
        let l = &lines[i];
        if l.trim().is_empty() || indent(l) != at {
            i += 1;
            continue;
        }
        let t = l.trim();
        if t.starts_with("#![") {
            // An inner attribute: of the enclosing file or block, not of an item.
            let mut depth = brackets(t);
            while depth > 0 {
                i += 1;
                depth += brackets(&lines[i]);
            }
            i += 1;
            continue;
        }
        if t.starts_with("#[") {
            let mut depth = brackets(t);
            attrs.push_str(t);
            while depth > 0 {
                i += 1;
                depth += brackets(&lines[i]);
                attrs.push_str(lines[i].trim());
            }
            i += 1;
            continue;
        }
        let start = i;
        let ends_here = |s: &str| {
            let s = s.trim_end();
            s.ends_with(';') || s.ends_with('}') || s.ends_with("},") || s.ends_with(',')
        };
        if !ends_here(t) {
            // The item's last line: a `}` or `]` at its indentation, or a `)` that ends it
            // (`),` after a variant's fields; not `) -> T {` after a function's arguments).
            i += 1;
            while i < lines.len() {
                let m = &lines[i];
                let mt = m.trim();
                if indent(m) == at
                    && (mt.starts_with('}')
                        || mt.starts_with(']')
                        || (mt.starts_with(')') && ends_here(mt)))
                {
                    break;
                }
                i += 1;
            }
        }
        let end = i.min(lines.len() - 1);
        out.push(Item {
            attrs: std::mem::take(&mut attrs),
            lines: lines[start..=end].to_vec(),
        });
        i = end + 1;
    }
    out
}

/// The words of `text` that start with a capital letter (the names of types, variants,
/// constants).
fn capitals(text: &str) -> Vec<&str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| w.starts_with(|c: char| c.is_ascii_uppercase()))
        .collect()
}

/// `text` without its attributes (`#[...]`, brackets balanced).
fn strip_attrs(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("#[") {
        out.push_str(&rest[..at]);
        let mut depth = 0;
        let mut end = rest.len();
        for (k, ch) in rest[at + 1..].char_indices() {
            match ch {
                '[' => depth += 1,
                ']' => {
                    depth -= 1;
                    if depth == 0 {
                        end = at + 1 + k + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// The text inside parentheses or braces (of an enum body: the variants' payloads, not their
/// names).
fn nested(text: &str) -> String {
    let mut depth = 0;
    let mut inner = String::new();
    for ch in text.chars() {
        match ch {
            '(' | '{' => {
                depth += 1;
                inner.push(' ');
            }
            ')' | '}' => {
                depth -= 1;
                inner.push(' ');
            }
            _ if depth > 0 => inner.push(ch),
            _ => inner.push(' '),
        }
    }
    inner
}

/// Which kind of item a header declares, and its name: `("struct", "Rules")`.
fn declares(header: &str) -> Option<(&'static str, &str)> {
    let mut h = header.trim_start();
    // Visibility and qualifiers before the keyword.
    for prefix in ["pub(crate) ", "pub(super) ", "pub ", "const ", "unsafe "] {
        if let Some(rest) = h.strip_prefix(prefix) {
            if prefix.starts_with("pub") || rest.starts_with("fn ") || rest.starts_with("unsafe ") {
                h = rest;
            }
        }
    }
    let kinds = [
        "struct", "enum", "union", "trait", "type", "fn", "const", "static", "mod",
    ];
    let kind = kinds
        .into_iter()
        .find(|k| h.starts_with(&format!("{k} ")))?;
    let rest = &h[kind.len() + 1..];
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    Some((kind, &rest[..end]))
}

/// Whether a header is public to the crate's users (`pub`, not `pub(crate)`).
fn is_pub(header: &str) -> bool {
    header.trim_start().starts_with("pub ")
}

/// The signature of a `fn` item: its text up to the body's `{` (or the whole, if none).
fn fn_signature(item: &Item) -> String {
    let text = item.lines.join(" ");
    match text.find('{') {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// The type of a `const` or `static`: its text up to `=`.
fn const_signature(item: &Item) -> String {
    let text = item.lines.join(" ");
    match text.find('=') {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// The self type's name of an `impl` header and whether it is a trait impl.
fn impl_target(item: &Item) -> Option<(String, bool)> {
    let text = item.lines.join(" ");
    let header = text[..text.find('{').unwrap_or(text.len())].trim();
    let rest = header.strip_prefix("impl")?;
    // Skip the impl's generics.
    let rest = if rest.starts_with('<') {
        let mut depth = 0;
        let mut end = 0;
        for (k, ch) in rest.char_indices() {
            match ch {
                '<' => depth += 1,
                '>' => {
                    depth -= 1;
                    if depth == 0 {
                        end = k + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        &rest[end..]
    } else {
        rest
    };
    let (target, is_trait) = match rest.find(" for ") {
        Some(at) => (&rest[at + 5..], true),
        None => (rest, false),
    };
    let target = target.split('<').next()?.trim();
    let name = target.rsplit("::").next()?.trim_start_matches('&').trim();
    Some((name.to_string(), is_trait))
}

/// What the scan found: each leak as `"item: Type"`, and the items whose signatures it read.
#[derive(Debug, Default)]
struct Scan {
    leaks: BTreeSet<String>,
    checked: BTreeSet<String>,
    exported: BTreeSet<String>,
}

/// Scans a crate given as `file name -> source` (`lib.rs` the root; `pub mod m;` is `m.rs`).
fn scan(files: &BTreeMap<String, String>) -> Scan {
    let parsed: BTreeMap<&str, Vec<Item>> = files
        .iter()
        .map(|(name, src)| {
            let lines: Vec<String> = clean(src).lines().map(String::from).collect();
            (name.as_str(), items(&lines, 0))
        })
        .collect();

    // Every type the crate defines, by name.
    let mut defined = BTreeSet::new();
    for its in parsed.values() {
        for it in its.iter().filter(|it| !it.test_only()) {
            if let Some((kind, name)) = declares(it.header()) {
                if matches!(kind, "struct" | "enum" | "union" | "trait" | "type") {
                    defined.insert(name.to_string());
                }
            }
        }
    }

    // What is exported: the root's `pub use`s and public items, and the public items of its
    // public, not hidden modules (each as: path shown, defining file, name).
    let mut exported: Vec<(String, Option<&str>, String)> = Vec::new();
    let root = &parsed["lib.rs"];
    let mut modules = vec![("lib.rs".to_string(), String::new())];
    for it in root {
        if let Some(("mod", m)) = declares(it.header()) {
            if is_pub(it.header()) && !it.hidden() && it.header().trim_end().ends_with(';') {
                modules.push((format!("{m}.rs"), format!("{m}::")));
            }
        }
    }
    for (file, prefix) in &modules {
        let Some(its) = parsed.get(file.as_str()) else {
            panic!("public module file {file} not found");
        };
        for it in its {
            let h = it.header();
            if !is_pub(h) || it.hidden() || it.test_only() {
                continue;
            }
            let t = h.trim_start();
            if let Some(list) = t.strip_prefix("pub use ") {
                let text = std::iter::once(list.to_string())
                    .chain(it.lines[1..].iter().cloned())
                    .collect::<Vec<_>>()
                    .join(" ");
                let text = text.trim().trim_end_matches(';');
                let (base, names) = match text.find('{') {
                    Some(at) => (&text[..at], &text[at + 1..text.rfind('}').unwrap()]),
                    None => {
                        let at = text.rfind("::").map_or(0, |a| a + 2);
                        (&text[..at], &text[at..])
                    }
                };
                assert!(!names.contains('{'), "nested `pub use` braces: {text}");
                for n in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                    let (orig, shown) = match n.split_once(" as ") {
                        Some((o, s)) => (o.trim(), s.trim()),
                        None => (n, n),
                    };
                    let orig = orig.rsplit("::").next().unwrap();
                    if orig == "self" {
                        panic!("`pub use {base}{{self}}` re-exports a module: extend this test");
                    }
                    exported.push((format!("{prefix}{shown}"), None, orig.to_string()));
                }
                continue;
            }
            match declares(h) {
                Some(("mod", m)) => {
                    assert!(
                        file == "lib.rs",
                        "public module {m} inside {file}: extend this test"
                    );
                }
                Some((_, name)) => {
                    exported.push((format!("{prefix}{name}"), Some(file.as_str()), name.into()))
                }
                None => panic!("{file}: public item not understood: {h}"),
            }
        }
    }

    let mut out = Scan::default();
    let exported_types: BTreeSet<String> = exported.iter().map(|e| e.2.clone()).collect();
    out.exported = exported.iter().map(|e| e.0.clone()).collect();
    let check = |out: &mut Scan, what: String, text: &str| {
        for w in capitals(text) {
            if defined.contains(w) && !exported_types.contains(w) {
                out.leaks.insert(format!("{what}: {w}"));
            }
        }
        out.checked.insert(what);
    };

    for (shown, file, name) in &exported {
        // The definition: in its file, or (a re-export) the one item of that name anywhere.
        let defs: Vec<(&str, &Item)> = parsed
            .iter()
            .filter(|(f, _)| file.is_none_or(|file| file == **f))
            .flat_map(|(f, its)| its.iter().map(move |it| (*f, it)))
            .filter(|(_, it)| !it.test_only())
            .filter(|(_, it)| {
                declares(it.header()).is_some_and(|(k, n)| n == name && k != "mod")
                    && is_pub(it.header())
            })
            .collect();
        assert_eq!(
            defs.len(),
            1,
            "{shown}: expected one public definition of {name}, found {}",
            defs.len()
        );
        let (_, def) = defs[0];
        let (kind, _) = declares(def.header()).unwrap();
        match kind {
            "fn" => check(&mut out, shown.clone(), &fn_signature(def)),
            "const" | "static" => check(&mut out, shown.clone(), &const_signature(def)),
            "struct" => {
                let h = def.header();
                if let (Some(open), false) = (h.find('('), h.contains('{')) {
                    // A tuple struct: its public fields.
                    let inner = &h[open + 1..h.rfind(')').unwrap()];
                    for (k, f) in inner.split(',').enumerate() {
                        if let Some(ty) = f.trim().strip_prefix("pub ") {
                            check(&mut out, format!("{shown}.{k}"), ty);
                        }
                    }
                } else if def.lines.len() > 1 {
                    let body = &def.lines[1..def.lines.len() - 1];
                    for field in items(body, 4) {
                        let f = field.header().trim();
                        if field.hidden() || !f.starts_with("pub ") {
                            continue;
                        }
                        let text = field.lines.join(" ");
                        let (fname, ty) = text.trim()["pub ".len()..]
                            .split_once(':')
                            .expect("a field");
                        check(&mut out, format!("{shown}.{}", fname.trim()), ty);
                    }
                }
                out.checked.insert(shown.clone());
            }
            "enum" => {
                let body = def.lines[1..def.lines.len().max(2) - 1].join("\n");
                let payloads = nested(&strip_attrs(&body));
                check(&mut out, format!("{shown} (a variant)"), &payloads);
                out.checked.insert(shown.clone());
            }
            other => panic!("{shown} is a {other}: this test reads structs, enums, fns, consts"),
        }
        if !matches!(kind, "struct" | "enum") {
            continue;
        }
        // Its impls, in any file.
        for its in parsed.values() {
            for imp in its {
                if !imp.header().starts_with("impl") || imp.hidden() || imp.test_only() {
                    continue;
                }
                let Some((target, is_trait)) = impl_target(imp) else {
                    continue;
                };
                if &target != name {
                    continue;
                }
                if is_trait {
                    let text = imp.lines.join(" ");
                    let header = &text[..text.find('{').unwrap_or(text.len())];
                    check(&mut out, format!("{shown} ({})", header.trim()), header);
                    continue;
                }
                if imp.lines.len() < 2 {
                    continue;
                }
                let body = &imp.lines[1..imp.lines.len() - 1];
                for m in items(body, 4) {
                    if m.hidden() || !is_pub(m.header()) {
                        continue;
                    }
                    match declares(m.header()) {
                        Some(("fn", n)) => {
                            check(&mut out, format!("{shown}::{n}"), &fn_signature(&m))
                        }
                        Some(("const", n)) => {
                            check(&mut out, format!("{shown}::{n}"), &const_signature(&m))
                        }
                        _ => panic!("{shown}: impl item not understood: {}", m.header()),
                    }
                }
            }
        }
    }
    out
}

fn crate_sources() -> BTreeMap<String, String> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
    std::fs::read_dir(dir)
        .expect("src/")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).expect("readable"))
        })
        .collect()
}

/// No public, not hidden signature of an exported item names a type of the crate that only
/// `dtb_probe::internal` reaches.
#[test]
fn exported_signatures_name_only_exported_types() {
    let scan = scan(&crate_sources());
    assert_eq!(
        scan.leaks,
        BTreeSet::new(),
        "signatures naming internal types"
    );

    // The scan read what it should: the exported names, with Rules' field types among them.
    for name in [
        "Tablebase",
        "Position",
        "Rules",
        "RulesId",
        "KingRange",
        "Precedence",
        "Removal",
        "MidCapturePromotion",
        "KingLanding",
        "BlockedOutcome",
        "Numbering",
        "Field",
        "FIELDS",
        "report",
        "fen::parse",
        "fen::FenError",
        "movegen::legal_moves",
        "movegen::Counting",
    ] {
        assert!(scan.exported.contains(name), "{name} is not exported");
    }
    assert!(!scan.exported.iter().any(|e| e.starts_with("internal")));
    // ... and the signatures: fields, methods, free functions, constants.
    for sig in [
        "Rules.kings",
        "Rules.blocked",
        "Rules.numbering",
        "Rules::ENGLISH",
        "Rules::id",
        "Rules::parse",
        "Position::rules_id",
        "Tablebase::probe_wld",
        "Tablebase::materials",
        "Dtw.plies",
        "RankedMove.mv",
        "Field.values",
        "FIELDS",
        "fen::parse",
        "movegen::Move::apply",
        "movegen::perft",
        "report",
    ] {
        assert!(scan.checked.contains(sig), "{sig} was not read");
    }
    // Hidden items are internal, not read: Tablebase::table hands out a TableFile.
    for hidden in [
        "Tablebase::table",
        "Rules::geometry",
        "Position::flipped",
        "Dtw::code",
    ] {
        assert!(!scan.checked.contains(hidden), "{hidden} was read");
    }
    assert!(
        scan.checked.len() > 100,
        "{} signatures",
        scan.checked.len()
    );
}

/// The scan finds a leak in each place one can hide, and passes over hidden and private items.
#[test]
fn the_scan_finds_leaks_in_fields_methods_variants_and_functions() {
    let lib = r#"
//! A crate.
pub mod api;
#[doc(hidden)]
pub mod internal;
mod inner;

pub use inner::{Open, Tuple as Renamed};
#[doc(hidden)]
pub use inner::Secret;

/// A function.
pub fn free(x: &Open) -> inner::Secret {
    todo!("{}", "Secret")
}
"#;
    let inner = r#"
use crate::api::Shown;

/// Open.
#[derive(Debug)]
pub struct Open {
    /// Leaks.
    pub secret: Secret,
    /// Private: fine.
    hidden: Vec<Secret>,
    /// Hidden: fine.
    #[doc(hidden)]
    pub raw: Secret,
    /// Fine.
    pub shown: Option<Shown>,
}

/// A tuple.
pub struct Tuple(pub Secret, Secret);

/// Secret.
pub struct Secret;

/// Another.
pub(crate) enum Private {
    A,
}

impl Open {
    /// Leaks in an argument.
    pub fn put(&mut self, s: Secret) {
        let _ = '{';
        let _ = "}";
    }

    /// Hidden.
    #[doc(hidden)]
    pub fn get(&self) -> &Secret {
        &self.secret
    }

    /// Private.
    fn private(&self) -> Private {
        Private::A
    }

    /// Fine.
    pub fn shown(
        &self,
        other: &Shown,
    ) -> Option<&'static str> {
        None
    }
}

impl From<Secret> for Open {
    fn from(s: Secret) -> Open {
        todo!()
    }
}

#[cfg(test)]
mod tests {
    pub fn test_helper(s: super::Secret) {}
}
"#;
    let api = r#"
/// Shown.
pub enum Shown {
    /// Fine.
    Secret,
    /// Leaks.
    Wrapped(#[from] Secret),
    /// Leaks.
    Named { inner: crate::inner::Private },
    /// Fine.
    #[allow(dead_code)]
    Plain { n: u32 },
}

/// Hidden.
#[doc(hidden)]
pub fn hidden(s: Secret) {}

/// Leaks.
pub const ALL: [Secret; 2] = [Secret, Secret];
"#;
    let files: BTreeMap<String, String> = [("lib.rs", lib), ("inner.rs", inner), ("api.rs", api)]
        .into_iter()
        .map(|(n, s)| (n.to_string(), s.to_string()))
        .chain([("internal.rs".to_string(), String::new())])
        .collect();
    let scan = scan(&files);
    let leaks: Vec<&str> = scan.leaks.iter().map(String::as_str).collect();
    assert_eq!(
        leaks,
        [
            "Open (impl From<Secret> for Open): Secret",
            "Open.secret: Secret",
            "Open::put: Secret",
            "Renamed.0: Secret",
            "api::ALL: Secret",
            "api::Shown (a variant): Private",
            "api::Shown (a variant): Secret",
            "free: Secret",
        ]
    );
    let exported: Vec<&str> = scan.exported.iter().map(String::as_str).collect();
    assert_eq!(
        exported,
        ["Open", "Renamed", "api::ALL", "api::Shown", "free"]
    );
    assert!(scan.checked.contains("Open::shown"));
    assert!(scan.checked.contains("Open.shown"));
    assert!(!scan.checked.contains("Open::get"));
    assert!(!scan.checked.contains("Open.raw"));
    assert!(!scan.checked.contains("Open::private"));
}
