//! Move-count rules as data: count profiles, their regimes and limits (issue 35, the rule
//! model; design.md decision 13).
//!
//! A game of draughts is also drawn when too many plies pass without progress: English
//! draughts after 40 moves each with no man moved and nothing captured, International
//! draughts after 25 moves each of kings only, and so on. Win/loss/draw and DTW tables ignore
//! these rules (they are game-theoretic). A [`CountProfile`] states them as data, the way
//! [`Rules`] states the rules of movement:
//!
//! - every position has a *regime* ([`RegimeId`]) given by its material alone
//!   ([`CountProfile::regime`]); each regime has a *limit* L in plies, or none
//!   ([`CountProfile::limit`]);
//! - the *counter* c counts the plies since the last reset. A move **resets** it
//!   ([`CountProfile::resets`]) if and only if the regime after the move differs from the
//!   regime before it, or the move is one that resets inside that regime ([`Resets`]: a man
//!   move, a crowning included, or a capture in the general regimes; a capture or a crowning
//!   in Russian's kings-only regimes; nothing but a change of regime in International's
//!   *five* and *sixteen*); otherwise the successor's counter is c + 1;
//! - if the side to move has no legal move, the game is over as the variant says, whatever
//!   the counter; otherwise, if c >= L of the position's regime, the game is drawn
//!   ([`CountProfile::is_draw_by_count`]: the rule applied at once, as a claim at the first
//!   chance).
//!
//! Limits are in **plies** (half-moves): "40 moves each" is 80 plies. The presets
//! ([`COUNT_PRESETS`]) give each preset of [`Rules::PRESETS`] its federation's rule, with its
//! source; a player changes limits on the command line (`--variant english,count=100`,
//! [`crate::Variant::parse`]).
//!
//! [`CountProfile`]'s documentation has an example.
//!
//!
//! **Values under a profile** are DTC codes ([`crate::value::Code`], the DTW code's bits with
//! another meaning): for a position that wins or loses under the profile at counter 0, the
//! plies to the next move that resets the counter into a position the same side still wins
//! (or loses) under the profile, or to the end of the game; the winner minimises, the loser
//! maximises. The side to move with counter c then wins iff the code is a win in at most
//! L - c plies ([`CountProfile::result_at`]), which is why one number a position serves every
//! counter. A game-theoretic win the rule turns into a draw (a *cursed win*) has a code above
//! L ([`CountProfile::category`]), so the outcome of a DTC code is still the game-theoretic
//! one. The solver and the probe get them by one rule at every move,
//! [`CountProfile::convert`]. Whatever the profile, WLD and DTW tables are the same bytes,
//! which is why the profile lives beside the rules ([`crate::Variant`]), not in
//! [`Rules::encode`].

use crate::material::Material;
use crate::movegen::Move;
use crate::position::Position;
use crate::rules::Rules;
use crate::value::{Code, Wld, DRAW, LOST};

/// Whether the piece `mv` moves in `before` is a man.
#[inline]
fn moves_a_man(before: &Position, mv: &Move) -> bool {
    before.kings() & (1u64 << (mv.from & 63)) == 0
}

/// The limit a regime without one stands in for when DTC codes mark cursed results: a
/// result behind a conversion into a cursed win or blessed loss of a limited regime (a
/// Russian capture from the unlimited general regime into *kings-4-5*) has a code above it.
/// No real distance to conversion comes near it (the longest in any tablebase is a few
/// hundred plies; the solver stops at 8191).
pub const UNLIMITED_MARK: u16 = 4000;

/// A position's value under a count profile at counter 0, in lichess's names for Syzygy's
/// categories: a cursed win is a game-theoretic win that the count rule turns into a draw, a
/// blessed loss the loss it saves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Category {
    /// Won under the rule.
    Win,
    /// Won game-theoretically, drawn under the rule.
    CursedWin,
    /// Drawn.
    Draw,
    /// Lost game-theoretically, drawn under the rule.
    BlessedLoss,
    /// Lost under the rule.
    Loss,
}

impl Category {
    /// `win`, `cursed-win`, `draw`, `blessed-loss`, `loss` (lichess's names).
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Win => "win",
            Category::CursedWin => "cursed-win",
            Category::Draw => "draw",
            Category::BlessedLoss => "blessed-loss",
            Category::Loss => "loss",
        }
    }

    /// The game-theoretic outcome (a cursed win is a win).
    pub fn game_theoretic(self) -> Wld {
        match self {
            Category::Win | Category::CursedWin => Wld::Win,
            Category::Draw => Wld::Draw,
            Category::BlessedLoss | Category::Loss => Wld::Loss,
        }
    }

    /// The outcome under the rule at counter 0 (a cursed win is a draw).
    pub fn under_rule(self) -> Wld {
        match self {
            Category::Win => Wld::Win,
            Category::Loss => Wld::Loss,
            _ => Wld::Draw,
        }
    }
}

impl std::fmt::Display for Category {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which material a regime covers. A side is a *lone king* when it has one king and no men.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegimeMaterial {
    /// One side has a lone king; the other has `min_pieces..=max_pieces` pieces, at least
    /// `min_kings` of them kings (King against King is a lone king against one piece, a king).
    LoneKing {
        /// Fewest pieces of the stronger side.
        min_pieces: u8,
        /// Most pieces of the stronger side.
        max_pieces: u8,
        /// Fewest kings among them.
        min_kings: u8,
    },
    /// Both sides have kings only, `min_pieces..=max_pieces` pieces in all.
    KingsOnly {
        /// Fewest pieces on the board.
        min_pieces: u8,
        /// Most pieces on the board.
        max_pieces: u8,
    },
    /// Every material that no earlier regime of the profile takes: the general regime, always
    /// a profile's last.
    Rest,
}

impl RegimeMaterial {
    /// Whether `m` is of this material.
    pub fn covers(&self, m: &Material) -> bool {
        match *self {
            RegimeMaterial::LoneKing {
                min_pieces,
                max_pieces,
                min_kings,
            } => {
                let strong = |men: u8, kings: u8| {
                    let pieces = men + kings;
                    (min_pieces..=max_pieces).contains(&pieces) && kings >= min_kings
                };
                let lone = |men: u8, kings: u8| men == 0 && kings == 1;
                (lone(m.black_men, m.black_kings) && strong(m.white_men, m.white_kings))
                    || (lone(m.white_men, m.white_kings) && strong(m.black_men, m.black_kings))
            }
            RegimeMaterial::KingsOnly {
                min_pieces,
                max_pieces,
            } => {
                m.men() == 0
                    && m.white_kings > 0
                    && m.black_kings > 0
                    && (u32::from(min_pieces)..=u32::from(max_pieces)).contains(&m.pieces())
            }
            RegimeMaterial::Rest => true,
        }
    }
}

/// Which moves reset the counter inside one regime. A move that changes the regime always
/// resets it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Resets {
    /// A man move (a crowning included) or a capture: "N moves without a man move or a
    /// capture", the general rule of every profile that has one.
    ManMoveOrCapture,
    /// A capture or a crowning, not a man's plain step: Russian 7.2.6, "the balance of pieces
    /// has not changed".
    CaptureOrCrowning,
    /// Nothing but a change of regime: the count of an endgame runs from the moment its
    /// material is reached (International's *five* and *sixteen*, Russian 7.2.8, Pool's
    /// three kings against one).
    RegimeChangeOnly,
}

