//! Bad input, through the probe API and the CLI: malformed FEN of every kind, illegal
//! positions, positions beyond the tables, finished and blocked games, corrupt or foreign
//! table files, and malformed, illegal or ambiguous move texts. Every case is a typed error
//! or the right value: never a panic, never a guess.

mod common;

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use common::english4;
use dtb_probe::fen::{self, FenError};
use dtb_probe::internal::board::GEOMETRY_8;
use dtb_probe::internal::format::{FormatError, ValueKind, HEADER_LEN};
use dtb_probe::internal::index::SliceIndex;
use dtb_probe::internal::position::PositionError;
use dtb_probe::internal::table::{BlockCache, TableFile};
use dtb_probe::movegen::{has_capture, legal_moves, parse_move, Counting, MoveError};
use dtb_probe::{Color, Material, Position, ProbeError, Reached, Rules, Tablebase, Wld};
use serde_json::Value;

const E: Rules = Rules::ENGLISH;

fn tb4() -> Tablebase {
    Tablebase::open(english4(), E).expect("open 4-piece tables")
}

// ---------------------------------------------------------------------------------------
// FEN
// ---------------------------------------------------------------------------------------

fn range(square: u32) -> FenError {
    FenError::SquareOutOfRange { square, max: 32 }
}

/// Every malformed FEN gives its own typed error.
#[test]
fn malformed_fen_matrix() {
    use FenError::*;
    let cases: Vec<(&str, FenError)> = vec![
        ("", Empty),
        ("   ", Empty),
        ("\"\"", Empty),
        (".", Empty),
        ("garbage", FieldCount(1)),
        ("W", FieldCount(1)),
        ("W:W5:B6:B7", FieldCount(4)),
        ("W:W5:B6:", FieldCount(4)),
        ("X:W5:B6", BadSideToMove("X".into())),
        ("WB:W5:B6", BadSideToMove("WB".into())),
        (":W5:B6", BadSideToMove(String::new())),
        ("WW5:B6", BadSideToMove("WW5".into())), // missing colon after the side
        ("W:X5:B6", BadColorField("X5".into())),
        ("W::B6", BadColorField(String::new())),
        ("W:W5:W6", DuplicateColor('W')),
        ("W:B5:B6", DuplicateColor('B')),
        ("W:Wx:B6", BadSquare("x".into())),
        ("W:W5B6", BadSquare("5B6".into())), // missing colon between the lists
        ("W:W5.5:B6", BadSquare("5.5".into())),
        ("W:W+5:B6", BadSquare("+5".into())),
        ("W:W5K:B6", BadSquare("5K".into())),
        ("W:WK:B6", BadSquare(String::new())),
        ("W:W5,,6:B1", BadSquare(String::new())),
        ("W:W5,:B1", BadSquare(String::new())),
        ("W:W-5:B1", BadSquare(String::new())),
        ("W:W5-:B1", BadSquare(String::new())),
        ("W:W99999999999:B1", BadSquare("99999999999".into())),
        ("W:W0:B6", range(0)),
        ("W:W5:B0", range(0)),
        ("W:W33:B6", range(33)),
        ("W:W1-33:B", range(33)),
        ("W:W45:B6", range(45)), // a 10x10 square
        ("W:W31-50:B1-20", range(50)),
        ("W:W6:B6", DuplicateSquare(6)),
        ("W:W6,6:B1", DuplicateSquare(6)),
        ("W:W5-7,6:B1", DuplicateSquare(6)),
        ("W:WK6:B6", DuplicateSquare(6)),
        ("W:W9-7:B1", BadRange("9-7".into())),
        ("W:WK9-7:B1", BadRange("K9-7".into())),
        // Algebraic squares (issue 22): light, off the board, ranges, malformed.
        ("W:Wa2:B6", LightSquare("a2".into())),
        ("W:WKb1:B6", LightSquare("b1".into())),
        (
            "W:Wi1:B6",
            OffBoardSquare {
                square: "i1".into(),
                board: 8,
                last_file: 'h',
            },
        ),
        (
            "W:W5:Bc9",
            OffBoardSquare {
                square: "c9".into(),
                board: 8,
                last_file: 'h',
            },
        ),
        (
            "W:Wj10:B6",
            OffBoardSquare {
                square: "j10".into(),
                board: 8,
                last_file: 'h',
            },
        ),
        ("W:Wa1-c3:B6", AlgebraicRange("a1-c3".into())),
        ("W:W5-c3:B6", AlgebraicRange("5-c3".into())),
        ("W:Wa:B6", BadSquare("a".into())),
        ("W:Wa1x:B6", BadSquare("a1x".into())),
        ("W:Wa100:B6", BadSquare("a100".into())),
        ("W:W29,a1:B6", DuplicateSquare(29)),
        ("W:Wé1:B6", BadSquare("é1".into())),
        // Trailing move counters (issue 22): out of order, repeated, empty, not numbers,
        // or standing where a piece list must.
        ("W:W5:B6:F1:H0", FieldCount(4)),
        ("W:W5:B6:H0:H0", FieldCount(4)),
        ("W:W5:B6:H", FieldCount(4)),
        ("W:W5:B6:Hx", FieldCount(4)),
        ("W:W5:B6:H0:F1:X", FieldCount(6)),
        ("W:H0", BadColorField("H0".into())),
        ("W:W5:H0:B6", FieldCount(4)),
        ("[FEN \"W:W5:B6", BadSideToMove("[FEN \"W".into())),
    ];
    for (f, want) in cases {
        assert_eq!(fen::parse(f, &E), Err(want), "{f:?}");
    }
}

