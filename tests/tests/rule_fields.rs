//! One test per field of [`Rules`]: a position where that field changes the legal moves (or,
//! for the two fields that do not touch move generation, what they do change), with the exact
//! moves for both settings. The other setting is the preset with only that field flipped.
//!
//! Moves are written in full-path PDN in the variant's own numbering and sorted. Positions are
//! read in the numbering of the rules they are given (Italian and Spanish number their mirrored
//! boards, variants.md).

use dtb_probe::fen;
use dtb_probe::internal::rules::{
    BlockedOutcome, Color, KingLanding, KingRange, MidCapturePromotion, Numbering, Precedence,
    Removal, Rules,
};
use dtb_probe::internal::value::{self, ValueSource, DRAW, LOST};
use dtb_probe::movegen::{legal_moves, Counting, Move};
use dtb_probe::Position;

fn legal(rules: &Rules, pos: &Position) -> Vec<Move> {
    let mut v = Vec::new();
    legal_moves(rules, pos, Counting::Unique, &mut v);
    v
}

/// The legal moves of `fen` under `rules`, full path, sorted.
fn moves(rules: &Rules, fen: &str) -> Vec<String> {
    let pos = fen::parse(fen, rules).unwrap_or_else(|e| panic!("{} {fen}: {e}", rules.name));
    let mut names: Vec<String> = legal(rules, &pos)
        .iter()
        .map(|m| m.to_pdn_for(rules, true))
        .collect();
    names.sort();
    names
}

#[test]
fn board_size_8_or_10() {
    // White man on 28: on 8x8 the right edge leaves one step; on 10x10 it is mid-board.
    let ten = Rules {
        board: 10,
        ..Rules::ENGLISH
    };
    assert_eq!(moves(&Rules::ENGLISH, "W:W28"), ["28-24"]);
    assert_eq!(moves(&ten, "W:W28"), ["28-22", "28-23"]);
}

#[test]
fn first_to_move() {
    let white_first = Rules {
        first_to_move: Color::White,
        ..Rules::ENGLISH
    };
    let names = |r: &Rules| {
        let mut v: Vec<String> = legal(r, &Position::start(r))
            .iter()
            .map(|m| m.to_pdn(false))
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        names(&Rules::ENGLISH),
        ["10-14", "10-15", "11-15", "11-16", "12-16", "9-13", "9-14"]
    );
    assert_eq!(
        names(&white_first),
        ["21-17", "22-17", "22-18", "23-18", "23-19", "24-19", "24-20"]
    );
}

#[test]
fn men_capture_backward() {
    // A black man right behind White's man on 18.
    let backward = Rules {
        men_capture_backward: true,
        ..Rules::ENGLISH
    };
    assert_eq!(moves(&Rules::ENGLISH, "W:W18:B22"), ["18-14", "18-15"]);
    assert_eq!(moves(&backward, "W:W18:B22"), ["18x25"]);
}

#[test]
fn kings_short_or_flying() {
    // The king on 28 sees 19 two squares away along the long diagonal, then 10 beyond 15.
    let flying = Rules {
        kings: KingRange::Flying,
        ..Rules::ENGLISH
    };
    assert_eq!(moves(&Rules::ENGLISH, "W:WK28:B10,19"), ["28-24", "28-32"]);
    assert_eq!(moves(&flying, "W:WK28:B10,19"), ["28x15x1", "28x15x6"]);
}

#[test]
fn capture_compulsory() {
    // The `international-optional` preset is the international rules with this one flip.
    assert_eq!(
        Rules::INTERNATIONAL_OPTIONAL,
        Rules {
            name: "international-optional",
            capture_compulsory: false,
            ..Rules::INTERNATIONAL
        }
    );
    assert_eq!(moves(&Rules::INTERNATIONAL, "W:W33:B28"), ["33x22"]);
    assert_eq!(
        moves(&Rules::INTERNATIONAL_OPTIONAL, "W:W33:B28"),
        ["33-29", "33x22"]
    );
    // A capture, once chosen, still follows the majority rule: 33x22 (one piece) is out.
    let f = "W:W33,38:B28,29,19";
    assert_eq!(moves(&Rules::INTERNATIONAL, f), ["33x24x13"]);
    assert_eq!(
        moves(&Rules::INTERNATIONAL_OPTIONAL, f),
        ["33x24x13", "38-32"]
    );
}