impl Resets {
    /// The words `dtb variants` prints.
    pub fn words(self) -> &'static str {
        match self {
            Resets::ManMoveOrCapture => "a man move (a crowning included) or a capture",
            Resets::CaptureOrCrowning => "a capture or a crowning",
            Resets::RegimeChangeOnly => "only a change of regime",
        }
    }
}

/// The regime of a position under a [`CountProfile`]: an index into
/// [`CountProfile::regimes`] (0-based, the general regime last).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RegimeId(u8);

impl RegimeId {
    /// The index into [`CountProfile::regimes`].
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One regime of a profile, as [`CountProfile::regimes`] lists it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Regime {
    /// Its name in `count=NAME:PLIES` (`general`, `five`, `sixteen`, ...).
    pub name: &'static str,
    /// The material it covers, as data.
    pub material: RegimeMaterial,
    /// The material in words (`dtb variants`).
    pub material_words: &'static str,
    /// The draw limit in plies (a draw when the counter reaches it); `None`: this regime
    /// never draws by count.
    pub limit: Option<u16>,
    /// Which moves reset the counter inside it.
    pub resets: Resets,
}

/// The structure of a profile: its regimes' names, materials and resets, in the order they
/// are tried. Limits are the profile's data; a profile's structure comes from a preset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Shape {
    /// One regime, the general one.
    General,
    /// International (FMJD): five, sixteen, general.
    Fmjd,
    /// Russian (FMJD-64 7.2.4-7.2.8).
    Russian,
    /// Pool: three kings against a lone king, general.
    Pool,
}

/// A regime's fixed part: name, material, words, resets.
type RegimeDef = (&'static str, RegimeMaterial, &'static str, Resets);

const GENERAL: RegimeDef = (
    "general",
    RegimeMaterial::Rest,
    "any material",
    Resets::ManMoveOrCapture,
);

const FMJD_FIVE: RegimeDef = (
    "five",
    RegimeMaterial::LoneKing {
        min_pieces: 1,
        max_pieces: 2,
        min_kings: 1,
    },
    "a lone king against 2 kings, a king and a man, or a king",
    Resets::RegimeChangeOnly,
);

impl Shape {
    const ALL: [Shape; 4] = [Shape::General, Shape::Fmjd, Shape::Russian, Shape::Pool];

    fn regimes(self) -> &'static [RegimeDef] {
        match self {
            Shape::General => &[GENERAL],
            Shape::Fmjd => &[
                FMJD_FIVE,
                (
                    "sixteen",
                    RegimeMaterial::LoneKing {
                        min_pieces: 3,
                        max_pieces: 3,
                        min_kings: 1,
                    },
                    "a lone king against 3 kings, 2 kings and a man, or a king and 2 men",
                    Resets::RegimeChangeOnly,
                ),
                (
                    "general",
                    RegimeMaterial::Rest,
                    "any other material",
                    Resets::ManMoveOrCapture,
                ),
            ],
            Shape::Russian => &[
                FMJD_FIVE,
                (
                    "fifteen",
                    RegimeMaterial::LoneKing {
                        min_pieces: 3,
                        max_pieces: u8::MAX,
                        min_kings: 1,
                    },
                    "a lone king against 3 or more pieces, at least one a king",
                    Resets::ManMoveOrCapture,
                ),
                (
                    "kings-4-5",
                    RegimeMaterial::KingsOnly {
                        min_pieces: 4,
                        max_pieces: 5,
                    },
                    "kings only on both sides, 4 or 5 pieces (no lone king)",
                    Resets::CaptureOrCrowning,
                ),
                (
                    "kings-6-7",
                    RegimeMaterial::KingsOnly {
                        min_pieces: 6,
                        max_pieces: 7,
                    },
                    "kings only on both sides, 6 or 7 pieces (no lone king)",
                    Resets::CaptureOrCrowning,
                ),
                (
                    "general",
                    RegimeMaterial::Rest,
                    "any other material",
                    Resets::ManMoveOrCapture,
                ),
            ],
            Shape::Pool => &[
                (
                    "three-kings",
                    RegimeMaterial::LoneKing {
                        min_pieces: 3,
                        max_pieces: 3,
                        min_kings: 3,
                    },
                    "a lone king against 3 kings",
                    Resets::RegimeChangeOnly,
                ),
                (
                    "general",
                    RegimeMaterial::Rest,
                    "any other material",
                    Resets::ManMoveOrCapture,
                ),
            ],
        }
    }
}

/// Most regimes a profile has (Russian's five).
const MAX_REGIMES: usize = 5;