/// Legal forms: surrounding space and quotes, a trailing dot, lower case, either list order,
/// a list left out, ranges, kings in ranges.
#[test]
fn accepted_fen_forms() {
    let p = fen::parse("W:W5,K26:B8", &E).unwrap();
    for f in [
        "  W:W5,K26:B8  ",
        "\"W:W5,K26:B8\"",
        "W:W5,K26:B8.",
        "w:w5,k26:b8",
        "W:B8:W5,K26",
        "W:W 5 , K26:B 8",
    ] {
        assert_eq!(fen::parse(f, &E), Ok(p), "{f:?}");
    }
    assert_eq!(fen::parse("W:W18", &E), fen::parse("W:W18:B", &E));
    let start = fen::parse("B:W21-32:B1-12", &E).unwrap();
    assert_eq!(start, Position::start(&E));
    let kings = fen::parse("W:WK1-3:B", &E).unwrap();
    assert_eq!(kings.kings(), 0b111);
    // Issue 22: algebraic squares, a PDN tag, trailing move counters, and all at once.
    for f in [
        "W:Wa7,Kd2:Bg7",
        "W:WA7,KD2:BG7",
        "W:W5,K26:B8:H0:F1",
        "W:W5,K26:B8:H12",
        "[FEN \"W:W5,K26:B8\"]",
        "[FEN \"W:Wa7,Kd2:Bg7:H3:F40\"]",
    ] {
        assert_eq!(fen::parse(f, &E), Ok(p), "{f:?}");
    }
}

/// Pieces that parse but do not form a legal position.
#[test]
fn illegal_positions_in_fen() {
    use PositionError::*;
    for s in 1..=4 {
        assert_eq!(
            fen::parse(&format!("W:W{s}:B10"), &E),
            Err(FenError::Position(ManOnCrowningRow {
                color: "White",
                square: s
            })),
            "white man on {s}"
        );
        // A king there is fine.
        assert!(fen::parse(&format!("W:WK{s}:B10"), &E).is_ok());
    }
    for s in 29..=32 {
        assert_eq!(
            fen::parse(&format!("B:W10:B{s}"), &E),
            Err(FenError::Position(ManOnCrowningRow {
                color: "Black",
                square: s
            })),
            "black man on {s}"
        );
        assert!(fen::parse(&format!("B:W10:BK{s}"), &E).is_ok());
    }
    // A man on the opponent's crowning row (its own back rank) is fine.
    assert!(fen::parse("W:W29:B1", &E).is_ok());
    assert_eq!(
        fen::parse("W:W5-17:B1", &E),
        Err(FenError::Position(TooManyPieces {
            color: "White",
            count: 13,
            max: 12
        }))
    );
    assert_eq!(
        fen::parse("B:WK32:BK1-13", &E),
        Err(FenError::Position(TooManyPieces {
            color: "Black",
            count: 13,
            max: 12
        }))
    );
    assert!(
        fen::parse("B:W21-32:B1-12", &E).is_ok(),
        "12 a side is the most"
    );
}

/// Position::new refuses overlapping colours, kings without pieces, squares off the board.
#[test]
fn position_new_refuses_impossible_bitboards() {
    use PositionError::*;
    let sq = |n: u32| 1u64 << (n - 1);
    assert_eq!(
        Position::new(&E, sq(6) | sq(7), sq(7), 0, Color::White),
        Err(SquareTaken(7))
    );
    assert_eq!(
        Position::new(&E, sq(6), sq(9), sq(10), Color::White),
        Err(KingWithoutPiece(10))
    );
    assert_eq!(
        Position::new(&E, sq(6) | 1 << 40, sq(9), 0, Color::White),
        Err(OffBoard {
            square: 41,
            board: 8
        })
    );
    assert_eq!(
        Position::new(&E, sq(2), sq(9), 0, Color::White),
        Err(ManOnCrowningRow {
            color: "White",
            square: 2
        })
    );
}

// ---------------------------------------------------------------------------------------
// Probing positions that are legal but special
// ---------------------------------------------------------------------------------------

/// More pieces than the tables hold, without a capture: MissingTable (for the canonical
/// colour order of the slice), for every probe.
#[test]
fn more_pieces_than_the_tables_hold() {
    let tb = tb4();
    assert_eq!(tb.max_pieces(), 4);
    let pos = fen::parse("W:WK1,K2,K3:BK30,K31", &E).unwrap();
    assert!(!has_capture(&E, &pos));
    let missing = |r: ProbeError, want_kind: ValueKind| match r {
        ProbeError::MissingTable {
            material,
            kind,
            pieces,
            reached,
        } => {
            assert_eq!(pieces, 5);
            assert_eq!(reached, Reached::Asked, "the probed position's own slice");
            assert_eq!(kind, want_kind);
            assert!(material == pos.material() || material == pos.material().mirror());
            assert!(material.is_canonical());
        }
        other => panic!("expected MissingTable, got {other:?}"),
    };
    missing(tb.probe_wld(&pos).unwrap_err(), ValueKind::Wld);
    missing(tb.probe_dtw(&pos).unwrap_err(), ValueKind::Dtw);
    missing(tb.best_move(&pos).unwrap_err(), ValueKind::Dtw);
    let msg = tb.probe_wld(&pos).unwrap_err().to_string();
    assert!(msg.contains("5 pieces"), "{msg}");
}

