//! Probe draughts endgame tablebases built by `dtb gen`.
//!
//! `dtb-probe` is what an engine links: the rules of each variant as data ([`Rules`]), positions
//! and PDN FEN ([`Position`], [`fen`]), legal move generation ([`movegen`]), the slice index
//! ([`index`]), the table file format ([`mod@format`], [`table`]) and [`Tablebase`], which answers
//! win/loss/draw ([`Wld`]) and the exact distance to the end of the game in plies ([`Dtw`]) for
//! any legal position within the tables, resolving captures by search.
//!
//! ```no_run
//! use dtb_probe::{fen, Rules, Tablebase, Wld};
//!
//! let rules = Rules::ENGLISH;
//! // Lists the directory; each file is opened (memory-mapped) on first use.
//! let tb = Tablebase::open("tables", rules)?;
//! let pos = fen::parse("W:WK32:BK26", &rules)?;
//! assert_eq!(tb.probe_wld(&pos)?, Wld::Win);
//! let dtw = tb.probe_dtw(&pos)?; // plies to the end of the game, winner fastest
//! assert_eq!(dtw.plies, Some(9));
//! if let Some((best, value)) = tb.best_move(&pos)? {
//!     println!("{} keeps the {} in {:?} plies", best.to_pdn(false), value.wld, value.plies);
//! }
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
//! ([`Position::rules_id`], a [`rules::RulesId`]); a tablebase refuses a position of another
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
//! it exits.
//!
//! The flow from FEN to value: [`fen::parse`] -> [`Position`] -> captures resolved by
//! [`value::resolve`] -> [`value::normalize`] (colour symmetry) -> [`index::SliceIndex`] ->
//! [`table::TableFile::stored_code`] (block, zstd, cache) -> [`Wld`] / [`Dtw`].

pub mod board;
pub mod fen;
pub mod format;
pub mod index;
pub mod material;
pub mod movegen;
pub mod position;
pub mod rules;
pub mod table;
pub mod tablebase;
#[cfg(test)]
mod test_rng;
pub mod value;
pub mod variant;

pub use material::Material;
pub use position::Position;
pub use rules::{Color, Rules};
pub use table::CacheStats;
pub use tablebase::{Dtw, ProbeError, RankedMove, Reached, Tablebase};
pub use value::Wld;
pub use variant::RulesError;