/// A variant's move-count rules: a regime for every material and a limit in plies for each.
///
/// The counter c of a position counts the plies since the last reset; a move resets it
/// ([`CountProfile::resets`]) if and only if it changes the regime ([`CountProfile::regime`])
/// or is a move that resets inside the regime ([`Resets`]); otherwise the successor's counter
/// is c + 1. A side to move with no legal move has lost (or what the variant's blocked rule
/// says) whatever the counter; otherwise c at or over the regime's limit is a draw
/// ([`CountProfile::is_draw_by_count`]).
///
/// ```
/// use dtb_probe::{fen, CountProfile, Rules};
///
/// let rules = Rules::INTERNATIONAL;
/// let count = CountProfile::for_rules(&rules);
/// // Three kings against a lone king: 16 moves each (32 plies).
/// let pos = fen::parse("W:WK1,K2,K3:BK50", &rules)?;
/// let r = count.regime_of(&pos);
/// assert_eq!(count.regime_name(r), "sixteen");
/// assert_eq!(count.limit(r), Some(32));
/// assert!(!count.is_draw_by_count(31, &pos));
/// assert!(count.is_draw_by_count(32, &pos));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// Construct one from a preset ([`CountProfile::for_rules`], [`COUNT_PRESETS`]), change its
/// limits with [`CountProfile::with_limits`] (the `count=` text of `--variant`), or read it
/// from its 16-byte code ([`CountProfile::decode`]). The regimes' materials and resets come
/// from the preset's rule text; a player sets the limits.
///
/// A profile is not part of [`Rules`]: WLD and DTW values are game-theoretic and the same
/// under every profile (design.md decision 13), so [`Rules::encode`], which WLD and DTW file
/// headers store, does not include it, and a WLD file is read under any profile. A profile
/// goes beside the rules in a [`crate::Variant`]; its code ([`CountProfile::encode`]) is for
/// the headers of DTC files, whose values are under it ([`crate::Tablebase::probe_dtc`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CountProfile {
    shape: Shape,
    /// Plies per regime in [`Shape::regimes`] order; 0: no limit.
    limits: [u16; MAX_REGIMES],
}

/// A preset's count profile and where its rule comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CountPreset {
    /// The [`Rules`] preset's name.
    pub variant: &'static str,
    /// Its profile.
    pub profile: CountProfile,
    /// The rule text it follows, and how it was read.
    pub source: &'static str,
}

const fn profile(shape: Shape, limits: [u16; MAX_REGIMES]) -> CountProfile {
    CountProfile { shape, limits }
}

/// Every preset's count profile, in the order of [`Rules::PRESETS`], with its source.
pub const COUNT_PRESETS: [CountPreset; 10] = [
    CountPreset {
        variant: "english",
        profile: CountProfile::ENGLISH,
        source: "WCDF/EDA rules: a draw may be claimed after 40 moves each with no man moved \
                 and nothing captured (variants.md, \"Game-length draw rules\"): 80 plies",
    },
    CountPreset {
        variant: "international",
        profile: CountProfile::INTERNATIONAL,
        source: "FMJD rules as lidraughts plays them: 25 moves each of kings only without a \
                 capture (50 plies); a lone king against 3 pieces with a king, 16 moves each \
                 (32); against 1 or 2 pieces with a king, 5 moves each (10); inside these two \
                 a man move or crowning does not reset, reaching the material does",
    },
    CountPreset {
        variant: "gracz8",
        profile: CountProfile::GRACZ8,
        source: "gracz8 rules (seed 002): 80 half-moves in a row without a capture or a man \
                 move",
    },
    CountPreset {
        variant: "russian",
        profile: CountProfile::RUSSIAN,
        source: "FMJD-64 rules 7.2.4-7.2.8 (fmjd64.org) as lidraughts reads them: 7.2.8 a lone \
                 king against 1-2 pieces with a king, 5 moves (10 plies); 7.2.4 and 7.2.5 a \
                 lone king against 3+ pieces with a king, 15 moves (30); 7.2.6 kings only, \
                 4-5 pieces 30 moves, 6-7 pieces 60 moves, counted in plies as lidraughts \
                 does (30 and 60), only a capture or crowning resets, and it replaces 7.2.5 \
                 there; 7.2.5 only in lone-king endings, as lidraughts (no general limit); \
                 7.2.7 (the long diagonal) left out: it depends on where the lone king stands",
    },
    CountPreset {
        variant: "brazilian",
        profile: CountProfile::BRAZILIAN,
        source: "Brazilian rules: 20 moves each of kings only without a capture (40 plies) \
                 (lidraughts plays Brazilian with the Russian draw rules instead)",
    },
    CountPreset {
        variant: "pool",
        profile: CountProfile::POOL,
        source: "American Pool Checkers rule 31 (Black and Waters, 1947): three kings against \
                 one must catch it within 13 moves (26 plies); no general no-progress rule \
                 found",
    },
    CountPreset {
        variant: "czech",
        profile: CountProfile::CZECH,
        source: "Czech rules: 15 moves each without a man move or a capture (30 plies)",
    },
    CountPreset {
        variant: "italian",
        profile: CountProfile::NONE,
        source: "no count rule known: game-theoretic values only",
    },
    CountPreset {
        variant: "spanish",
        profile: CountProfile::NONE,
        source: "no count rule known: game-theoretic values only",
    },
    CountPreset {
        variant: "international-optional",
        profile: CountProfile::INTERNATIONAL,
        source: "as international",
    },
];