/// Issue 22 (7): a table missing for a slice that only a capture (or a move) from the probed
/// position leads to says so. With only the 4-piece files, `W:W22,30:B17,1` (White must take
/// 22x13) needs slice 1020's table: MissingTable{1020, wld, 3 pieces, Capture}, whose message
/// ends "a capture from the probed position leads there" (best_move too); a 3-piece position
/// is MissingTable{.., Asked} with the plain message. With only `english-0110.dtw` removed,
/// the best move of `W:W5:B2` (1010; 5-1 crowns into 0110) is MissingTable{0110, dtw,
/// Move}, while its own distance (11 plies) is still answered.
#[test]
fn missing_table_says_a_capture_leads_there() {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(tmp.path());
    for e in std::fs::read_dir(tmp.path()).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_str().unwrap().to_string();
        let (_, rest) = name.split_once('-').unwrap();
        let digits = &rest[..4];
        let m = Material::parse(digits).unwrap();
        if m.pieces() < 4 {
            std::fs::remove_file(&p).unwrap();
        }
    }
    let tb = Tablebase::open(tmp.path(), E).unwrap();
    let pos = fen::parse("W:W22,30:B17,1", &E).unwrap();
    let e = tb.probe_wld(&pos).unwrap_err();
    match &e {
        ProbeError::MissingTable {
            material,
            kind,
            pieces,
            reached,
        } => {
            assert_eq!(*material, Material::parse("1020").unwrap());
            assert_eq!(*kind, ValueKind::Wld);
            assert_eq!(*pieces, 3);
            assert_eq!(*reached, Reached::Capture);
        }
        other => panic!("expected MissingTable, got {other:?}"),
    }
    assert_eq!(
        e.to_string(),
        "no wld table for slice 1020 (3 pieces) in the directories added: a capture from the \
         probed position leads there"
    );
    let e = tb.best_move(&pos).unwrap_err().to_string();
    assert!(
        e.ends_with(": a capture from the probed position leads there"),
        "{e}"
    );
    let pos3 = fen::parse("W:W5:BK30,K31", &E).unwrap();
    let e = tb.probe_wld(&pos3).unwrap_err();
    assert!(
        matches!(
            e,
            ProbeError::MissingTable {
                reached: Reached::Asked,
                pieces: 3,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().ends_with("in the directories added"), "{e}");

    let tmp = tempfile::tempdir().unwrap();
    copy_dir(tmp.path());
    std::fs::remove_file(file_of(tmp.path(), "0110", ValueKind::Dtw)).unwrap();
    let tb = Tablebase::open(tmp.path(), E).unwrap();
    let pos = fen::parse("W:W5:B2", &E).unwrap();
    assert_eq!(tb.probe_dtw(&pos).unwrap().plies, Some(11));
    let e = tb.best_move(&pos).unwrap_err();
    assert!(
        matches!(
            e,
            ProbeError::MissingTable { reached: Reached::Move, kind: ValueKind::Dtw, pieces: 2, material }
                if material == Material::parse("0110").unwrap()
        ),
        "{e:?}"
    );
    assert!(
        e.to_string()
            .ends_with(": a move from the probed position leads there"),
        "{e}"
    );
}

/// Issue 22 (4): a table's raw entry is not a game value, and its name says so. International
/// `W:W28:B23` (White takes 28x19 and wins in 1 ply) is a capture position: its entry in
/// `international-1010.wld` / `.dtw`, read with `TableFile::stored_code` (was `value`), is the
/// "don't care" code (here: a draw, WLD 0 and DTW 0), while the probes answer win in 1 ply.
#[test]
fn stored_code_of_a_capture_position_is_not_its_value() {
    let tmp = tempfile::tempdir().unwrap();
    let r = Rules::INTERNATIONAL;
    let plan = dtb_gen::build::Plan::new(r, 2, tmp.path()).unwrap();
    dtb_gen::build::run(&plan, &dtb_gen::build::Quiet).unwrap();
    let tb = Tablebase::open(tmp.path(), r).unwrap();
    let pos = fen::parse("W:W28:B23", &r).unwrap();
    assert!(has_capture(&r, &pos));
    let m = pos.material();
    assert_eq!(m, Material::new(1, 0, 1, 0));
    let i = SliceIndex::new(m, r.geometry()).index(&pos);
    let wld = tb
        .table(m, ValueKind::Wld)
        .unwrap()
        .stored_code(0, i)
        .unwrap();
    let dtw = tb
        .table(m, ValueKind::Dtw)
        .unwrap()
        .stored_code(0, i)
        .unwrap();
    assert_eq!((wld, dtw), (0, 0), "the don't-care entry: a draw");
    assert_eq!(tb.probe_wld(&pos).unwrap(), Wld::Win);
    assert_eq!(tb.probe_dtw(&pos).unwrap().plies, Some(1));
}

/// A 5-piece position whose side to move must capture is resolved by search into the 4-piece
/// tables: its value is one ply more than its only capture's.
#[test]
fn five_pieces_with_a_capture_resolve_through_four() {
    let tb = tb4();
    let pos = fen::parse("W:W18:B14,K30,K31,K32", &E).unwrap();
    let mut moves = Vec::new();
    legal_moves(&E, &pos, Counting::Unique, &mut moves);
    assert_eq!(moves.len(), 1);
    assert_eq!(moves[0].to_pdn(false), "18x9");
    let child = moves[0].apply(&E, &pos).unwrap();
    let dc = tb.probe_dtw(&child).unwrap();
    let d = tb.probe_dtw(&pos).unwrap();
    assert_ne!(dc.wld, Wld::Draw, "the test wants a decided child");
    assert_eq!(d.plies, Some(dc.plies.unwrap() + 1));
    assert_eq!(
        d.wld,
        if dc.wld == Wld::Win {
            Wld::Loss
        } else {
            Wld::Win
        }
    );
    assert_eq!(tb.probe_wld(&pos).unwrap(), d.wld);
    let (m, v) = tb.best_move(&pos).unwrap().unwrap();
    assert_eq!((m, v), (moves[0], d));
}

/// A finished game is a value, answered as a blocked side is (`blocked_side_to_move_loses`):
/// the side to move with no pieces has lost, in 0 plies, with no move; the side to move whose
/// opponent has no pieces has won, in 0 plies, with no move to play (the game ended when the
/// last piece was taken). Only the empty board, which no game reaches, is GameOver.
#[test]
fn a_side_without_pieces() {
    let tb = tb4();
    for (f, wld) in [
        ("W:W:B5", Wld::Loss),
        ("B:WK18:B", Wld::Loss),
        ("W:W:BK1,K2,K3", Wld::Loss),
        ("W:W18:B", Wld::Win),
        ("B:W:B5", Wld::Win),
        ("B:W:BK1,K2,K3,K4,K5,K6", Wld::Win),
    ] {
        let pos = fen::parse(f, &E).unwrap();
        assert_eq!(tb.probe_wld(&pos).unwrap(), wld, "{f}");
        assert_eq!(tb.probe_quiet_wld(&pos).unwrap(), wld, "{f}");
        let d = tb.probe_dtw(&pos).unwrap();
        assert_eq!((d.wld, d.plies), (wld, Some(0)), "{f}");
        assert_eq!(tb.best_move(&pos).unwrap(), None, "{f}");
        assert_eq!(tb.probe_moves(&pos).unwrap(), [], "{f}");
        assert_eq!(tb.probe_moves_wld(&pos).unwrap(), [], "{f}");
    }
    // A blocked side and a side with no pieces, answered alike: the side to move lost in 0
    // plies with no move, and its opponent to move has won in 0 plies.
    let blocked = tb
        .probe_dtw(&fen::parse("W:W29:B25,22", &E).unwrap())
        .unwrap();
    let none = tb
        .probe_dtw(&fen::parse("W:W:B25,22", &E).unwrap())
        .unwrap();
    assert_eq!(blocked, none);
    // The empty board: no value may be invented, and no panic.
    let empty = fen::parse("W:W:B", &E).unwrap();
    assert!(matches!(tb.probe_wld(&empty), Err(ProbeError::GameOver)));
    assert!(matches!(tb.probe_moves(&empty), Err(ProbeError::GameOver)));
}

/// A side to move with pieces but no legal move has lost, in 0 plies, with no best move.
#[test]
fn blocked_side_to_move_loses() {
    let tb = tb4();
    for f in [
        "W:W29:B25,22",  // white man on 29: 25 taken, the jump to 22 blocked
        "W:WK29:B25,22", // the same with a king
        "B:W8,11:B4",    // black man on 4: 8 taken, the jump to 11 blocked
        "B:W8,11,15:B4", // 4 pieces
    ] {
        let pos = fen::parse(f, &E).unwrap();
        let mut moves = Vec::new();
        legal_moves(&E, &pos, Counting::Unique, &mut moves);
        assert!(moves.is_empty(), "{f}: {moves:?}");
        assert_eq!(tb.probe_wld(&pos).unwrap(), Wld::Loss, "{f}");
        let d = tb.probe_dtw(&pos).unwrap();
        assert_eq!((d.wld, d.plies), (Wld::Loss, Some(0)), "{f}");
        assert_eq!(tb.best_move(&pos).unwrap(), None, "{f}");
        // The other side to move is not blocked and wins in one (its opponent is then
        // blocked, or captured) or more; at least it is not a loss in 0.
        let other = pos.with_side_to_move(pos.side_to_move().opponent());
        assert_ne!(
            tb.probe_dtw(&other).unwrap().plies,
            Some(0),
            "{f} other side"
        );
    }
}

/// A position of another variant or board: typed errors, never a value.
#[test]
fn other_variants_are_refused() {
    let tb = tb4();
    // A 10x10 position (square 45) probed on the English tables: a position of other rules
    // (issue 22), and its pieces re-checked under English rules are off the board.
    let intl = fen::parse("W:W45:B5", &Rules::INTERNATIONAL).unwrap();
    match tb.probe_wld(&intl) {
        Err(ProbeError::VariantMismatch {
            position,
            tablebase,
        }) => {
            assert_eq!((position.as_str(), tablebase), ("international", "english"));
        }
        other => panic!("expected VariantMismatch, got {other:?}"),
    }
    assert!(matches!(
        tb.best_move(&intl),
        Err(ProbeError::VariantMismatch { .. })
    ));
    assert_eq!(
        intl.with_rules(&E),
        Err(PositionError::OffBoard {
            square: 45,
            board: 8
        })
    );
    // The same pieces read under Russian rules are not an English position either.
    let ru = fen::parse("W:WK32:BK26", &Rules::RUSSIAN).unwrap();
    assert!(matches!(
        tb.probe_dtw(&ru),
        Err(ProbeError::VariantMismatch {
            tablebase: "english",
            ..
        })
    ));
    assert_eq!(tb.probe_wld(&ru.with_rules(&E).unwrap()).unwrap(), Wld::Win);
    // An International tablebase over the English directory finds no table.
    let itb = Tablebase::open(english4(), Rules::INTERNATIONAL).unwrap();
    assert_eq!(itb.max_pieces(), 0);
    let pos = fen::parse("W:WK46:BK5", &Rules::INTERNATIONAL).unwrap();
    assert!(matches!(
        itb.probe_wld(&pos),
        Err(ProbeError::MissingTable { pieces: 2, .. })
    ));
    // English files renamed as International ones are refused as foreign (Mismatch).
    let tmp = tempfile::tempdir().unwrap();
    for kind in ["wld", "dtw"] {
        std::fs::copy(
            english4().join(format!("english-0101.{kind}")),
            tmp.path().join(format!("international-0101.{kind}")),
        )
        .unwrap();
    }
    let itb = Tablebase::open(tmp.path(), Rules::INTERNATIONAL).unwrap();
    assert!(!has_capture(&Rules::INTERNATIONAL, &pos));
    let err = itb.probe_wld(&pos).unwrap_err();
    assert!(matches!(err, ProbeError::Mismatch { .. }), "{err:?}");
    assert!(err.to_string().contains("international-0101.wld"), "{err}");
    assert!(matches!(
        itb.probe_dtw(&pos),
        Err(ProbeError::Mismatch { .. })
    ));
    // A directory that does not exist.
    assert!(matches!(
        Tablebase::open(tmp.path().join("nope"), E),
        Err(ProbeError::Directory { .. })
    ));
}

// ---------------------------------------------------------------------------------------
// Corrupt table files
// ---------------------------------------------------------------------------------------

fn copy_dir(to: &Path) {
    for e in std::fs::read_dir(english4()).unwrap() {
        let p = e.unwrap().path();
        if matches!(p.extension().and_then(|e| e.to_str()), Some("wld" | "dtw")) {
            std::fs::copy(&p, to.join(p.file_name().unwrap())).unwrap();
        }
    }
}

fn file_of(dir: &Path, m: &str, kind: ValueKind) -> PathBuf {
    dir.join(format!("english-{m}.{}", kind.extension()))
}

/// A position of canonical slice `m`, `side` to move, that has moves but no capture (so its
/// value must come from the file) and whose value lies in block `block` of the `kind` file.
fn stored_position(m: Material, side: Color, kind: ValueKind, block: u32) -> Position {
    let t = TableFile::open(&file_of(english4(), &m.to_string(), kind), {
        std::sync::Arc::new(BlockCache::new(1 << 20))
    })
    .unwrap();
    let ix = SliceIndex::new(m, &GEOMETRY_8);
    (0..ix.size())
        .map(|i| ix.unindex(i, side))
        .find(|p| {
            let mut moves = Vec::new();
            legal_moves(&E, p, Counting::Unique, &mut moves);
            !moves.is_empty()
                && !moves[0].is_capture()
                && t.header().block_of(side.index(), ix.index(p)).map(|b| b.0) == Some(block)
        })
        .unwrap_or_else(|| panic!("no stored position in {m} block {block}"))
}

fn data_start(path: &Path) -> usize {
    let t = TableFile::open(path, std::sync::Arc::new(BlockCache::new(1 << 20))).unwrap();
    t.header().data_start() as usize
}

fn flip_byte(path: &Path, at: usize) {
    let mut b = std::fs::read(path).unwrap();
    b[at] ^= 0x5a;
    std::fs::write(path, b).unwrap();
}

enum Probe {
    Wld,
    Dtw,
}

/// The format error inside a Table error.
fn format_error(e: &ProbeError) -> Option<&FormatError> {
    match e {
        ProbeError::Table(t) => t.format_error(),
        _ => None,
    }
}

/// Probing `pos` fails with a Table or Mismatch error naming `file` (and of the `expected`
/// kind), the same error every time, and never gives a value (`tb` the damaged directory,
/// `good` the intact one).
fn assert_refused(
    (tb, good): (&Tablebase, &Tablebase),
    pos: &Position,
    how: Probe,
    file: &str,
    what: &str,
    expected: fn(&ProbeError) -> bool,
) {
    for _ in 0..2 {
        let result = match how {
            Probe::Wld => tb.probe_wld(pos).map(|v| format!("{v:?}")),
            Probe::Dtw => tb.probe_dtw(pos).map(|v| format!("{v:?}")),
        };
        let err = match result {
            Err(e) => e,
            Ok(v) => panic!("{what}: {} gave a value, {v}", fen::write(pos)),
        };
        assert!(
            matches!(err, ProbeError::Table(_) | ProbeError::Mismatch { .. }),
            "{what}: {err:?}"
        );
        assert!(expected(&err), "{what}: unexpected error {err:?}");
        let msg = err.to_string();
        assert!(
            msg.contains(file),
            "{what}: message {msg:?} does not name {file}"
        );
    }
    // best_move looks only at the successors: where none of them needs the broken file it
    // may answer, and then with the intact directory's answer.
    match tb.best_move(pos) {
        Err(e) => assert!(e.to_string().contains(file), "{what}: best_move {e}"),
        Ok(v) => assert_eq!(v, good.best_move(pos).unwrap(), "{what}: best_move"),
    }
}

/// Corrupt a copy of the 4-piece directory in five ways, each in its own slice: a truncated
/// file, a flipped byte in a block, a zero-length file, another slice's file under this
/// slice's name, random bytes under a right name, a flipped header byte. Each slice's probes
/// give a typed error that names the file; untouched files (other slices, the other value
/// kind of the same slice, the other side's block) still answer.
#[test]
fn corrupt_table_files_give_typed_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    copy_dir(dir);
    let m = |s: &str| Material::parse(s).unwrap();

    // (1) english-1020.dtw truncated to half its length.
    let p = file_of(dir, "1020", ValueKind::Dtw);
    let len = std::fs::metadata(&p).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&p)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    let truncated = stored_position(m("1020"), Color::White, ValueKind::Dtw, 0);

    // (2) english-0120.wld: one byte of White's first block flipped; Black's block is intact.
    let p = file_of(dir, "0120", ValueKind::Wld);
    let t = TableFile::open(&p, std::sync::Arc::new(BlockCache::new(1 << 20))).unwrap();
    assert!(t.header().block_count >= 2);
    drop(t);
    flip_byte(&p, data_start(&p) + 3);
    let flipped = stored_position(m("0120"), Color::White, ValueKind::Wld, 0);
    let intact_black = stored_position(m("0120"), Color::Black, ValueKind::Wld, 1);

    // (3) english-0111.wld empty.
    std::fs::write(file_of(dir, "0111", ValueKind::Wld), b"").unwrap();
    let empty = stored_position(m("0111"), Color::White, ValueKind::Wld, 0);

    // (4) english-0102.wld replaced by english-0210.wld.
    std::fs::copy(
        file_of(english4(), "0210", ValueKind::Wld),
        file_of(dir, "0102", ValueKind::Wld),
    )
    .unwrap();
    let renamed = stored_position(m("0102"), Color::White, ValueKind::Wld, 0);

    // (5) english-1011.dtw: random bytes of about the right size.
    let n = std::fs::metadata(file_of(dir, "1011", ValueKind::Dtw))
        .unwrap()
        .len();
    let mut rng = common::Rng(7);
    let junk: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
    std::fs::write(file_of(dir, "1011", ValueKind::Dtw), junk).unwrap();
    let random = stored_position(m("1011"), Color::White, ValueKind::Dtw, 0);

    // (6) english-0202.wld: a header byte (in the counts) flipped.
    let p = file_of(dir, "0202", ValueKind::Wld);
    flip_byte(&p, 100);
    const { assert!(100 < HEADER_LEN) };
    let header = stored_position(m("0202"), Color::White, ValueKind::Wld, 0);

    let good = tb4();
    let tb = Tablebase::open(dir, E).unwrap();
    assert_refused(
        (&tb, &good),
        &truncated,
        Probe::Dtw,
        "english-1020.dtw",
        "truncated",
        |e| matches!(format_error(e), Some(FormatError::FileLength { .. })),
    );
    assert_refused(
        (&tb, &good),
        &flipped,
        Probe::Wld,
        "english-0120.wld",
        "flipped byte",
        |e| matches!(format_error(e), Some(FormatError::BlockChecksum(0))),
    );
    assert_refused(
        (&tb, &good),
        &empty,
        Probe::Wld,
        "english-0111.wld",
        "empty file",
        |e| matches!(format_error(e), Some(FormatError::TooShort { len: 0, .. })),
    );
    assert_refused(
        (&tb, &good),
        &renamed,
        Probe::Wld,
        "english-0102.wld",
        "renamed file",
        |e| matches!(e, ProbeError::Mismatch { .. }),
    );
    assert_refused(
        (&tb, &good),
        &random,
        Probe::Dtw,
        "english-1011.dtw",
        "random bytes",
        |e| matches!(format_error(e), Some(FormatError::BadMagic)),
    );
    assert_refused(
        (&tb, &good),
        &header,
        Probe::Wld,
        "english-0202.wld",
        "header byte",
        |e| matches!(format_error(e), Some(FormatError::HeaderChecksum)),
    );

    // The other kind of each slice still answers, and agrees with the intact directory.
    assert_eq!(
        tb.probe_wld(&truncated).unwrap(),
        good.probe_wld(&truncated).unwrap()
    );
    for p in [&flipped, &empty, &renamed, &header] {
        assert_eq!(tb.probe_dtw(p).unwrap(), good.probe_dtw(p).unwrap());
    }
    assert_eq!(
        tb.probe_wld(&random).unwrap(),
        good.probe_wld(&random).unwrap()
    );
    // The intact block of the damaged file answers.
    assert_eq!(
        tb.probe_wld(&intact_black).unwrap(),
        good.probe_wld(&intact_black).unwrap()
    );
    // Other slices answer.
    for f in [
        "W:WK32:BK26",
        "B:WK32:BK26",
        "W:WK19,K23:BK28,12",
        "W:W23:BK7,K18",
    ] {
        let pos = fen::parse(f, &E).unwrap();
        assert_eq!(
            tb.probe_dtw(&pos).unwrap(),
            good.probe_dtw(&pos).unwrap(),
            "{f}"
        );
        assert_eq!(
            tb.probe_wld(&pos).unwrap(),
            good.probe_wld(&pos).unwrap(),
            "{f}"
        );
    }
    // Many threads asking about the broken slice all get the error.
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| assert!(tb.probe_wld(&flipped).is_err()));
        }
    });
}

