#![warn(missing_docs)]
// No function over 120 lines (clippy counts code lines) and none over 6 parameters
// (clippy.toml), outside tests: checked by clippy in CI.
#![warn(clippy::too_many_lines)]
//! Probe draughts endgame tablebases built by `dtb gen`.
//!
//! `dtb-probe` is what an engine links: the rules of each variant as data ([`Rules`], whose
//! field types, [`KingRange`] to [`Numbering`], are here too, for a rule set of one's own),
//! positions and PDN FEN ([`Position`], [`fen`]), legal move generation ([`movegen`]) and
//! [`Tablebase`], which answers win/loss/draw ([`Wld`]) and the exact distance to the end of
//! the game in plies ([`Dtw`]) for any legal position within the tables, resolving captures by
//! search.
//!
//! ```
//! use dtb_probe::{fen, ProbeError, Rules, Tablebase, Wld};
//!
//! # let tables = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/english-2");
//! let rules = Rules::ENGLISH;
//! // `tables`: a directory `dtb gen --variant english --pieces 2 --out DIR` wrote (here the
//! // crate's tests/data/english-2). Lists the directory; each file is opened (memory-mapped)
//! // on first use.
//! let tb = Tablebase::open(tables, rules)?;
//! let pos = fen::parse("W:WK32:BK26", &rules)?;
//! assert_eq!(tb.probe_wld(&pos)?, Wld::Win);
//! let dtw = tb.probe_dtw(&pos)?; // plies to the end of the game, winner fastest
//! assert_eq!(dtw.plies, Some(9));
//! let (best, value) = tb.best_move(&pos)?.expect("the side to move has a move");
//! assert_eq!(best.to_pdn(false), "32-27"); // and the value of the position it keeps:
//! assert_eq!((value.wld, value.plies), (Wld::Win, Some(9)));
//!
//! // With Black to move the same kings draw; a capture position is resolved by search.
//! assert_eq!(tb.probe_wld(&fen::parse("B:WK32:BK26", &rules)?)?, Wld::Draw);
//! assert_eq!(tb.probe_dtw(&fen::parse("W:W22:B18", &rules)?)?.plies, Some(1)); // 22x15
//!
//! // Three pieces are beyond these tables: a typed error, never a guess.
//! let three = fen::parse("W:W6,7:B27", &rules)?;
//! assert!(matches!(tb.probe_wld(&three), Err(ProbeError::MissingTable { pieces: 3, .. })));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # What the values mean
//!
//! Values are those of perfect play under the variant's rules of movement, capture and
//! crowning, and its outcome for a side that cannot move. They **ignore draws by repetition
//! and by move counts** (the English 40-move rule, International draughts' 25-move rule and
//! the like): a "win in 71 plies" may take longer
//! than a tournament's move-count rule allows, and a repetition never ends a line here.
//! Distances (DTW) are plies (half-moves) to the end of the game, the winner playing fastest
//! and the loser slowest. An engine that applies a move-count rule compares the distance with
//! the plies the rule still allows (a win with `plies` greater than that may be a draw in
//! its game); one that detects repetitions does so itself: the best line a tablebase gives
//! never repeats a position in a win, since every move brings the end one ply closer.
//!
//! Probes take `&self`: share one [`Tablebase`] between search threads. Every failure is a
//! [`ProbeError`] (illegal position, missing table, corrupt or foreign file naming its path,
//! a position read under other rules: [`ProbeError::VariantMismatch`]); no input makes a
//! probe panic or guess.
//!
//! # Positions know their rules
//!
//! A [`Position`] carries the identity of the rule set it was checked against
//! ([`Position::rules_id`], a [`RulesId`]); a tablebase refuses a position of another
//! rule set or board instead of reading its pieces under its own rules (an English
//! `W:WK32:BK26`, a win in 9, is a Russian draw). Read FEN with the tablebase's rules
//! ([`Tablebase::rules`]) or re-check a position with [`Position::with_rules`].
//!
//! # Memory
//!
//! [`Tablebase::with_cache_bytes`] bounds all decompressed blocks held in memory, the probing
//! threads' recent blocks included ([`CacheStats::thread_bytes`]); dropping the tablebase
//! frees them, [`Tablebase::clear_cache`] and [`Tablebase::set_cache_bytes`] free or shrink
//! them while it lives. Each probing thread also keeps a zstd context (about 100 KiB) until
//! it exits; with a bound of 0, a probe under way holds up to four blocks it has read (so
//! that its search decompresses none twice), freed when it returns.
//!
//! The flow from FEN to value: [`fen::parse`] -> [`Position`] -> captures resolved by search
//! -> colour symmetry -> the slice index -> the table file's block (zstd, cache) -> [`Wld`] /
//! [`Dtw`]. docs/ARCHITECTURE.md and docs/FORMAT.md describe each step.

pub mod analyze;
pub mod fen;
pub mod movegen;
pub mod pdn;
#[cfg(test)]
mod test_rng;

/// What `dtb-gen`, the C ABI, the Python package and the tests need beside the engine API:
/// the file format, the slice index, table files and their cache, value codes, board
/// geometry. **Not a stable interface**: engines use the items at the crate root, which
/// answer only checked values; what is here may change with any release.
#[doc(hidden)]
pub mod internal;
// The crate's own code names them as before (`crate::format::...`).
#[cfg(test)]
use internal::rng;
use internal::{
    board, count, format, index, material, position, rules, table, tablebase, value, variant,
};

pub use count::{
    Category, CountError, CountPreset, CountProfile, Regime, RegimeId, RegimeMaterial, Resets,
    COUNT_PRESETS, UNLIMITED_MARK,
};
pub use format::{FormatError, ValueKind};
pub use material::Material;
pub use movegen::Move;
pub use position::{Position, PositionError};
pub use rules::{
    BlockedOutcome, Color, KingLanding, KingRange, MidCapturePromotion, Numbering, Precedence,
    Removal, Rules, RulesId,
};
pub use table::{CacheStats, TableError};
pub use tablebase::{Dtc, Dtw, ProbeError, RankedDtcMove, RankedMove, Reached, Tablebase};
pub use value::Wld;
pub use variant::{Field, RulesError, Variant, FIELDS};

/// Text an error message quotes (a FEN, a variant): in double quotes, with Rust's escapes,
/// and at most its first 40 characters, then `... (N bytes)` with the whole length, so that a
/// megabyte of hostile input gives a one-line message: `"W:W1,2,3,4,5,6,7,8,9,10,11,12:B13,1"...
/// (10485760 bytes)`.
pub fn quote(text: &str) -> String {
    const SHOWN: usize = 40;
    match text.char_indices().nth(SHOWN) {
        None => format!("{text:?}"),
        Some((cut, _)) => format!("{:?}... ({} bytes)", &text[..cut], text.len()),
    }
}

/// An error and its causes in one line, outermost first, joined by `": "` (each error's
/// message says only its own level; its cause is its [`source`](std::error::Error::source)):
/// `tables/english-0101.wld: invalid header: not a dtb table file`.
pub fn report(e: &(dyn std::error::Error + 'static)) -> String {
    let mut line = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        line.push_str(": ");
        line.push_str(&c.to_string());
        cause = c.source();
    }
    line
}