/// Why a `count=` text is not a profile. Each message is one line that says what is allowed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CountError {
    /// `count=` with nothing after it.
    #[error(
        "count= needs limits in plies: count=PLIES (the general regime), \
         count=REGIME:PLIES,..., count=none or count=mtc"
    )]
    Empty,
    /// A regime name no profile has.
    #[error("unknown count regime {name:?}: the regimes of {variant} are {regimes}")]
    UnknownRegime {
        name: String,
        variant: String,
        regimes: String,
    },
    /// A regime of another profile (`english,count=five:10`).
    #[error("{variant}'s count profile has no regime {name} (its regimes: {regimes})")]
    NotInProfile {
        name: &'static str,
        variant: String,
        regimes: String,
    },
    /// A limit that is not a whole number of plies 1-65535 or `none`.
    #[error("count limit {value:?} for {regime}: a limit is a whole number of plies, 1 to 65535, or none")]
    BadLimit { regime: &'static str, value: String },
    /// A limit of 0.
    #[error(
        "count limit 0 for {regime}: a limit is at least 1 ply (0 would draw every position \
         at once); none turns it off"
    )]
    Zero { regime: &'static str },
    /// A regime given twice.
    #[error("count regime {regime} is given twice (each regime at most once)")]
    Repeated { regime: &'static str },
    /// `count=none` or `count=mtc` beside other limits.
    #[error("count=none (every limit off) and count=mtc (moves to conversion) take no other item")]
    NoneNotAlone,
    /// `count=` given twice in one `--variant`.
    #[error("count= is given twice (write every limit in one count=)")]
    Twice,
}

impl CountProfile {
    /// English: 40 moves each without a man move or capture, 80 plies.
    pub const ENGLISH: CountProfile = profile(Shape::General, [80, 0, 0, 0, 0]);
    /// gracz8: 80 half-moves without a capture or a man move.
    pub const GRACZ8: CountProfile = profile(Shape::General, [80, 0, 0, 0, 0]);
    /// International (FMJD): five 10, sixteen 32, general 50 plies.
    pub const INTERNATIONAL: CountProfile = profile(Shape::Fmjd, [10, 32, 50, 0, 0]);
    /// Russian (FMJD-64 as lidraughts plays it): five 10, fifteen 30, kings-4-5 30, kings-6-7
    /// 60 plies; no general limit.
    pub const RUSSIAN: CountProfile = profile(Shape::Russian, [10, 30, 30, 60, 0]);
    /// Brazilian: 20 moves each of kings only, 40 plies.
    pub const BRAZILIAN: CountProfile = profile(Shape::General, [40, 0, 0, 0, 0]);
    /// Czech: 15 moves each, 30 plies.
    pub const CZECH: CountProfile = profile(Shape::General, [30, 0, 0, 0, 0]);
    /// Pool: three kings against a lone king, 13 moves (26 plies); no general limit.
    pub const POOL: CountProfile = profile(Shape::Pool, [26, 0, 0, 0, 0]);
    /// No count rule (Italian, Spanish): one general regime without a limit.
    pub const NONE: CountProfile = profile(Shape::General, [0; MAX_REGIMES]);
    /// Moves to conversion (`count=mtc`, `dtb gen --values mtc`), in any variant: one
    /// general regime without a limit, reset by every man move (a crowning included) and
    /// every capture, so that a DTC code counts the plies to the next conversion into a
    /// position the same side still wins, whatever the variant's own count rule (the MTC of
    /// KingsRow's English tables, in plies). The same profile as [`CountProfile::NONE`].
    pub const MTC: CountProfile = CountProfile::NONE;

    /// The profile of `rules`' preset: of the preset whose name [`Rules::spec`] writes first
    /// (the preset the rules differ from in the fewest fields), so that house rules keep
    /// their game's count rule.
    pub fn for_rules(rules: &Rules) -> CountProfile {
        let spec = rules.spec();
        let base = spec.split(',').next().unwrap_or("");
        COUNT_PRESETS
            .iter()
            .find(|p| p.variant == base)
            .map_or(CountProfile::NONE, |p| p.profile)
    }

    /// The preset entry of `rules`' preset ([`CountProfile::for_rules`]), with its source.
    pub fn preset_for(rules: &Rules) -> Option<&'static CountPreset> {
        let spec = rules.spec();
        let base = spec.split(',').next().unwrap_or("");
        COUNT_PRESETS.iter().find(|p| p.variant == base)
    }

    /// Whether no regime has a limit (no position is ever drawn by count).
    pub fn is_none(&self) -> bool {
        self.limits.iter().all(|&l| l == 0)
    }

    fn defs(&self) -> &'static [RegimeDef] {
        self.shape.regimes()
    }

    /// The regimes, in the order they are tried, the general one last.
    pub fn regimes(&self) -> Vec<Regime> {
        self.defs()
            .iter()
            .zip(self.limits)
            .map(|(&(name, material, words, resets), l)| Regime {
                name,
                material,
                material_words: words,
                limit: (l != 0).then_some(l),
                resets,
            })
            .collect()
    }

    /// The regime of material `m`: the first of [`CountProfile::regimes`] that covers it.
    pub fn regime(&self, m: &Material) -> RegimeId {
        let defs = self.defs();
        let i = defs
            .iter()
            .position(|d| d.1.covers(m))
            .unwrap_or(defs.len() - 1);
        RegimeId(i as u8)
    }

    /// The regime of `pos` (of its material).
    pub fn regime_of(&self, pos: &Position) -> RegimeId {
        self.regime(&pos.material())
    }

    /// The name of regime `r` (`general` for an id out of range).
    pub fn regime_name(&self, r: RegimeId) -> &'static str {
        self.defs().get(r.index()).map_or("general", |d| d.0)
    }

    /// The limit of regime `r` in plies; `None` if it has none (or `r` is out of range).
    pub fn limit(&self, r: RegimeId) -> Option<u16> {
        self.limits
            .get(r.index())
            .copied()
            .filter(|&l| l != 0 && r.index() < self.defs().len())
    }

    /// Whether a move from material `before` to material `after` resets the counter; `man`:
    /// whether the piece moved was a man. It does if the regimes differ, or by what resets
    /// inside the regime ([`Resets`]): a capture takes pieces, a crowning changes the material
    /// without taking any.
    pub fn resets_material(&self, before: &Material, after: &Material, man: bool) -> bool {
        let r = self.regime(before);
        if self.regime(after) != r {
            return true;
        }
        let capture = after.pieces() < before.pieces();
        match self.defs()[r.index()].3 {
            Resets::ManMoveOrCapture => man || capture,
            Resets::CaptureOrCrowning => before != after,
            Resets::RegimeChangeOnly => false,
        }
    }

    /// Whether playing `mv` in `before` resets the counter: the successor's counter is 0 if
    /// so, else the counter plus 1. `mv` must be a legal move of `before` (from
    /// [`crate::movegen::legal_moves`]); another move gives an answer about no real position.
    pub fn resets(&self, before: &Position, mv: &Move) -> bool {
        self.resets_to(before, mv, &mv.apply_unchecked(before))
    }

    /// [`CountProfile::resets`] with the successor `after` already made.
    #[doc(hidden)]
    #[inline]
    pub fn resets_to(&self, before: &Position, mv: &Move, after: &Position) -> bool {
        self.resets_material(
            &before.material(),
            &after.material(),
            moves_a_man(before, mv),
        )
    }

    /// [`CountProfile::convert`] for the move `mv` of `before`, which leads to `after` (its
    /// successor, already made): what a root move or a verified move stands for.
    #[doc(hidden)]
    #[inline]
    pub fn convert_move(
        &self,
        before: &Position,
        mv: &Move,
        after: &Position,
        child: Code,
    ) -> Code {
        self.convert(
            &before.material(),
            &after.material(),
            moves_a_man(before, mv),
            child,
        )
    }

    /// The limit DTC codes of material `m` are read against: its regime's limit, or
    /// [`UNLIMITED_MARK`] for a regime without one.
    pub fn dtc_limit(&self, m: &Material) -> u16 {
        self.limit(self.regime(m)).unwrap_or(UNLIMITED_MARK)
    }

    /// The DTC code a move from material `before` to a position of DTC code `child` (from
    /// its side to move, the mover's opponent) stands for, before the ply the move itself
    /// takes ([`Code::parent`] adds it): the one rule by which the solver, the probe's
    /// capture search and a root move's value combine DTC codes. `man`: whether the piece
    /// moved was a man (only a quiet move's matters; a capture resets as [`Resets`] says).
    ///
    /// A move that does not reset the counter passes `child` on: the successor's counter is
    /// one more, so its distance adds up. A move that resets it starts the successor at
    /// counter 0, where only its category counts: a win or loss under the rule becomes one
    /// that is over (0 plies), a cursed win or blessed loss one in the limit of `before`'s
    /// regime ([`CountProfile::dtc_limit`]) plies, so that the mover's value lies above that
    /// limit (cursed or blessed too) and keeps the game-theoretic outcome; a draw stays one.
    #[doc(hidden)]
    #[inline]
    pub fn convert(&self, before: &Material, after: &Material, man: bool, child: Code) -> Code {
        if !self.resets_material(before, after, man) {
            return child;
        }
        let Some(plies) = child.plies() else {
            return DRAW;
        };
        let win = child.wld() == Wld::Win;
        let d = if plies <= self.dtc_limit(after) {
            0
        } else {
            self.dtc_limit(before)
        };
        match (win, d) {
            (false, 0) => LOST,
            (true, d) => Code::win(d),
            (false, d) => Code::loss(d),
        }
    }

    /// The category at counter 0 of a position of material `m` whose DTC code is `code`.
    #[doc(hidden)]
    pub fn category(&self, m: &Material, code: Code) -> Category {
        let Some(plies) = code.plies() else {
            return Category::Draw;
        };
        let within = plies <= self.dtc_limit(m);
        match (code.wld(), within) {
            (Wld::Win, true) => Category::Win,
            (Wld::Win, false) => Category::CursedWin,
            (_, true) => Category::Loss,
            (_, false) => Category::BlessedLoss,
        }
    }

    /// The result for the side to move of a position of material `m` and DTC code `code`
    /// when the counter stands at `counter` plies: a win (or loss) iff the code is one in at
    /// most L - `counter` plies (a game that is over, 0 plies, whatever the counter). A
    /// regime without a limit ignores the counter.
    #[doc(hidden)]
    pub fn result_at(&self, m: &Material, code: Code, counter: u16) -> Wld {
        let Some(plies) = code.plies() else {
            return Wld::Draw;
        };
        let r = self.regime(m);
        let room = match self.limit(r) {
            Some(l) => l.saturating_sub(counter),
            None => UNLIMITED_MARK,
        };
        if plies == 0 || plies <= room {
            code.wld()
        } else {
            Wld::Draw
        }
    }

    /// Whether `pos` with counter `counter` (plies since the last reset) is drawn by the count:
    /// `counter` at or over its regime's limit. The caller first checks that the side to move
    /// has a legal move: with none the game is over as the variant says (a loss, or its
    /// blocked outcome), which takes precedence over the count.
    pub fn is_draw_by_count(&self, counter: u16, pos: &Position) -> bool {
        self.limit(self.regime_of(pos))
            .is_some_and(|l| counter >= l)
    }

    /// This profile with limits changed by `text`, the value of `count=` (its items separated
    /// by commas): `PLIES` sets the general regime's limit, `REGIME:PLIES` that regime's,
    /// `REGIME:none` turns one off, `none` alone turns them all off, and `mtc` alone gives
    /// [`CountProfile::MTC`] (moves to conversion, whatever this profile's regimes). Limits
    /// are plies (half-moves), 1 to 65535. `variant` names the variant in errors.
    ///
    /// # Errors
    /// [`CountError`]: an empty text, a regime no profile has or this one lacks, a limit that
    /// is not a number of plies or is 0, a regime given twice, `none` or `mtc` beside other
    /// items.
    pub fn with_limits(&self, text: &str, variant: &str) -> Result<CountProfile, CountError> {
        let items: Vec<&str> = text.split(',').map(str::trim).collect();
        if items.iter().all(|s| s.is_empty()) {
            return Err(CountError::Empty);
        }
        let word = |s: &&str| s.eq_ignore_ascii_case("none") || s.eq_ignore_ascii_case("mtc");
        if items.iter().any(word) {
            if items.len() > 1 {
                return Err(CountError::NoneNotAlone);
            }
            if items[0].eq_ignore_ascii_case("mtc") {
                return Ok(CountProfile::MTC);
            }
            return Ok(CountProfile {
                limits: [0; MAX_REGIMES],
                ..*self
            });
        }
        let defs = self.defs();
        let regimes = || defs.iter().map(|d| d.0).collect::<Vec<_>>().join(", ");
        let mut out = *self;
        let mut given = [false; MAX_REGIMES];
        for item in items {
            let (name, value) = match item.split_once(':') {
                Some((n, v)) => (n.trim(), v.trim()),
                None => ("general", item),
            };
            let Some(i) = defs.iter().position(|d| d.0.eq_ignore_ascii_case(name)) else {
                let known = Shape::ALL
                    .iter()
                    .flat_map(|s| s.regimes())
                    .find(|d| d.0.eq_ignore_ascii_case(name));
                return Err(match known {
                    Some(d) => CountError::NotInProfile {
                        name: d.0,
                        variant: variant.to_string(),
                        regimes: regimes(),
                    },
                    None => CountError::UnknownRegime {
                        name: crate::fen::clip(name),
                        variant: variant.to_string(),
                        regimes: regimes(),
                    },
                });
            };
            let regime = defs[i].0;
            if std::mem::replace(&mut given[i], true) {
                return Err(CountError::Repeated { regime });
            }
            out.limits[i] = if value.eq_ignore_ascii_case("none") {
                0
            } else {
                match value.parse::<u16>() {
                    Ok(0) => return Err(CountError::Zero { regime }),
                    Ok(n) => n,
                    Err(_) => {
                        return Err(CountError::BadLimit {
                            regime,
                            value: crate::fen::clip(value),
                        })
                    }
                }
            };
        }
        Ok(out)
    }

    /// Every regime's limit as `count=` writes it, in the order of
    /// [`CountProfile::regimes`]: `general:80`, `five:10,sixteen:32,general:50`,
    /// `general:none`.
    pub fn describe(&self) -> String {
        self.regimes()
            .iter()
            .map(|r| match r.limit {
                Some(l) => format!("{}:{l}", r.name),
                None => format!("{}:none", r.name),
            })
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The `count=` value that turns `base` into this profile ([`CountProfile::with_limits`]
    /// reads it back), or `None` when they are equal or of different structure: each regime
    /// whose limit differs as `REGIME:PLIES` or `REGIME:none`, or `PLIES` alone for a profile
    /// of one regime, `none` when every limit is off, or `mtc` for [`CountProfile::MTC`]
    /// against a profile of other regimes.
    pub fn limits_text(&self, base: &CountProfile) -> Option<String> {
        if *self == CountProfile::MTC && base.shape != Shape::General {
            return Some("mtc".to_string());
        }
        if self.shape != base.shape || self.limits == base.limits {
            return None;
        }
        if self.is_none() {
            return Some("none".to_string());
        }
        let word = |l: u16| {
            if l == 0 {
                "none".to_string()
            } else {
                l.to_string()
            }
        };
        let defs = self.defs();
        if defs.len() == 1 {
            return Some(word(self.limits[0]));
        }
        let items: Vec<String> = defs
            .iter()
            .enumerate()
            .filter(|&(i, _)| self.limits[i] != base.limits[i])
            .map(|(i, d)| format!("{}:{}", d.0, word(self.limits[i])))
            .collect();
        Some(items.join(","))
    }

    /// The profile as 16 bytes, for the headers of DTC files (issue 35): byte 0 the encoding
    /// version (1); byte 1 the structure (0 general only, 1 International's five, sixteen,
    /// general; 2 Russian's five, fifteen, kings-4-5, kings-6-7, general; 3 Pool's
    /// three-kings, general); bytes 2-11 the limit of each regime in that order as a
    /// little-endian u16 (0: no limit; unused regimes 0); bytes 12-15 zero. Distinct profiles
    /// have distinct codes ([`CountProfile::decode`] reverses it).
    pub fn encode(&self) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[0] = 1;
        b[1] = self.shape as u8;
        for (i, l) in self.limits.iter().enumerate() {
            b[2 + 2 * i..4 + 2 * i].copy_from_slice(&l.to_le_bytes());
        }
        b
    }

    /// The profile whose [`CountProfile::encode`] is `code`; `None` for a code no profile has
    /// (another version, an unknown structure, a limit for a regime the structure lacks).
    pub fn decode(code: &[u8; 16]) -> Option<CountProfile> {
        if code[0] != 1 || code[12..].iter().any(|&b| b != 0) {
            return None;
        }
        let shape = *Shape::ALL.get(code[1] as usize)?;
        let mut limits = [0u16; MAX_REGIMES];
        for (i, l) in limits.iter_mut().enumerate() {
            *l = u16::from_le_bytes([code[2 + 2 * i], code[3 + 2 * i]]);
            if *l != 0 && i >= shape.regimes().len() {
                return None;
            }
        }
        Some(CountProfile { shape, limits })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fen;
    use crate::movegen::{legal_moves, parse_move, Counting};

    fn name(p: &CountProfile, m: &str) -> &'static str {
        let d: Vec<u8> = m.bytes().map(|b| b - b'0').collect();
        p.regime_name(p.regime(&Material::new(d[0], d[1], d[2], d[3])))
    }

    #[test]
    fn international_regimes_by_material() {
        let p = CountProfile::INTERNATIONAL;
        // white men, white kings, black men, black kings
        assert_eq!(name(&p, "0301"), "sixteen"); // 3 kings v king
        assert_eq!(name(&p, "0103"), "sixteen"); // either colour
        assert_eq!(name(&p, "1201"), "sixteen"); // 2 kings + man v king
        assert_eq!(name(&p, "2101"), "sixteen"); // king + 2 men v king
        assert_eq!(name(&p, "0201"), "five"); // 2 kings v king
        assert_eq!(name(&p, "1101"), "five"); // king + man v king
        assert_eq!(name(&p, "0101"), "five"); // king v king
        assert_eq!(name(&p, "1301"), "general"); // 3 kings + man v king
        assert_eq!(name(&p, "0401"), "general"); // 4 kings v king
        assert_eq!(name(&p, "2001"), "general"); // 2 men v king: no king
        assert_eq!(name(&p, "0210"), "general"); // a lone man is not a lone king
        assert_eq!(name(&p, "0202"), "general");
        let limits: Vec<_> = p.regimes().iter().map(|r| (r.name, r.limit)).collect();
        assert_eq!(
            limits,
            [
                ("five", Some(10)),
                ("sixteen", Some(32)),
                ("general", Some(50))
            ]
        );
    }

    #[test]
    fn russian_regimes_by_material() {
        let p = CountProfile::RUSSIAN;
        assert_eq!(name(&p, "0201"), "five"); // 7.2.8
        assert_eq!(name(&p, "1101"), "five");
        assert_eq!(name(&p, "0301"), "fifteen"); // 7.2.4
        assert_eq!(name(&p, "0501"), "fifteen"); // 3 kings or more
        assert_eq!(name(&p, "2101"), "fifteen"); // 7.2.5 with a lone king
        assert_eq!(name(&p, "0202"), "kings-4-5"); // 7.2.6
        assert_eq!(name(&p, "0302"), "kings-4-5");
        assert_eq!(name(&p, "0303"), "kings-6-7");
        assert_eq!(name(&p, "0403"), "kings-6-7");
        assert_eq!(name(&p, "0404"), "general"); // 8 kings: 7.2.5
        assert_eq!(name(&p, "1202"), "general"); // men on the board
        assert_eq!(name(&p, "3001"), "general"); // 3 men v king: no king
        let r = |m| p.regime(&Material::from_counts(m));
        assert_eq!(p.limit(r([0, 2, 0, 1])), Some(10));
        assert_eq!(p.limit(r([0, 3, 0, 1])), Some(30));
        assert_eq!(p.limit(r([0, 2, 0, 2])), Some(30));
        assert_eq!(p.limit(r([0, 4, 0, 3])), Some(60));
        assert_eq!(p.limit(r([1, 2, 0, 2])), None); // 7.2.5 only with a lone king
    }

    #[test]
    fn pool_and_general_profiles() {
        let p = CountProfile::POOL;
        assert_eq!(name(&p, "0301"), "three-kings");
        assert_eq!(name(&p, "1201"), "general");
        assert_eq!(p.limit(p.regime(&Material::new(0, 3, 0, 1))), Some(26));
        assert_eq!(p.limit(p.regime(&Material::new(0, 2, 0, 1))), None);
        for (p, l) in [
            (CountProfile::ENGLISH, Some(80)),
            (CountProfile::GRACZ8, Some(80)),
            (CountProfile::BRAZILIAN, Some(40)),
            (CountProfile::CZECH, Some(30)),
            (CountProfile::NONE, None),
        ] {
            assert_eq!(p.regimes().len(), 1);
            assert_eq!(name(&p, "0301"), "general");
            assert_eq!(p.limit(p.regime(&Material::new(0, 3, 0, 1))), l);
        }
        assert!(CountProfile::NONE.is_none());
        assert!(!CountProfile::POOL.is_none());
    }

    /// The move `text` in `fen` and whether it resets under `p`.
    fn resets(p: &CountProfile, rules: &Rules, fen_text: &str, text: &str) -> bool {
        let pos = fen::parse(fen_text, rules).unwrap();
        let mv = parse_move(rules, &pos, text).unwrap();
        p.resets(&pos, &mv)
    }

    #[test]
    fn which_moves_reset() {
        let e = (&CountProfile::ENGLISH, &Rules::ENGLISH);
        // General regime: a man move resets, a king move does not, a capture does.
        assert!(resets(e.0, e.1, "W:W22,K32:B5", "22-18"));
        assert!(!resets(e.0, e.1, "W:W22,K32:B5", "32-27"));
        assert!(resets(e.0, e.1, "W:WK22:BK18,K1", "22x15"));
        // A crowning is a man move.
        assert!(resets(e.0, e.1, "W:W5,K32:BK20", "5-1"));

        let i = (&CountProfile::INTERNATIONAL, &Rules::INTERNATIONAL);
        // five (king + man v king): the man's step and its crowning do not reset.
        assert!(!resets(i.0, i.1, "W:W20,K50:BK1", "20-14"));
        assert!(!resets(i.0, i.1, "W:W6,K50:BK45", "6-1"));
        // sixteen (king + 2 men v king): a man move does not reset, nor a crowning into
        // 2 kings + man (still sixteen).
        assert!(!resets(i.0, i.1, "W:W20,30,K50:BK5", "20-14"));
        assert!(!resets(i.0, i.1, "W:W6,30,K50:BK45", "6-1"));
        // general: a man move resets, a king move does not.
        assert!(resets(i.0, i.1, "W:W20,30,K50:B10,K5", "20-14"));
        assert!(!resets(i.0, i.1, "W:W20,30,K50:B10,K5", "50-44"));
        // A capture that changes the regime, sixteen -> five, resets; a king move that keeps
        // it does not.
        assert!(resets(i.0, i.1, "B:WK28,K50,K46:BK5", "5x32"));
        assert!(!resets(i.0, i.1, "W:WK28,K50,K46:BK5", "50-44"));
        // A crowning that reaches five from general (2 men v king -> king + man v king).
        assert!(resets(i.0, i.1, "W:W6,30:BK45", "6-1"));

        let r = (&CountProfile::RUSSIAN, &Rules::RUSSIAN);
        // kings-4-5 (2 kings v 2 kings): a king move does not reset.
        assert!(!resets(r.0, r.1, "W:WK29,K32:BK1,K4", "29-25"));
        // five: a king move does not reset.
        assert!(!resets(r.0, r.1, "W:WK29,K32:BK4", "29-25"));
    }

    #[test]
    fn resets_by_material_cover_every_kind() {
        let m = Material::from_counts;
        let r = CountProfile::RUSSIAN;
        // kings-6-7 with a man stepping is impossible (kings only); test the kind directly
        // through general -> general and kings -> kings moves.
        // 7.2.6: a capture resets (kings-6-7 -> kings-4-5 changes regime anyway) ...
        assert!(r.resets_material(&m([0, 4, 0, 3]), &m([0, 4, 0, 2]), false));
        // ... and a capture inside kings-6-7 (7 -> 6 pieces) too.
        assert!(r.resets_material(&m([0, 4, 0, 3]), &m([0, 3, 0, 3]), false));
        assert!(!r.resets_material(&m([0, 4, 0, 3]), &m([0, 4, 0, 3]), false));
        // Every move into or out of a regime resets, a man move or not.
        let i = CountProfile::INTERNATIONAL;
        assert!(i.resets_material(&m([0, 3, 0, 2]), &m([0, 3, 0, 1]), false));
        assert!(!i.resets_material(&m([1, 1, 0, 1]), &m([1, 1, 0, 1]), true));
        assert!(!i.resets_material(&m([1, 1, 0, 1]), &m([0, 2, 0, 1]), true));
    }

    #[test]
    fn draw_by_count_at_the_limit() {
        let rules = Rules::INTERNATIONAL;
        let p = CountProfile::INTERNATIONAL;
        let five = fen::parse("W:WK1,K2:BK50", &rules).unwrap();
        assert!(!p.is_draw_by_count(9, &five));
        assert!(p.is_draw_by_count(10, &five));
        let general = fen::parse("W:W31,K1:B20,K50", &rules).unwrap();
        assert!(!p.is_draw_by_count(49, &general));
        assert!(p.is_draw_by_count(50, &general));
        let none = fen::parse("W:W31,K1:B20,K50", &Rules::ITALIAN);
        if let Ok(pos) = none {
            assert!(!CountProfile::NONE.is_draw_by_count(u16::MAX, &pos));
        }
        // Every legal move of a position gives an answer (no panic), on every preset.
        let pos = fen::parse("W:W31,K1:B20,K50", &rules).unwrap();
        let mut moves = Vec::new();
        legal_moves(&rules, &pos, Counting::Unique, &mut moves);
        for mv in &moves {
            let _ = p.resets(&pos, mv);
        }
    }

    #[test]
    fn limits_from_text() {
        let i = CountProfile::INTERNATIONAL;
        let p = i
            .with_limits("general:60, sixteen:40,five:none", "international")
            .unwrap();
        let got: Vec<_> = p.regimes().iter().map(|r| r.limit).collect();
        assert_eq!(got, [None, Some(40), Some(60)]);
        assert_eq!(i.with_limits("50", "international").unwrap(), i);
        assert_eq!(
            i.with_limits("GENERAL:50,Sixteen:32,five:10", "international"),
            Ok(i)
        );
        assert!(i.with_limits("none", "international").unwrap().is_none());
        let e = CountProfile::ENGLISH;
        let hundred = e.with_limits("100", "english").unwrap();
        assert_eq!(hundred.limit(RegimeId(0)), Some(100));
        assert_eq!(e.with_limits("general:100", "english"), Ok(hundred));
        assert_eq!(hundred.limits_text(&e).as_deref(), Some("100"));
        assert_eq!(e.limits_text(&e), None);
        assert_eq!(
            p.limits_text(&i).as_deref(),
            Some("five:none,sixteen:40,general:60")
        );
        assert_eq!(CountProfile::NONE.limits_text(&e).as_deref(), Some("none"));
        // Moves to conversion: one general regime without a limit, whatever the variant's.
        let mtc = i.with_limits("MTC", "international").unwrap();
        assert_eq!(mtc, CountProfile::MTC);
        assert_ne!(mtc, i.with_limits("none", "international").unwrap());
        assert_eq!(mtc.regimes().len(), 1);
        assert_eq!(mtc.regimes()[0].resets, Resets::ManMoveOrCapture);
        assert_eq!(mtc.limits_text(&i).as_deref(), Some("mtc"));
        assert_eq!(
            i.with_limits(&mtc.limits_text(&i).unwrap(), "international"),
            Ok(mtc)
        );
        assert_eq!(e.with_limits("mtc", "english"), Ok(CountProfile::NONE));
        assert_eq!(
            CountProfile::RUSSIAN.with_limits("mtc", "russian"),
            Ok(CountProfile::MTC)
        );
        // Italian, no rule: a house limit is a general limit.
        assert_eq!(
            CountProfile::NONE
                .with_limits("80", "italian")
                .unwrap()
                .limit(RegimeId(0)),
            Some(80)
        );
    }

    #[test]
    fn bad_limits_are_one_clear_error_each() {
        let i = CountProfile::INTERNATIONAL;
        let e = |s: &str| i.with_limits(s, "international").unwrap_err().to_string();
        assert_eq!(
            e("six:10"),
            "unknown count regime \"six\": the regimes of international are five, sixteen, general"
        );
        assert_eq!(
            e("general:fifty"),
            "count limit \"fifty\" for general: a limit is a whole number of plies, 1 to 65535, or none"
        );
        assert_eq!(
            e("70000"),
            "count limit \"70000\" for general: a limit is a whole number of plies, 1 to 65535, or none"
        );
        assert_eq!(
            e("-5"),
            "count limit \"-5\" for general: a limit is a whole number of plies, 1 to 65535, or none"
        );
        assert_eq!(
            e("five:0"),
            "count limit 0 for five: a limit is at least 1 ply (0 would draw every position at \
             once); none turns it off"
        );
        assert_eq!(
            e("five:10,five:12"),
            "count regime five is given twice (each regime at most once)"
        );
        assert_eq!(
            e("50,general:40"),
            "count regime general is given twice (each regime at most once)"
        );
        assert_eq!(e("none,five:10"), CountError::NoneNotAlone.to_string());
        assert_eq!(
            e("mtc,50"),
            "count=none (every limit off) and count=mtc (moves to conversion) take no other item"
        );
        assert_eq!(e(""), CountError::Empty.to_string());
        assert_eq!(
            CountProfile::ENGLISH
                .with_limits("five:10", "english")
                .unwrap_err()
                .to_string(),
            "english's count profile has no regime five (its regimes: general)"
        );
        assert_eq!(
            CountProfile::ENGLISH.with_limits("kings-6-7:10", "english"),
            Err(CountError::NotInProfile {
                name: "kings-6-7",
                variant: "english".into(),
                regimes: "general".into()
            })
        );
    }

    #[test]
    fn codes_round_trip_and_differ() {
        let mut seen = std::collections::HashMap::new();
        let mut all: Vec<CountProfile> = COUNT_PRESETS.iter().map(|p| p.profile).collect();
        all.push(
            CountProfile::INTERNATIONAL
                .with_limits("sixteen:40", "international")
                .unwrap(),
        );
        all.push(CountProfile::ENGLISH.with_limits("100", "english").unwrap());
        all.push(
            CountProfile::POOL
                .with_limits("general:80", "pool")
                .unwrap(),
        );
        for p in all {
            let code = p.encode();
            assert_eq!(CountProfile::decode(&code), Some(p));
            if let Some(old) = seen.insert(code, p) {
                assert_eq!(old, p, "one code, two profiles");
            }
        }
        // english and gracz8 are one profile (80 plies, general only), as are international
        // and international-optional, and italian and spanish (none): 7 distinct presets,
        // and the 3 changed profiles.
        assert_eq!(CountProfile::ENGLISH, CountProfile::GRACZ8);
        assert_eq!(seen.len(), 10);
        let mut bad = CountProfile::ENGLISH.encode();
        bad[5] = 1; // a limit for a second regime of a one-regime profile
        assert_eq!(CountProfile::decode(&bad), None);
        bad = CountProfile::ENGLISH.encode();
        bad[0] = 2;
        assert_eq!(CountProfile::decode(&bad), None);
        bad = CountProfile::ENGLISH.encode();
        bad[1] = 4;
        assert_eq!(CountProfile::decode(&bad), None);
    }

    #[test]
    fn every_rules_preset_has_a_count_preset() {
        for (r, c) in Rules::PRESETS.iter().zip(COUNT_PRESETS) {
            assert_eq!(r.name, c.variant);
            assert_eq!(CountProfile::for_rules(r), c.profile);
        }
        let house = Rules::parse("english,blocked=majority").unwrap();
        assert_eq!(CountProfile::for_rules(&house), CountProfile::ENGLISH);
        assert_eq!(
            CountProfile::for_rules(&Rules::INTERNATIONAL_OPTIONAL),
            CountProfile::INTERNATIONAL
        );
    }
}