/// A copy of the 4-piece directory whose english-0101.wld is a valid file (checksums right)
/// written under other rules (capture not compulsory) but with the same variant name and
/// slice.
fn dir_with_foreign_rules() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(tmp.path());
    let src = file_of(english4(), "0101", ValueKind::Wld);
    let t = TableFile::open(&src, std::sync::Arc::new(BlockCache::new(1 << 20))).unwrap();
    let mut header = t.header().clone();
    assert_eq!(header.sides, 1);
    let values: Vec<u16> = (0..header.positions_per_side)
        .map(|i| t.stored_code(0, i).unwrap())
        .collect();
    let mut other = E;
    other.capture_compulsory = false;
    assert_ne!(other.encode(), E.encode());
    header.rules_code = other.encode();
    dtb_gen::write::write_table(
        &file_of(tmp.path(), "0101", ValueKind::Wld),
        &dtb_gen::write::TableData {
            header,
            sides: vec![&values],
        },
        &dtb_gen::write::CompressionParams::level(3),
    )
    .unwrap();
    tmp
}

/// A table built under other rules of the same variant name is refused as a Mismatch naming
/// the file; its DTW twin and other slices still answer.
#[test]
fn table_with_other_rules_is_a_mismatch() {
    let tmp = dir_with_foreign_rules();
    let tb = Tablebase::open(tmp.path(), E).unwrap();
    let pos = fen::parse("W:WK32:BK26", &E).unwrap();
    let err = tb.probe_wld(&pos).unwrap_err();
    assert!(matches!(err, ProbeError::Mismatch { .. }), "{err:?}");
    assert!(err.to_string().contains("english-0101.wld"), "{err}");
    assert_eq!(tb.probe_dtw(&pos).unwrap().plies, Some(9));
    let other = fen::parse("W:WK2,K16,K23:B17", &E).unwrap();
    assert_eq!(tb.probe_wld(&other).unwrap(), Wld::Win);
}