#[test]
fn precedence_free_or_most_pieces() {
    // 26 can take one man, 27 two: free choice keeps both.
    let most = Rules {
        precedence: Precedence::MostPieces,
        ..Rules::ENGLISH
    };
    assert_eq!(
        moves(&Rules::ENGLISH, "W:W26,27:B23,14"),
        ["26x19", "27x18x9"]
    );
    assert_eq!(moves(&most, "W:W26,27:B23,14"), ["27x18x9"]);
}

#[test]
fn precedence_most_pieces_then_kings() {
    // Spanish numbering (1 = h1, White on 1-12): 4 (b1) takes the king on 7 (c2), 6 (e2) takes
    // the man on 10 (f3); one piece each, so only the king count decides.
    let most = Rules {
        precedence: Precedence::MostPieces,
        ..Rules::SPANISH
    };
    assert_eq!(moves(&Rules::SPANISH, "W:W4,6:B10,K7"), ["4x11"]);
    assert_eq!(moves(&most, "W:W4,6:B10,K7"), ["4x11", "6x13"]);
}

#[test]
fn precedence_italian_order() {
    // Italian numbering (1 = a8). Each position is decided by the next criterion of the
    // Italian order; the flipped rules stop one criterion earlier. (movegen-cases.tsv rows
    // Art. 6.7, 6.8, 6.9.)
    let r = Rules::ITALIAN;
    let most = Rules {
        precedence: Precedence::MostPieces,
        ..r
    };
    let most_kings = Rules {
        precedence: Precedence::MostPiecesThenKings,
        ..r
    };
    // Two pieces by the king or by the man on 31: the king must capture.
    assert_eq!(moves(&r, "W:WK23,31:B19,26,27"), ["23x30x21"]);
    assert_eq!(
        moves(&most, "W:WK23,31:B19,26,27"),
        ["23x30x21", "31x22x15"]
    );
    // One piece each by the same king: the king must be taken.
    assert_eq!(moves(&r, "W:WK23:B19,K28"), ["23x32"]);
    assert_eq!(moves(&most, "W:WK23:B19,K28"), ["23x14", "23x32"]);
    // Three pieces, one king each way: the king taken first.
    let f = "W:WK30:B10,12,18,K20,K26,27";
    assert_eq!(moves(&r, f), ["30x21x14x5"]);
    assert_eq!(moves(&most_kings, f), ["30x21x14x5", "30x23x16x7"]);
}

#[test]
fn precedence_king_first() {
    // Czech: the king on 32 takes one man from afar; the man on 26 could take two.
    let free = Rules {
        precedence: Precedence::Free,
        ..Rules::CZECH
    };
    assert_eq!(moves(&Rules::CZECH, "W:WK32,26:B14,22"), ["32x5", "32x9"]);
    assert_eq!(
        moves(&free, "W:WK32,26:B14,22"),
        ["26x17x10", "32x5", "32x9"]
    );
}

#[test]
fn removal_immediate_or_at_end() {
    // gracz8: the king takes 6 (or 24) and must come back across the square of the piece it
    // took first; removed at once, that square is open; removed at the end, it blocks.
    let at_end = Rules {
        removal: Removal::AtEnd,
        ..Rules::GRACZ8
    };
    assert_eq!(
        moves(&Rules::GRACZ8, "W:WK19:B6,24"),
        ["19x1x28", "19x28x1"]
    );
    assert_eq!(moves(&at_end, "W:WK19:B6,24"), ["19x1", "19x28"]);
}