/// The Mismatch message should say what differs. When the variant name and slice agree and
/// the rules code (or value kind, or size) does not, it reads "table for variant "english"
/// (slice 0101), expected "english" slice 0101", which names no difference at all.
#[test]
fn mismatch_message_says_what_differs() {
    let tmp = dir_with_foreign_rules();
    let tb = Tablebase::open(tmp.path(), E).unwrap();
    let pos = fen::parse("W:WK32:BK26", &E).unwrap();
    let msg = tb.probe_wld(&pos).unwrap_err().to_string();
    assert!(msg.contains("rules"), "{msg}");
}

// ---------------------------------------------------------------------------------------
// Move parsing
// ---------------------------------------------------------------------------------------

/// Malformed move texts are syntax errors; well-formed texts naming no legal move are
/// illegal; a short capture naming two moves is ambiguous and lists the full paths.
#[test]
fn move_parsing_matrix() {
    // White man on 30 can take 25 and 17 (30x21x14) or 26 and 18 (30x23x14).
    let pos = fen::parse("W:W30:B17,18,25,26", &E).unwrap();
    match parse_move(&E, &pos, "30x14") {
        Err(MoveError::Ambiguous(text, options)) => {
            assert_eq!(text, "30x14");
            assert!(options.contains("30x21x14"), "{options}");
            assert!(options.contains("30x23x14"), "{options}");
        }
        other => panic!("expected Ambiguous, got {other:?}"),
    }
    let a = parse_move(&E, &pos, "30x21x14").unwrap();
    assert_eq!(a.path(), &[20, 13]);
    assert_eq!(a.captured, common::squares(&[25, 17]));
    let b = parse_move(&E, &pos, "30x23x14").unwrap();
    assert_eq!(b.captured, common::squares(&[26, 18]));
    assert_eq!(parse_move(&E, &pos, " 30X23X14 ").unwrap(), b);
    assert_eq!(parse_move(&E, &pos, "30:23:14").unwrap(), b);
    for t in [
        "30x21", "30x23", "30-14", "30x14x21", "30x22x14", "25x14", "30-21",
    ] {
        assert_eq!(
            parse_move(&E, &pos, t),
            Err(MoveError::Illegal(t.to_string())),
            "{t}"
        );
    }
    // Capture compulsory: a quiet move beside a capture is illegal; a capture must go on.
    let cap = fen::parse("B:W8,K16:B3,10", &E).unwrap();
    assert_eq!(parse_move(&E, &cap, "3x19").unwrap().path(), &[11, 18]);
    assert_eq!(parse_move(&E, &cap, "3x12x19").unwrap().path(), &[11, 18]);
    for t in ["10-14", "10-15", "3x12", "3-7"] {
        assert_eq!(
            parse_move(&E, &cap, t),
            Err(MoveError::Illegal(t.to_string())),
            "{t}"
        );
    }
    // Quiet moves from the start position (Black to move).
    let start = Position::start(&E);
    let m = parse_move(&E, &start, "11-15").unwrap();
    assert_eq!((m.from, m.to, m.is_capture()), (10, 14, false));
    for t in ["11-18", "21-17", "11x18", "15-11", "12-17", "1-5"] {
        assert_eq!(
            parse_move(&E, &start, t),
            Err(MoveError::Illegal(t.to_string())),
            "{t}"
        );
    }
    for t in [
        "", " ", "30", "30-", "-14", "x14", "30x", "ax14", "30x14x", "30--14", "11-15-19",
        "1234-5", "30x1a", "30 14", "11–15",
    ] {
        assert!(
            matches!(parse_move(&E, &pos, t), Err(MoveError::Syntax(_))),
            "{t:?}: {:?}",
            parse_move(&E, &pos, t)
        );
    }
    // Well formed, with a square number off the board: said so, with the board's range.
    for (t, square) in [("0-5", 0), ("33-1", 33), ("30x99", 99)] {
        assert_eq!(
            parse_move(&E, &pos, t),
            Err(MoveError::OffBoard {
                text: t.to_string(),
                square,
                max: 32
            }),
            "{t}"
        );
    }
    // Error messages carry the text.
    let msg = parse_move(&E, &pos, "30x14").unwrap_err().to_string();
    assert!(msg.contains("30x14") && msg.contains("ambiguous"), "{msg}");
}

/// PDN squares are plain digits, as the FEN parser requires (it refuses `+5`); the move
/// parser goes through `str::parse::<u32>`, which also takes a leading `+`.
#[test]
fn move_parsing_refuses_signs() {
    let pos = fen::parse("W:W30:B17,18,25,26", &E).unwrap();
    for t in ["+30x21x14", "30x+21x14", "+11-15"] {
        assert!(
            matches!(parse_move(&E, &pos, t), Err(MoveError::Syntax(_))),
            "{t:?}: {:?}",
            parse_move(&E, &pos, t)
        );
    }
}

// ---------------------------------------------------------------------------------------
// The same through the CLI
// ---------------------------------------------------------------------------------------

/// Every bad FEN and refused position through `dtb probe --json`: one error object each, the
/// good position still answered, exit status 1, no panic.
#[test]
fn cli_probe_answers_every_bad_input_with_an_error_object() {
    let bad = [
        "garbage",
        "X:W5:B6",
        "W:X5:B6",
        "W:W5:W6",
        "W:Wx:B6",
        "W:W0:B6",
        "W:W33:B6",
        "W:W45:B6",
        "W:W6:B6",
        "W:W9-7:B1",
        "W:W5,,6:B1",
        "WW5:B6",
        "W:W3:B10",
        "B:W10:B30",
        "W:W5-17:B1",
        "W:WK1,K2,K3:BK30,K31",
        "W:W:B",
        "\"\"",
        // Issue 22's new inputs: algebraic squares, trailing fields, tags.
        "W:Wa2:B6",
        "W:Wi1:B6",
        "W:Wa1-c3:B6",
        "W:Wb8:Bh2",
        "W:W5:B6:F1:H0",
        "W:W5:B6:H0:F1:X",
        "[FEN \"W:W5:B6",
        // Text a naive JSON writer would break on: quotes, backslashes, control characters,
        // a lone combining mark, bidirectional and non-characters, a long line.
        "W:W\"5\\:B6",
        "W:W5\u{1}\u{1f}\u{7f}:B6\t\r",
        "W:W5:B6\u{2028}\u{2029}\u{202e}\u{feff}\u{fffe}",
        "\u{301}",
        "</script><script>",
    ];
    let long = format!("W:W{}:B6", "5,".repeat(2000));
    let bad: Vec<&str> = bad.iter().copied().chain([long.as_str()]).collect();
    // The directory given twice (issue 22: a search path, the first copy wins).
    let out = Command::new(dtb_tests::dtb_binary())
        .args(["probe", "--variant", "english", "--json", "--dir"])
        .arg(english4())
        .arg("--dir")
        .arg(english4())
        .args(&bad)
        .arg("W:W29:B25,22")
        .output()
        .unwrap();
    let stderr = String::from_utf8(out.stderr.clone()).unwrap();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let text = String::from_utf8(out.stdout).unwrap();
    // A strict consumer: one object a line, no raw control character or line separator
    // inside a line (JSON forbids the first; JavaScript's JSON.parse before ES2019 and line
    // readers split on the second), nothing but whole JSON values.
    assert!(text.ends_with('\n'));
    for l in text.lines() {
        assert!(
            !l.chars()
                .any(|c| c.is_control() || c == '\u{2028}' || c == '\u{2029}'),
            "unescaped character in {l:?}"
        );
        assert!(l.starts_with('{') && l.ends_with('}'), "{l:?}");
    }
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), bad.len() + 1);
    for (o, f) in lines.iter().zip(bad.iter().copied()) {
        assert_eq!(o["fen"], Value::from(f));
        let e = o["error"].as_str().unwrap_or_else(|| panic!("{f}: {o}"));
        assert!(!e.is_empty());
        // {"fen", "error", "kind"}: a kind a program can branch on.
        assert_eq!(o.as_object().unwrap().len(), 3, "{f}: {o}");
        assert!(
            [
                "malformed_fen",
                "illegal_position",
                "game_over",
                "missing_table"
            ]
            .contains(&o["kind"].as_str().unwrap_or("")),
            "{f}: {o}"
        );
    }
    let last = &lines[bad.len()];
    assert_eq!(last["wld"], Value::from("loss"));
    assert_eq!(last["dtw"], Value::from(0u64));
    assert_eq!(last["best_move"], Value::Null);

    // The empty string as an argument.
    let out = Command::new(dtb_tests::dtb_binary())
        .args(["probe", "--json", "--dir"])
        .arg(english4())
        .arg("")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let o: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(o["error"], Value::from("empty FEN"));
}

/// A corrupt table through the CLI: an error object naming the file, exit 1.
#[test]
fn cli_probe_reports_a_corrupt_file() {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(tmp.path());
    std::fs::write(
        file_of(tmp.path(), "0101", ValueKind::Wld),
        b"DTBTABLE junk",
    )
    .unwrap();
    let out = Command::new(dtb_tests::dtb_binary())
        .args(["probe", "--json", "--dir"])
        .arg(tmp.path())
        .args(["W:WK32:BK26", "W:WK2,K16,K23:B17"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    let e = lines[0]["error"].as_str().unwrap();
    assert!(e.contains("english-0101.wld"), "{e}");
    assert_eq!(lines[1]["wld"], Value::from("win"));
    assert_eq!(lines[1]["dtw"], Value::from(5u64));
}