#[test]
fn mid_capture_promotion() {
    // Russian: the man on 12 takes 8 and lands on 3, White's crowning row. As a king it goes
    // on over 7 and 9 (flying, landing where it can go on); as a man (capturing backward) it
    // takes 7 only; crowned-and-stop ends on 3.
    let f = "W:W12:B7,8,9";
    let cases = [
        (MidCapturePromotion::CrownAndContinue, "12x3x14x5", true),
        (MidCapturePromotion::ContinueAsMan, "12x3x10", false),
        (MidCapturePromotion::CrownAndStop, "12x3", true),
    ];
    for (field, want, crowned) in cases {
        let r = Rules {
            mid_capture_promotion: field,
            ..Rules::RUSSIAN
        };
        let pos = fen::parse(f, &r).unwrap();
        let v = legal(&r, &pos);
        assert_eq!(v.len(), 1, "{field:?}");
        assert_eq!(v[0].to_pdn(true), want, "{field:?}");
        assert_eq!(v[0].crowned, crowned, "{field:?}");
        assert_eq!(
            v[0].apply(&r, &pos).unwrap().kings() != 0,
            crowned,
            "{field:?}"
        );
    }
    assert_eq!(
        Rules::RUSSIAN.mid_capture_promotion,
        MidCapturePromotion::CrownAndContinue
    );
}

#[test]
fn men_capture_kings() {
    // Italian: the man on 30 (d1) faces a king on 26 (c2) with 21 (b3) empty behind it.
    let may = Rules {
        men_capture_kings: true,
        ..Rules::ITALIAN
    };
    assert_eq!(moves(&Rules::ITALIAN, "W:W30:BK26"), ["30-27"]);
    assert_eq!(moves(&may, "W:W30:BK26"), ["30x21"]);
}

#[test]
fn king_landing_any_or_must_continue() {
    // gracz8: after taking 19 the king may stop on 28, or land on 24 and go on over 27.
    let must = Rules {
        king_landing: KingLanding::MustContinue,
        ..Rules::GRACZ8
    };
    assert_eq!(
        moves(&Rules::GRACZ8, "W:WK15:B19,27"),
        ["15x24x31", "15x28"]
    );
    assert_eq!(moves(&must, "W:WK15:B19,27"), ["15x24x31"]);
}

/// Stored values are never needed for a blocked position.
struct NoTables;
impl ValueSource for NoTables {
    type Error = ();
    fn stored(&self, _: &Position) -> Result<value::Code, ()> {
        panic!("a blocked position is resolved without tables")
    }
}

#[test]
fn blocked_side_loses_or_draws() {
    // The field changes the value, not the moves: White's man on 32 has no move and no capture.
    let draws = Rules {
        blocked: BlockedOutcome::Draw,
        ..Rules::ENGLISH
    };
    let pos = fen::parse("W:W32:B23,27,28", &Rules::ENGLISH).unwrap();
    assert!(legal(&Rules::ENGLISH, &pos).is_empty());
    assert!(legal(&draws, &pos).is_empty());
    assert_eq!(value::resolve(&Rules::ENGLISH, &NoTables, &pos), Ok(LOST));
    assert_eq!(value::resolve(&draws, &NoTables, &pos), Ok(DRAW));
}

#[test]
fn numbering_standard_italian_spanish() {
    // The field changes which square a number names, not the game: the same text is a man on
    // a3 (standard 21), on b3 (Italian 21) or on g6 (Spanish 21).
    let italian = Rules {
        numbering: Numbering::Italian,
        ..Rules::ENGLISH
    };
    let spanish = Rules {
        numbering: Numbering::Spanish,
        ..Rules::ENGLISH
    };
    assert_eq!(moves(&Rules::ENGLISH, "W:W21:B"), ["21-17"]);
    assert_eq!(moves(&italian, "W:W21:B"), ["21-17", "21-18"]);
    assert_eq!(moves(&spanish, "W:W21:B"), ["21-25", "21-26"]);
    for r in [
        Rules::ENGLISH,
        italian,
        spanish,
        Rules::ITALIAN,
        Rules::SPANISH,
    ] {
        let pos = fen::parse("W:W21,K29:B5,K12", &r).unwrap();
        assert_eq!(fen::write_for(&pos, &r), "W:W21,K29:B5,K12", "{r:?}");
    }
}
