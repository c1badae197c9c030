//! The bit-parallel WLD solver (docs/performance-history.md, "What would close the gap",
//! item 5): what builds use for slices with men and kings under English-like rules
//! ([`bitpar_supports`]). Outcomes only, no distances.
//!
//! The slice's men groups are solved from the highest potential down, as the grouped solver
//! does, the groups of one potential in parallel. Inside a group, one king of one colour is
//! the *innermost*: a position is a slot of a 32-bit word, the word of (side to move,
//! placement of the other kings: a *row*), the slot the innermost king's square. So
//! - the innermost king's moves are masked shifts of whole words
//!   ([`Geometry::step_set`](dtb_probe::internal::board::Geometry::step_set));
//! - another king's move leads to another row, the same slots (less the square it moves to);
//! - a man move that does not crown leads to the same row of another, solved, group: one
//!   ranking and one read per row and move, for the 32 slots at once;
//! - capture positions are found a word at a time (the captures of the board without the
//!   innermost king, less the one landing square it may block, and the captures it makes or
//!   suffers). Where the innermost king takes no part in them (and, for multiple jumps, the
//!   capture is free to choose), they are resolved a row at a time: each capture's
//!   successor row is looked up once for all those slots ([`Finished::values_with_king`]);
//!   the others position by position, as the grouped solver does. Crownings are looked up a
//!   row at a time the same way.
//!
//! Each row of each side holds bit planes: won, lost, still open, and positions with an
//! exit that does not lose. Rows are re-evaluated (a word at a time: won if a move reaches a
//! lost position, lost if every move reaches a won one and no exit saves it) whenever a row
//! they read changed, until nothing changes: the least fixed point of those two rules,
//! which is the game's outcome (the argument of [`crate::bitbase`]), whatever the order.
//!
//! A colour with several kings makes each position appear once per king of that colour
//! (any of them may be the innermost; the innermost colour is the one with fewer kings).
//! Slots a position: 32 x k / (E - K + 1) for k kings of the innermost colour, K kings in
//! all and E squares the men leave empty (1.10 for 1111, 1.19 for 1221 and 2211, 2.37 for
//! 1212 and 2220). Only each position's *first copy* is solved (its innermost king the
//! lowest of its colour: the slots below the row's lowest other king of that colour); the
//! other slots stay unset and are never read. A king move that leads from a first copy to
//! a slot that is not one reads that position's first copy in another row, slot by slot
//! ([`BitSlice::crossings`]). With three kings innermost that is 1.3x on the solve, with
//! four 1.5x, with two none (performance-history, session 39).

use super::*;
use crate::packed::spread;
use dtb_probe::internal::board::{Dir, Geometry, NONE};
use dtb_probe::internal::index::{GroupDecoder, KingsRanker};
use dtb_probe::internal::rules::{KingRange, MidCapturePromotion, Precedence};
use dtb_probe::movegen::{captures_from, Move};
use std::sync::PoisonError;

/// Whether [`solve_slice_bitpar_wld`] takes slice `material` under `rules`: 8x8 (a row is a
/// 32-bit word), kings that move one square, compulsory capture (a capture position has no
/// quiet move), a king to be the innermost, and rows a group that a `u32` numbers (English
/// kings-only slices of eleven pieces and more have more).
pub fn bitpar_supports(rules: &Rules, material: Material) -> bool {
    rules.kings == KingRange::Short
        && rules.capture_compulsory
        && rules.geometry().squares == 32
        && material.white_kings + material.black_kings > 0
        && material.white() > 0
        && material.black() > 0
        && Layout::new(rules, material).rows as u64 <= u64::from(u32::MAX)
}

/// Slots of slice `material`'s rows, one side to move: 32 a row, every row of every men
/// group. The bit-parallel solver's work goes by these (a position is a slot once per king of
/// the innermost colour), about 30 ns a slot a core at 8 pieces (performance-history,
/// session 36).
pub fn bitpar_slots(rules: &Rules, material: Material) -> u64 {
    let groups = SliceIndex::new(material, rules.geometry()).men_groups();
    32 * Layout::new(rules, material).rows as u64 * groups
}

/// Work units of slice `material`'s bit-parallel solve, what progress bars and forecasts
/// count ([`bitpar_slots`]' four a slot): where the innermost colour has two kings, a slot
/// costs 0.78 of one with one king (English 0422 as a job costs 1.55 times 0431 a position
/// with twice the slots: performance-history, session 52); where it has three or more, only
/// a position's first copy is solved, and a slot costs 0.29 + 0.71 x 2 / k of one with
/// one (fitted to English 0313 and 1313, 1.29-1.31x with three, and 0404, 1.51x with four:
/// performance-history, session 39).
pub fn bitpar_work(rules: &Rules, material: Material) -> u64 {
    let k = u64::from(match Layout::new(rules, material).inner {
        Color::White => material.white_kings,
        Color::Black => material.black_kings,
    });
    let hundredths = match k {
        0 | 1 => 100,
        2 => 78,
        _ => 29 + 142 / k,
    };
    4 * bitpar_slots(rules, material) * hundredths / 100
}

/// Whether a men group's list of the other kings' moves (numbered by `u32`: at most four
/// moves a king a row) holds them all. Where it may not (English kings-only slices of nine
/// pieces and more: 0405 would need 18.9 G entries), the solver's rows are lean
/// ([`BitparHow::lean`]) whatever it is asked.
pub fn bitpar_move_list_fits(rules: &Rules, material: Material) -> bool {
    let Some(others) = (material.white_kings + material.black_kings).checked_sub(1) else {
        return true; // no king: no rows
    };
    let others = u64::from(others);
    (Layout::new(rules, material).rows as u64)
        .checked_mul(4 * others)
        .is_some_and(|moves| moves <= u64::from(u32::MAX))
}

/// Which king is innermost, and how the other kings are numbered into rows.
struct Layout {
    /// The colour of the innermost king: the one with fewer kings (fewer slots a position).
    inner: Color,
    /// The slice without the innermost king: its men groups are the slice's (the same men,
    /// numbered alike), its kings placements in a group are the group's rows.
    others: SliceIndex,
    /// Rows a group and side.
    rows: usize,
    /// The innermost king is ranked last in the slice's index (Black's kings are ranked
    /// after White's, so Black, or White where Black has no king): a row's first copies
    /// are then one run of the index ([`BitSlice::write_out`]).
    runs: bool,
}

impl Layout {
    fn new(rules: &Rules, m: Material) -> Layout {
        let black = m.black_kings > 0 && (m.white_kings == 0 || m.black_kings <= m.white_kings);
        let mut o = m;
        let inner = if black {
            o.black_kings -= 1;
            Color::Black
        } else {
            o.white_kings -= 1;
            Color::White
        };
        let others = SliceIndex::new(o, rules.geometry());
        let rows = others.kings_per_group() as usize;
        Layout {
            inner,
            others,
            rows,
            runs: inner == Color::Black || m.black_kings == 0,
        }
    }

    /// White's and Black's kings with the innermost on square `x`, the others `(wo, bo)`.
    #[inline]
    fn kings(&self, (wo, bo): (u64, u64), x: u32) -> (u64, u64) {
        match self.inner {
            Color::White => (wo | 1 << x, bo),
            Color::Black => (wo, bo | 1 << x),
        }
    }
}

impl Layout {
    /// The innermost colour's kings among the other kings `(wo, bo)` of a row.
    #[inline(always)]
    fn own(&self, (wo, bo): (u64, u64)) -> u64 {
        match self.inner {
            Color::White => wo,
            Color::Black => bo,
        }
    }

    /// The slots of a row with other kings `(wo, bo)` where the innermost king is the
    /// lowest of its colour: each position once, where it has several copies.
    #[inline]
    fn first_copies(&self, (wo, bo): (u64, u64)) -> u32 {
        let own = self.own((wo, bo));
        if own == 0 {
            u32::MAX
        } else {
            (1u32 << own.trailing_zeros()) - 1
        }
    }
}

/// A row's won slots (low 32 bits) and lost ones (high 32): what the iteration reads of
/// the rows a move leads to, kept apart from the rest of [`Row`] so that those reads, in
/// rows all over the group, touch 8 bytes a row (the layout of the planes too).
///
/// In a group's rows ([`Bufs::wl`]) the won bits are set on every slot that holds no
/// position solved there too (a square taken, or not a first copy): a move of another king
/// into such a slot cannot be made from where the innermost king stands (the square the
/// king moves to) or reaches the position's first copy elsewhere
/// ([`BitSlice::crossings`]); either way it never spoils "every move reaches a won
/// position", so the iteration reads a move as its row alone. The planes the next groups
/// read hold the solved slots' bits alone ([`BitSlice::write_out`]).
#[derive(Clone, Copy, Default)]
struct WinLoss(u64);

impl WinLoss {
    #[inline(always)]
    fn new(win: u32, loss: u32) -> WinLoss {
        WinLoss(u64::from(win) | u64::from(loss) << 32)
    }
    #[inline(always)]
    fn win(self) -> u32 {
        self.0 as u32
    }
    #[inline(always)]
    fn loss(self) -> u32 {
        (self.0 >> 32) as u32
    }
}

/// The other planes of one row of one side: a bit a slot.
#[derive(Clone, Copy, Default)]
struct Row {
    /// Slots whose outcome the iteration still seeks (not a capture, not decided at the
    /// start), won or lost bits set as it finds them.
    open: u32,
    /// Slots with an exit (a man move) that does not lose: never lost.
    nonloss: u32,
    /// Slots where the side to move must capture.
    cap: u32,
    /// Threat positions (found where the solve finds them: [`BitSlice::threat_slots`]).
    threat: u32,
}

/// A move of another king: the row it leads to and the square it moves to (the slot where
/// the innermost king would stand in its way).
#[derive(Clone, Copy)]
struct RowMove {
    row: u32,
    to: u8,
}

impl RowMove {
    /// The slot where the innermost king would stand in this move's way.
    #[inline(always)]
    fn to(self) -> u32 {
        1 << self.to
    }
}

/// A man move of a group: from, to, whether it crowns; where one that does not crown leads
/// (the group and the ranker of its rows).
struct ManExit {
    side: Color,
    from: u8,
    to: u8,
    /// `None` for a crowning (the successor is in another slice); else the group's slot
    /// in the planes ([`BitSlice::slot_of`]) and the ranker of its rows.
    group: Option<(u32, KingsRanker)>,
    /// The squares strictly between `from` and `to` in the board's numbering: where no
    /// other king stands on them, the row keeps its number in the group the move leads to
    /// ([`ManExit::row_after`]).
    between: u64,
}

impl ManExit {
    /// The number, in the group this move leads to (ranked by `rank`), of row `r` whose
    /// other kings are `(wo, bo)` (none on `to`). A row is numbered by its kings' places
    /// among the squares the men leave empty (and for Black's, among those White's leave),
    /// counted from below: the man leaving `from` and taking `to` changes that count only for
    /// a king on a square between the two, so where none stands there the number is `r`
    /// (the kings of both groups are as many on as many empty squares), with no ranking.
    #[inline(always)]
    fn row_after(&self, rank: &KingsRanker, r: usize, (wo, bo): (u64, u64)) -> usize {
        if (wo | bo) & self.between == 0 {
            debug_assert_eq!(rank.rank(wo, bo) as usize, r);
            r
        } else {
            rank.rank(wo, bo) as usize
        }
    }
}

/// What a group's rows are: their other kings, their valid slots, the other kings' moves
/// and the group's man moves (read, never written, once [`BitSlice::rows_of`] and
/// [`BitSlice::list_exits`] have built them).
#[derive(Default)]
struct Shape {
    /// Per row: the other kings (white, black).
    kings: Vec<(u64, u64)>,
    /// Per row: the squares the innermost king may stand on (empty of men and other kings).
    valid: Vec<u32>,
    /// Per row `r`: the rows white's other kings' moves lead to are
    /// `moves[starts[2r]..starts[2r + 1]]`, black's `moves[starts[2r + 1]..starts[2r + 2]]`,
    /// in the order [`BitSlice::king_steps`] finds the moves (the square each moves to is
    /// found again from the row's kings where it is needed: [`BitSlice::each_move`]).
    starts: Vec<u32>,
    moves: Vec<u32>,
    exits: Vec<ManExit>,
    /// Lean rows ([`BitparHow::lean`]): no `starts` or `moves`; a row's king moves are
    /// found from its kings when they are needed, ranked by `odec`. `men`: the group's men.
    lean: bool,
    men: u64,
    /// The decoder of the group's other kings: what ranks the rows of lean rows' moves and
    /// of the moves across the first copies ([`BitSlice::crossings`]).
    odec: Option<GroupDecoder>,
}

/// A group's buffers, reused from group to group.
#[derive(Default)]
struct Bufs {
    sh: Shape,
    /// Per side (0 White to move), per row.
    rows: [Vec<Row>; 2],
    wl: [Vec<WinLoss>; 2],
    /// Per row, where threat positions are found: the capture slots with White to move
    /// (low 32 bits) and Black (high 32), what [`BitSlice::threat_slots`] reads of the rows
    /// a king move leads to.
    caps: Vec<u64>,
    /// Per side, a bit a row: the rows to re-evaluate ([`BitSlice::iterate`]; atomic where
    /// the rows are re-evaluated on every thread).
    dirty: [Vec<AtomicU64>; 2],
    /// Per side: the group's outcome codes (2 bits a position) and "don't care" bits, in
    /// the index's order, where a row's first copies are not one run ([`BitSlice::write_out`]).
    codes: [Vec<u64>; 2],
    dcs: [Vec<u64>; 2],
}

/// One worker thread's buffers (`C`: its look-up cache): what resolving a capture position
/// needs, whichever group's rows it works on.
#[derive(Default)]
struct WorkerBufs<C> {
    after: Vec<Position>,
    /// For each capture of `after` (single jumps), where it would go on over the innermost
    /// king ([`BitSlice::goes_on`]).
    goes: Vec<u64>,
    legal: Vec<Move>,
    look: C,
}

/// How [`solve_slice_bitpar_wld_in`] solves a slice.
#[derive(Clone, Copy, Debug, Default)]
pub struct BitparHow {
    /// Find the threat positions of a format version 3 file too.
    pub threats: bool,
    /// Lean rows: the other kings' moves found when a row needs them instead of kept (16
    /// bytes a king a row: most of a kings-only slice's memory), for slices whose rows
    /// would not fit the budget otherwise ([`bitpar_memory`]).
    pub lean: bool,
}

/// Wins and losses per side, and threat positions per side.
type Counts = ([[u64; 2]; 2], [u64; 2]);

/// The sum of two [`Counts`].
fn add_counts((a, ta): Counts, (b, tb): Counts) -> Counts {
    (
        [
            [a[0][0] + b[0][0], a[0][1] + b[0][1]],
            [a[1][0] + b[1][0], a[1][1] + b[1][1]],
        ],
        [ta[0] + tb[0], ta[1] + tb[1]],
    )
}

/// One side's pass over a group's rows ([`BitSlice::iterate`]): what every part of it reads.
struct Pass<'a> {
    side: Color,
    sh: &'a Shape,
    /// The side's rows, and the other side's won and lost bits.
    me: &'a [Row],
    them: &'a [WinLoss],
    /// The other side's rows to re-evaluate, marked here.
    their_dirty: &'a [AtomicU64],
    /// Whether other threads mark them too (an atomic `or`, else a plain one).
    shared: bool,
}

/// Each worker thread's [`WorkerBufs`], by rayon's thread index.
type Workers<C> = [CachePadded<Mutex<WorkerBufs<C>>>];

/// Rows a task takes where a group's rows are shared among the threads: a multiple of 64
/// (the rows to re-evaluate are kept a bit a row), and 64 in tests so that their small
/// groups are shared too.
const CHUNK: usize = if cfg!(test) { 64 } else { 4096 };

/// Runs `f` with this thread's buffers of `workers` (fresh ones where they are taken).
fn with_worker<C: Default, T>(workers: &Workers<C>, f: impl FnOnce(&mut WorkerBufs<C>) -> T) -> T {
    let slot = rayon::current_thread_index().unwrap_or(0) % workers.len().max(1);
    match workers.get(slot).map(|w| w.try_lock()) {
        Some(Ok(mut w)) => f(&mut w),
        _ => f(&mut WorkerBufs::default()),
    }
}

/// The slice being solved: what every group reads and where it writes.
struct BitSlice<'a, S> {
    rules: &'a Rules,
    src: &'a S,
    ix: &'a SliceIndex,
    lay: &'a Layout,
    steps: &'a Steps,
    /// The planes of the groups solved last, one word a group slot, side and row (`(slot *
    /// 2 + side) * rows + row`): won slots in the low 32 bits, lost ones in the high 32.
    /// What a man move into a solved group reads, a row at a time.
    planes: &'a [AtomicU64],
    /// Where threat positions are found: the solved groups' capture slots, one word a group
    /// slot and row (`slot * rows + row`), White to move in the low 32 bits, Black in the
    /// high 32: what a man move into a solved group reads to test a threat position's
    /// successor.
    caps: &'a [AtomicU64],
    /// Each group's slot in `planes` and `caps` ([`plane_halves`]): its place in its round,
    /// in the half of its potential's parity.
    slot_of: &'a [u32],
    /// The slice's outcomes (WLD file codes, 2 bits a position) and capture bits, per side,
    /// in the slice's index order.
    values: [&'a [AtomicU64]; 2],
    capture: [&'a [AtomicU64]; 2],
    /// Find the threat positions and mark them in `capture` too.
    threats: bool,
    /// Lean rows ([`BitparHow::lean`]).
    lean: bool,
}

/// Peak heap bytes [`solve_slice_bitpar_wld_in`] is expected to use for slice `material` on
/// `threads` threads: (the slice's arrays: outcomes, capture flags and the planes the men
/// moves read, which go to scratch files where the results are mapped; the rest: each
/// worker's row buffers and the rounds' group lists).
///
/// With `threats` (the solve finds threat positions), the capture slots of each group and
/// row (8 bytes) are among the slice's arrays too.
pub fn bitpar_memory(
    rules: &Rules,
    material: Material,
    how: BitparHow,
    threads: usize,
) -> (u64, u64) {
    let BitparHow { threats, lean } = how;
    let lean = lean || !bitpar_move_list_fits(rules, material);
    let ix = SliceIndex::new(material, rules.geometry());
    let n = ix.size();
    let lay = Layout::new(rules, material);
    let rows = lay.rows as u64;
    let groups = ix.men_groups();
    let [even, odd] = plane_halves(potential_sizes(rules.geometry(), material));
    let planes = (even + odd) * rows * 8 * if threats { 3 } else { 2 };
    let results = 2 * (n.div_ceil(32) * 8 + n.div_ceil(64) * 8) + planes;
    // A row: its kings (16), valid slots (4), both sides' planes (2 x 24), both sides'
    // capture slots (8), dirty bits and headroom (8), and unless lean, its move ranges (8)
    // and up to four moves (4 bytes each) of each other king.
    let others = u64::from(material.white_kings + material.black_kings - 1);
    let per_row = 16 + 4 + 48 + 8 + 8 + if lean { 0 } else { 8 + 16 * others };
    let workers = groups.min(threads.max(1) as u64);
    let fixed = (256 << 10) + (64 << 10) * threads.max(1) as u64;
    (
        results,
        fixed + groups * (2 + 8 + 4) + workers * rows * per_row,
    )
}

/// How many groups' planes each half of the planes array holds: a man move that does not
/// crown raises the men's [`potential`](super::potential) by one, so a group reads only the
/// planes of the round solved just before its own. Groups of even potential keep theirs in
/// the first half, odd in the second, each half as large as its largest round: two rounds'
/// planes instead of every group's.
fn plane_halves(sizes: impl IntoIterator<Item = u64>) -> [u64; 2] {
    let mut halves = [0u64; 2];
    for (p, n) in sizes.into_iter().enumerate() {
        halves[p % 2] = halves[p % 2].max(n);
    }
    halves
}

/// Solve slice `material` (both sides to move) for outcomes only, looking up other slices in
/// `src`: the same outcomes and capture flags as [`solve_slice_grouped_wld`] (tested), by
/// whole-word operations inside each men group (see the module's documentation).
///
/// # Errors
/// As [`solve_slice_grouped_wld`].
///
/// # Panics
/// If [`bitpar_supports`] refuses the slice (a bug in the caller).
pub fn solve_slice_bitpar_wld<S: Finished>(
    rules: &Rules,
    src: &S,
    material: Material,
) -> Result<SolvedWld, SolveError<S::Error>> {
    solve_slice_bitpar_wld_in(rules, src, material, BitparHow::default(), None, &|_| {})
}

/// [`solve_slice_bitpar_wld`], reporting progress (four units a position, as the grouped
/// solver), with the slice's arrays in scratch files where `mapped` says: then finished
/// rounds are recorded and a stopped run's are taken over, as
/// [`solve_slice_grouped_wld_in`] does (each solver takes over only its own records: the
/// planes are this one's). With `threats`, the threat positions of a format version 3 file
/// are found too, a row at a time (`BitSlice::threat_slots`), and marked in the capture
/// bits (then every "don't care" position: [`SolvedWld::threats`]).
///
/// # Errors
/// As [`solve_slice_grouped_wld_in`].
///
/// # Panics
/// If [`bitpar_supports`] refuses the slice (a bug in the caller).
pub fn solve_slice_bitpar_wld_in<S: Finished>(
    rules: &Rules,
    src: &S,
    material: Material,
    how: BitparHow,
    mapped: Option<&MappedResults>,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<SolvedWld, SolveError<S::Error>> {
    let BitparHow { threats, lean } = how;
    assert!(
        bitpar_supports(rules, material),
        "{material}: not bit-parallel"
    );
    let lean = lean || !bitpar_move_list_fits(rules, material);
    let ix = SliceIndex::new(material, rules.geometry());
    let n = ix.size();
    let kk = ix.kings_per_group();
    let lay = Layout::new(rules, material);
    let with_threats = rules.capture_compulsory && threats;
    let (sizes, by_potential) = groups_by_potential(rules, &ix);
    let halves = plane_halves(sizes.iter().map(|&n| n as u64));
    let mut slot_of = vec![0u32; ix.men_groups() as usize];
    for (p, round) in by_potential.iter().enumerate() {
        let first = if p % 2 == 0 { 0 } else { halves[0] as u32 };
        for (i, &grp) in round.iter().enumerate() {
            slot_of[grp as usize] = first + i as u32;
        }
    }
    let slots = halves[0] + halves[1];
    let arrays = [
        ("values", 0, n.div_ceil(32)),
        ("values", 1, n.div_ceil(32)),
        ("capture", 0, n.div_ceil(64)),
        ("capture", 1, n.div_ceil(64)),
        ("planes", 0, slots * 2 * lay.rows as u64),
        // The capture words, where threat positions are found.
        ("planes", 1, slots * lay.rows as u64),
    ];
    let arrays = &arrays[..if with_threats { 6 } else { 5 }];
    let identity = format!(
        "{} bit-parallel two rounds first copies{}",
        Checkpoint::identity(rules, material, n),
        if threats { " threats" } else { "" }
    );
    let (mut words, mut checkpoint) = wld_arrays(material, identity, arrays, mapped)?;
    words.resize_with(6, Words::default);
    let [mut v0, mut v1, mut c0, mut c1, mut planes, mut caps]: [Words; 6] = words
        .try_into()
        .unwrap_or_else(|_| unreachable!("six arrays"));
    let steps = Steps::new(rules);
    let start = start_point(checkpoint.as_ref(), &sizes, || {
        // Another run's values, of other rounds: cleared, and a fresh start.
        for w in [&mut v0, &mut v1, &mut c0, &mut c1, &mut planes, &mut caps] {
            w.atomics().iter().for_each(|x| x.store(0, Relaxed));
        }
    });
    let cx = BitSlice {
        rules,
        src,
        ix: &ix,
        lay: &lay,
        steps: &steps,
        planes: planes.atomics(),
        caps: caps.atomics(),
        slot_of: &slot_of,
        values: [v0.atomics(), v1.atomics()],
        capture: [c0.atomics(), c1.atomics()],
        threats: with_threats,
        lean,
    };
    // One set of buffers a worker thread, kept from group to group.
    let threads = rayon::current_num_threads().max(1);
    let pool: Vec<_> = (0..threads)
        .map(|_| CachePadded::new(Mutex::new(Bufs::default())))
        .collect();
    let workers: Vec<_> = (0..threads)
        .map(|_| CachePadded::new(Mutex::new(WorkerBufs::default())))
        .collect();
    let mut total = GroupResult {
        counts: start.counts,
        levels: start.levels,
        ..GroupResult::default()
    };
    let mut found = start.threats;
    for (round_index, round) in by_potential.iter().rev().enumerate() {
        if round_index < start.rounds_done {
            progress(4 * kk * round.len() as u64);
            continue;
        }
        let (r, t) = cx.solve_round(round, &pool, &workers, &|| progress(4 * kk))?;
        total = total.merge(r);
        found = [found[0] + t[0], found[1] + t[1]];
        let done = Progress {
            rounds_done: round_index + 1,
            counts: total.counts,
            levels: total.levels,
            seconds: start.seconds,
            threats: found,
        };
        record_round(checkpoint.as_mut(), &sizes, &done)?;
    }
    if let Some(c) = checkpoint {
        c.finish();
    }
    Ok(SolvedWld {
        material,
        size: n,
        values: [v0, v1],
        capture: [c0, c1],
        counts: total.counts,
        levels: total.levels,
        earlier_seconds: start.seconds,
        resumed_rounds: start.rounds_done,
        threats: with_threats.then_some(found),
    })
}

/// The directions in which a man of `side` captures under `rules`.
#[inline]
fn man_capture_dirs(rules: &Rules, side: Color) -> &'static [Dir] {
    match (rules.men_capture_backward, side) {
        (true, _) => &Dir::ALL,
        (false, Color::White) => &[Dir::UpLeft, Dir::UpRight],
        (false, Color::Black) => &[Dir::DownLeft, Dir::DownRight],
    }
}

/// The slots `x` with square `step(x, d)` in `to`: where a move in direction `d` comes from.
#[inline(always)]
fn from_of(g: &Geometry, to: u32, d: Dir) -> u32 {
    g.step_set(u64::from(to), d.reverse()) as u32
}

impl<S: Finished> BitSlice<'_, S> {
    /// Solve the groups of one round, each on a thread with its buffers of `pool` and
    /// `workers` (`done` after each), or where the round is one group and there are several
    /// threads, that group's rows on every thread. Returns the round's figures and threat
    /// positions per side.
    fn solve_round(
        &self,
        round: &[u64],
        pool: &[CachePadded<Mutex<Bufs>>],
        workers: &Workers<S::Cache>,
        done: &(dyn Fn() + Sync),
    ) -> Result<(GroupResult, [u64; 2]), SolveError<S::Error>> {
        if let ([grp], true) = (round, pool.len() > 1) {
            // A round of one group (every kings-only slice's): its rows on every thread.
            let mut b = pool[0].lock().unwrap_or_else(PoisonError::into_inner);
            let r = self.solve_group(*grp, &mut b, workers, true);
            done();
            return r;
        }
        let one = |&grp: &u64| {
            let slot = rayon::current_thread_index().unwrap_or(0) % pool.len();
            let r = match pool[slot].try_lock() {
                Ok(mut b) => self.solve_group(grp, &mut b, workers, false),
                Err(_) => self.solve_group(grp, &mut Bufs::default(), workers, false),
            };
            done();
            r
        };
        round.par_iter().map(one).try_reduce(
            || (GroupResult::default(), [0, 0]),
            |(a, ta), (b, tb)| Ok((a.merge(b), [ta[0] + tb[0], ta[1] + tb[1]])),
        )
    }

    /// Solve group `grp`: its rows and moves, every slot's start, the iteration, the write-out.
    /// Returns the group's figures and its threat positions per side. `wide`: the rows'
    /// starts, threat positions and iteration on every thread (a round of one
    /// group), each with its buffers of `workers`; otherwise on this thread, with its own.
    fn solve_group(
        &self,
        grp: u64,
        b: &mut Bufs,
        workers: &Workers<S::Cache>,
        wide: bool,
    ) -> Result<(GroupResult, [u64; 2]), SolveError<S::Error>> {
        let dec = self.ix.group_decoder(grp);
        let odec = self.lay.others.group_decoder(grp);
        self.rows_of(&dec, &odec, b, wide);
        self.list_exits(&dec, b);
        let Bufs {
            sh,
            rows: [r0, r1],
            wl: [w0, w1],
            ..
        } = b;
        if wide {
            r0.par_chunks_mut(CHUNK)
                .zip(r1.par_chunks_mut(CHUNK))
                .zip(w0.par_chunks_mut(CHUNK).zip(w1.par_chunks_mut(CHUNK)))
                .enumerate()
                .try_for_each(|(i, ((r0, r1), (w0, w1)))| {
                    with_worker(workers, |w| {
                        self.start_rows(&dec, i * CHUNK, sh, ([r0, r1], [w0, w1]), w)
                    })
                })?;
        } else {
            with_worker(workers, |w| {
                self.start_rows(&dec, 0, sh, ([r0, r1], [w0, w1]), w)
            })?;
        }
        for side in 0..2 {
            let dirty = &mut b.dirty[side];
            for (r, row) in b.rows[side].iter().enumerate() {
                if row.open != 0 {
                    *dirty[r / 64].get_mut() |= 1 << (r % 64);
                }
            }
        }
        if self.threats {
            let men = dec.men();
            b.caps.clear();
            b.caps.extend(
                b.rows[0]
                    .iter()
                    .zip(&b.rows[1])
                    .map(|(w, k)| u64::from(w.cap) | u64::from(k.cap) << 32),
            );
            let Bufs { sh, rows, caps, .. } = b;
            for (side, rows) in [Color::White, Color::Black].into_iter().zip(rows) {
                let one = |r: usize, row: &mut Row| {
                    row.threat = self.threat_slots(men, r, side, sh, caps);
                };
                if wide {
                    rows.par_chunks_mut(CHUNK).enumerate().for_each(|(i, c)| {
                        c.iter_mut()
                            .enumerate()
                            .for_each(|(j, row)| one(i * CHUNK + j, row))
                    });
                } else {
                    rows.iter_mut().enumerate().for_each(|(r, row)| one(r, row));
                }
            }
        }
        let passes = self.iterate(b, wide);
        let (counts, threats) = self.write_out(grp, &dec, b, wide);
        let figures = GroupResult {
            counts,
            levels: passes,
            ..GroupResult::default()
        };
        Ok((figures, threats))
    }

    /// The starts of the rows from `first` on, both sides, into `rows` and `wl`
    /// ([`BitSlice::start_row`]).
    fn start_rows(
        &self,
        dec: &GroupDecoder,
        first: usize,
        sh: &Shape,
        ([r0, r1], [w0, w1]): ([&mut [Row]; 2], [&mut [WinLoss]; 2]),
        w: &mut WorkerBufs<S::Cache>,
    ) -> Result<(), SolveError<S::Error>> {
        for (i, ((r0, r1), (w0, w1))) in
            r0.iter_mut().zip(r1).zip(w0.iter_mut().zip(w1)).enumerate()
        {
            (*r0, *w0) = self.start_row(dec, first + i, Color::White, sh, w)?;
            (*r1, *w1) = self.start_row(dec, first + i, Color::Black, sh, w)?;
        }
        Ok(())
    }

    /// The group's rows: their other kings, their valid slots and the other kings' moves
    /// (`wide`: on every thread).
    fn rows_of(&self, dec: &GroupDecoder, odec: &GroupDecoder, b: &mut Bufs, wide: bool) {
        let (wmen, bmen) = dec.men();
        let all = self.rules.geometry().all;
        let rows = self.lay.rows;
        let sh = &mut b.sh;
        sh.men = wmen | bmen;
        sh.lean = self.lean;
        sh.odec = Some(odec.clone());
        if self.lean {
            Self::lean_rows(odec, sh, (rows, all), wide);
        } else if wide {
            // Each row's kings, valid slots and number of moves a colour; then where each
            // row's moves start; then the moves, each task into its rows' part of the list.
            sh.kings.clear();
            sh.kings.par_extend(rayon::iter::repeat_n((0, 0), rows));
            sh.valid.clear();
            sh.valid.par_extend(rayon::iter::repeat_n(0, rows));
            sh.starts.clear();
            sh.starts.par_extend(rayon::iter::repeat_n(0, 2 * rows + 1));
            sh.kings
                .par_chunks_mut(CHUNK)
                .zip(sh.valid.par_chunks_mut(CHUNK))
                .zip(sh.starts.par_chunks_mut(2 * CHUNK))
                .enumerate()
                .for_each(|(i, ((kings, valid), starts))| {
                    let placements = odec.kings_from((i * CHUNK) as u64);
                    for (j, ((wo, bo), k)) in placements.zip(kings).enumerate() {
                        *k = (wo, bo);
                        let occ = wmen | bmen | wo | bo;
                        valid[j] = (all & !occ) as u32;
                        for (c, own) in [wo, bo].into_iter().enumerate() {
                            starts[2 * j + c] =
                                ones(own, |a| self.steps.king_targets(a, occ).count_ones());
                        }
                    }
                });
            let mut at = 0u32;
            for s in sh.starts.iter_mut() {
                (*s, at) = (at, at + *s);
            }
            sh.moves.clear();
            sh.moves.par_extend(rayon::iter::repeat_n(0, at as usize));
            let mut parts = Vec::with_capacity(rows.div_ceil(CHUNK));
            let mut rest = &mut sh.moves[..];
            for first in (0..rows).step_by(CHUNK) {
                let end = (first + CHUNK).min(rows);
                let len = (sh.starts[2 * end] - sh.starts[2 * first]) as usize;
                let (part, tail) = rest.split_at_mut(len);
                parts.push((first, part));
                rest = tail;
            }
            let kings = &sh.kings;
            parts.into_par_iter().for_each(|(first, part)| {
                let mut k = 0;
                let end = (first + CHUNK).min(rows);
                for (r, &(wo, bo)) in kings[first..end].iter().enumerate() {
                    for side in [Color::White, Color::Black] {
                        self.row_moves(odec, wmen | bmen, (first + r, (wo, bo)), side, |m| {
                            part[k] = m.row;
                            k += 1;
                        });
                    }
                }
            });
        } else {
            sh.kings.clear();
            sh.kings.extend(odec.kings_from(0));
            sh.valid.clear();
            sh.starts.clear();
            sh.moves.clear();
            // At most four moves a king: reserved at once, not grown by doubling (which
            // took the peak past `bitpar_memory`'s estimate, 0113).
            let others = (self.lay.others.material().white_kings
                + self.lay.others.material().black_kings) as usize;
            sh.valid.reserve(rows);
            sh.starts.reserve(2 * rows + 1);
            sh.moves.reserve(4 * others * rows);
            for (r, &(wo, bo)) in sh.kings.iter().enumerate() {
                sh.valid.push((all & !(wmen | bmen | wo | bo)) as u32);
                for side in [Color::White, Color::Black] {
                    sh.starts.push(sh.moves.len() as u32);
                    self.row_moves(odec, wmen | bmen, (r, (wo, bo)), side, |m| {
                        sh.moves.push(m.row)
                    });
                }
            }
            sh.starts.push(sh.moves.len() as u32);
        }
        for side in 0..2 {
            b.rows[side].clear();
            b.wl[side].clear();
            if wide {
                b.rows[side].par_extend(rayon::iter::repeat_n(Row::default(), rows));
                b.wl[side].par_extend(rayon::iter::repeat_n(WinLoss::default(), rows));
            } else {
                b.rows[side].resize(rows, Row::default());
                b.wl[side].resize(rows, WinLoss::default());
            }
            b.dirty[side].clear();
            b.dirty[side].resize_with(rows.div_ceil(64), AtomicU64::default);
        }
    }

    /// [`BitSlice::rows_of`] for lean rows: the `rows` rows' kings and valid slots alone
    /// (`all`: the board's squares).
    fn lean_rows(odec: &GroupDecoder, sh: &mut Shape, (rows, all): (usize, u64), wide: bool) {
        let men = sh.men;
        // The kings and valid slots alone.
        sh.starts.clear();
        sh.moves.clear();
        sh.kings.clear();
        sh.valid.clear();
        if wide {
            sh.kings.par_extend(rayon::iter::repeat_n((0, 0), rows));
            sh.kings
                .par_chunks_mut(CHUNK)
                .enumerate()
                .for_each(|(i, kings)| {
                    for (k, p) in kings.iter_mut().zip(odec.kings_from((i * CHUNK) as u64)) {
                        *k = p;
                    }
                });
            sh.valid.par_extend(
                sh.kings
                    .par_iter()
                    .map(|&(wo, bo)| (all & !(men | wo | bo)) as u32),
            );
        } else {
            sh.kings.extend(odec.kings_from(0));
            sh.valid.extend(
                sh.kings
                    .iter()
                    .map(|&(wo, bo)| (all & !(men | wo | bo)) as u32),
            );
        }
    }

    /// The moves of `side`'s other kings from row `r`, to `put`: from the group's list, or
    /// with lean rows found from the row's kings.
    #[inline(always)]
    fn each_move(&self, sh: &Shape, r: usize, side: Color, mut put: impl FnMut(RowMove)) {
        match (&sh.odec, sh.lean) {
            (Some(odec), true) => self.row_moves(odec, sh.men, (r, sh.kings[r]), side, put),
            _ => {
                let mut k = Self::range(&sh.starts, r, side).0;
                self.king_steps(sh.men, sh.kings[r], side, |_, to| {
                    put(RowMove {
                        row: sh.moves[k],
                        to,
                    });
                    k += 1;
                });
            }
        }
    }

    /// The rows the moves of `side`'s other kings from row `r` lead to, to `put`: what the
    /// iteration reads ([`BitSlice::each_move`] without the squares).
    #[inline(always)]
    fn each_row(&self, sh: &Shape, r: usize, side: Color, mut put: impl FnMut(usize)) {
        match (&sh.odec, sh.lean) {
            (Some(odec), true) => {
                self.row_moves(
                    odec,
                    sh.men,
                    (r, sh.kings[r]),
                    side,
                    |m| put(m.row as usize),
                )
            }
            _ => {
                let (lo, hi) = Self::range(&sh.starts, r, side);
                for &row in &sh.moves[lo..hi] {
                    put(row as usize);
                }
            }
        }
    }

    /// The moves of `side`'s other kings (some of `(wo, bo)`) on a board whose men stand on
    /// `men`, to `put(from, to)`: each king from the lowest square up, its targets likewise
    /// (the order of a row's list of moves).
    #[inline(always)]
    fn king_steps(&self, men: u64, (wo, bo): (u64, u64), side: Color, mut put: impl FnMut(u8, u8)) {
        let occ = men | wo | bo;
        let mut ks = match side {
            Color::White => wo,
            Color::Black => bo,
        };
        while ks != 0 {
            let a = ks.trailing_zeros() as u8;
            ks &= ks - 1;
            let mut to = self.steps.king_targets(a, occ);
            while to != 0 {
                put(a, to.trailing_zeros() as u8);
                to &= to - 1;
            }
        }
    }

    /// The squares `side`'s other kings (some of `(wo, bo)`) move to on a board whose men
    /// stand on `men` (the innermost king not on it).
    #[inline(always)]
    fn king_targets(&self, men: u64, (wo, bo): (u64, u64), side: Color) -> u64 {
        let occ = men | wo | bo;
        let mut ks = match side {
            Color::White => wo,
            Color::Black => bo,
        };
        let mut to = 0;
        while ks != 0 {
            to |= self.steps.king_targets(ks.trailing_zeros() as u8, occ);
            ks &= ks - 1;
        }
        to
    }

    /// The moves of `side`'s other kings (some of `(wo, bo)`) from row `r` of a group whose
    /// men stand on `men`, to `put`.
    #[inline(always)]
    fn row_moves(
        &self,
        odec: &GroupDecoder,
        men: u64,
        (r, (wo, bo)): (usize, (u64, u64)),
        side: Color,
        mut put: impl FnMut(RowMove),
    ) {
        self.king_steps(men, (wo, bo), side, |a, t| {
            put(RowMove {
                row: odec.kings_rank_after(r as u64, wo, bo, a, t) as u32,
                to: t,
            })
        });
    }

    /// The king moves of the innermost colour from row `r` of the group `sh` that lead from
    /// a first copy to a position whose first copy is in another row: `put(slot here, that
    /// row, its slot there)` for each whose slot here is in `srcs`. With `o` the lowest of
    /// that colour's other kings (a row's first copies are the slots below `o`): the
    /// innermost king from `y` to a square above `o` (then `o` is the lowest king: the row
    /// of the other kings with `o` moved there, slot `o`), or a king of that colour to a
    /// square `t` below the innermost one's `y` (then `t` is the lowest: the row with that
    /// king moved to `y`, slot `t`). The relation is symmetric: each such pair of positions
    /// is listed from both rows, so the rows that read a row's slots across are those its
    /// own crossings name.
    #[inline]
    fn crossings(&self, sh: &Shape, r: usize, srcs: u32, mut put: impl FnMut(u32, usize, u32)) {
        let (wo, bo) = sh.kings[r];
        let own = self.lay.own((wo, bo));
        if own == 0 || srcs == 0 {
            return;
        }
        let Some(odec) = &sh.odec else {
            return;
        };
        let g = self.rules.geometry();
        let o = own.trailing_zeros();
        let occ = sh.men | wo | bo;
        let below = (1u64 << o) - 1;
        let srcs = u64::from(srcs) & below & !occ;
        // The innermost king from `y` to a free square `t` above `o`: one ranking a `t`
        // (kings step one square here, so the `y` that reach `t` are its neighbours).
        let above = g.all & !occ & !((2u64 << o) - 1);
        let mut near = 0u32;
        for d in Dir::ALL {
            near |= from_of(g, srcs as u32, d);
        }
        let mut ts = above & u64::from(near);
        while ts != 0 {
            let t = ts.trailing_zeros() as u8;
            ts &= ts - 1;
            let row = odec.kings_rank_after(r as u64, wo, bo, o as u8, t) as usize;
            let mut ys = self.steps.king_targets(t, occ) & srcs;
            while ys != 0 {
                let y = ys.trailing_zeros();
                ys &= ys - 1;
                put(y, row, o);
            }
        }
        // A king `a` of that colour to a free square `t` below `o`, slots `y` above `t`: one
        // ranking a `y` (the row has `a` moved to `y`, whichever `t`).
        let mut ks = own;
        while ks != 0 {
            let a = ks.trailing_zeros() as u8;
            ks &= ks - 1;
            let to = self.steps.king_targets(a, occ) & below;
            if to == 0 {
                continue;
            }
            let mut ys = srcs & !((2u64 << to.trailing_zeros()) - 1);
            while ys != 0 {
                let y = ys.trailing_zeros();
                ys &= ys - 1;
                let row = odec.kings_rank_after(r as u64, wo, bo, a, y as u8) as usize;
                let mut ts = to & ((1u64 << y) - 1);
                while ts != 0 {
                    let t = ts.trailing_zeros();
                    ts &= ts - 1;
                    put(y, row, t);
                }
            }
        }
    }

    /// The group's man moves, with the group each one that does not crown leads to.
    fn list_exits(&self, dec: &GroupDecoder, b: &mut Bufs) {
        let g = self.rules.geometry();
        let (wmen, bmen) = dec.men();
        b.sh.exits.clear();
        for side in [Color::White, Color::Black] {
            let (mut men, crown) = match side {
                Color::White => (wmen, g.top_row),
                Color::Black => (bmen, g.bottom_row),
            };
            while men != 0 {
                let from = men.trailing_zeros() as u8;
                men &= men - 1;
                let mut to = self.steps.fwd[side.index()][from as usize] & !(wmen | bmen);
                while to != 0 {
                    let t = to.trailing_zeros() as u8;
                    to &= to - 1;
                    let moved = (1u64 << from) | (1u64 << t);
                    let group = (crown >> t & 1 == 0).then(|| {
                        let men2 = match side {
                            Color::White => (wmen ^ moved, bmen),
                            Color::Black => (wmen, bmen ^ moved),
                        };
                        let to = self.ix.group_of(men2.0, men2.1);
                        // Its planes are the round's before this one ([`plane_halves`]).
                        debug_assert_eq!(
                            super::potential(g, men2.0, men2.1),
                            super::potential(g, wmen, bmen) + 1
                        );
                        (
                            self.slot_of[to as usize],
                            self.lay.others.ranker_of_men(men2),
                        )
                    });
                    let (lo, hi) = (from.min(t), from.max(t));
                    b.sh.exits.push(ManExit {
                        side,
                        from,
                        to: t,
                        group,
                        between: (1u64 << hi) - (2u64 << lo),
                    });
                }
            }
        }
        // Crownings last: their look-ups go by the slot, so [`BitSlice::start_row`] skips
        // the slots that a man move into a solved group (a row at a time) already wins.
        b.sh.exits.sort_by_key(|e| e.group.is_none());
    }

    /// The slots of row `r` where `side` must capture, a word at a time: the captures of
    /// the board without the innermost king (which blocks one landing square at most, so a
    /// capture stays wherever two landing squares exist), and the captures the innermost
    /// king makes (its colour to move) or suffers (the other's).
    fn capture_slots(
        &self,
        (wmen, bmen): (u64, u64),
        (wo, bo): (u64, u64),
        side: Color,
        v: u32,
    ) -> u32 {
        let rules = self.rules;
        let g = rules.geometry();
        let (own_men, own_kings, opp, opp_kings) = match side {
            Color::White => (wmen, wo, bmen | bo, bo),
            Color::Black => (bmen, bo, wmen | wo, wo),
        };
        let empty = g.all & !(wmen | bmen | wo | bo);
        let by_man = if rules.men_capture_kings {
            opp
        } else {
            opp & !opp_kings
        };
        let man_dirs = man_capture_dirs(rules, side);
        // The empty squares where pieces of `from` land, jumping over `over` in `d`.
        let landing =
            |from: u64, over: u64, d: Dir| empty & g.step_set(over & g.step_set(from, d), d);
        let mut land = 0u64;
        for &d in man_dirs {
            land |= landing(own_men, by_man, d);
        }
        for d in Dir::ALL {
            land |= landing(own_kings, opp, d);
        }
        let mut caps = match land.count_ones() {
            0 => 0,
            1 => v & !(land as u32),
            _ => v,
        };
        for d in Dir::ALL {
            caps |= if side == self.lay.inner {
                // The innermost king jumps.
                from_of(g, (opp & g.step_set(empty, d.reverse())) as u32, d)
            } else {
                // The innermost king is jumped, by a king or (where they may) a man.
                let men = if rules.men_capture_kings && man_dirs.contains(&d) {
                    own_men
                } else {
                    0
                };
                (g.step_set(own_kings | men, d) & g.step_set(empty, d.reverse())) as u32
            };
        }
        caps & v
    }
}

impl<S: Finished> BitSlice<'_, S> {
    /// What row `r` of `side` knows before the iteration: capture positions resolved from
    /// the slices they lead to, man moves into solved groups read a row at a time
    /// (crownings looked up one by one), blocked positions decided, and which slots moves
    /// reach at all.
    fn start_row(
        &self,
        dec: &GroupDecoder,
        r: usize,
        side: Color,
        sh: &Shape,
        w: &mut WorkerBufs<S::Cache>,
    ) -> Result<(Row, WinLoss), SolveError<S::Error>> {
        let others = sh.kings[r];
        let v = sh.valid[r];
        let mut row = Row {
            cap: self.capture_slots(dec.men(), others, side, v),
            ..Row::default()
        };
        let (mut win, mut loss) = (0u32, 0u32);
        // Only first copies are solved: the others are never read ([`BitSlice::crossings`]).
        let first = self.lay.first_copies(others);
        // The capture positions: a row at a time where the innermost king takes no part,
        // one by one where it does.
        let mut caps = row.cap & first;
        let mut multi = 0u32;
        if caps != 0 {
            let (won, lost, rest, rest_multi) = self.row_captures(dec, others, side, caps, w)?;
            win |= won;
            loss |= lost;
            caps = rest;
            multi = rest_multi;
        }
        while caps != 0 {
            let x = caps.trailing_zeros();
            caps &= caps - 1;
            let pos = self.position(dec, others, x, side);
            match self.capture_value(&pos, multi >> x & 1 != 0, w)? {
                Wld::Win => win |= 1 << x,
                Wld::Loss => loss |= 1 << x,
                Wld::Draw => {}
            }
        }
        let quiet = v & !row.cap & first;
        let g = self.rules.geometry();
        // Slots with a move at all, and those an exit wins.
        let mut moves = 0u32;
        let mut exit_win = 0u32;
        if side == self.lay.inner {
            for d in Dir::ALL {
                moves |= quiet & from_of(g, v, d);
            }
        }
        // Where the other kings move, not where their moves lead: no ranking. A slot has
        // such a move unless the innermost king stands on its only square.
        let targets = self.king_targets(sh.men, others, side);
        moves |= match targets.count_ones() {
            0 => 0,
            1 => quiet & !(targets as u32),
            _ => quiet,
        };
        let occ_others = others.0 | others.1;
        for e in sh.exits.iter().filter(|e| e.side == side) {
            if occ_others >> e.to & 1 != 0 {
                continue; // another king stands in the way
            }
            let avail = quiet & !(1u32 << e.to);
            moves |= avail;
            if avail & !exit_win == 0 {
                continue; // an earlier exit wins every slot it reaches already, or it reaches none
            }
            match e.group {
                Some((slot, rank)) => {
                    let at = (slot as usize * 2 + side.opponent().index()) * self.lay.rows
                        + e.row_after(&rank, r, others);
                    let p = self.planes[at].load(Relaxed);
                    let (won, lost) = (p as u32, (p >> 32) as u32);
                    exit_win |= avail & lost;
                    row.nonloss |= avail & !won;
                }
                // A crowning: the board without the innermost king after it, then that
                // king on each slot (the square crowned on is not among them).
                None => {
                    let succ = dec
                        .with_kings(others.0, others.1, side)
                        .after_quiet_move(g, e.from, e.to);
                    // Slots an exit already wins need no look-up (crownings come last).
                    let (won, drawn) = self
                        .src
                        .losses_draws_with_king(
                            &succ,
                            self.lay.inner,
                            u64::from(avail & !exit_win),
                            &mut w.look,
                        )
                        .map_err(SolveError::Lookup)?;
                    exit_win |= won as u32;
                    row.nonloss |= drawn as u32;
                }
            }
        }
        let mut blocked = quiet & !moves;
        while blocked != 0 {
            let x = blocked.trailing_zeros();
            blocked &= blocked - 1;
            let pos = self.position(dec, others, x, side);
            match blocked_code(self.rules, &pos).wld() {
                Wld::Win => win |= 1 << x,
                Wld::Loss => loss |= 1 << x,
                Wld::Draw => {}
            }
        }
        win |= exit_win & moves;
        row.open = moves & !exit_win;
        // The won bits of the slots solved elsewhere, or not at all ([`WinLoss`]).
        Ok((row, WinLoss::new(win | !(v & first), loss)))
    }

    /// The threat positions of row `r` of `side`, a word at a time: the side to move has no
    /// capture, the other side has one (the same row of the other side), it has a quiet move,
    /// and no quiet move leads to a position where the other side, then to move, has no
    /// capture while the mover would have one
    /// ([`dtb_probe::internal::value::is_threat_dont_care`]). The successors' capture slots
    /// come from the group's rows (king moves), the solved groups' capture words (man
    /// moves) or [`BitSlice::capture_slots`] on the board after a crowning.
    fn threat_slots(
        &self,
        men: (u64, u64),
        r: usize,
        side: Color,
        sh: &Shape,
        row_caps: &[u64],
    ) -> u32 {
        let v = sh.valid[r];
        // The capture slots of row `t` for the side to move and for the other.
        let caps = |t: usize| {
            let c = row_caps[t];
            match side {
                Color::White => (c as u32, (c >> 32) as u32),
                Color::Black => ((c >> 32) as u32, c as u32),
            }
        };
        let (mine, theirs) = caps(r);
        // First copies only: the others are not written.
        let cand = v & !mine & theirs & self.lay.first_copies(sh.kings[r]);
        if cand == 0 {
            return 0;
        }
        // Slots of a successor (the other side to move) that break the rule.
        let breaks = |mine: u32, theirs: u32| mine & !theirs;
        let g = self.rules.geometry();
        let (mut any, mut bad) = (0u32, 0u32);
        if side == self.lay.inner {
            let u = breaks(mine, theirs);
            for d in Dir::ALL {
                any |= from_of(g, v, d);
                bad |= from_of(g, u, d);
            }
        }
        self.each_move(sh, r, side, |m| {
            let (mine, theirs) = caps(m.row as usize);
            any |= !m.to();
            bad |= breaks(mine, theirs) & !m.to();
        });
        let (wo, bo) = sh.kings[r];
        for e in sh.exits.iter().filter(|e| e.side == side) {
            if (wo | bo) >> e.to & 1 != 0 {
                continue; // another king stands in the way
            }
            let avail = !(1u32 << e.to);
            any |= avail;
            if cand & !bad == 0 {
                return 0;
            }
            let (mine, theirs) = match &e.group {
                // A solved group of the slice: its capture slots, a row at a time.
                Some((slot, rank)) => {
                    let c = self.caps
                        [*slot as usize * self.lay.rows + e.row_after(rank, r, (wo, bo))]
                    .load(Relaxed);
                    let (w, b) = (c as u32, (c >> 32) as u32);
                    match side {
                        Color::White => (w, b),
                        Color::Black => (b, w),
                    }
                }
                // A crowning: the man off its square, a king on the one it reaches.
                None => {
                    let crown = 1u64 << e.to;
                    let gone = 1u64 << e.from;
                    let (men2, others2) = match side {
                        Color::White => ((men.0 ^ gone, men.1), (wo | crown, bo)),
                        Color::Black => ((men.0, men.1 ^ gone), (wo, bo | crown)),
                    };
                    let occ = men2.0 | men2.1 | others2.0 | others2.1;
                    let v2 = (g.all & !occ) as u32;
                    (
                        self.capture_slots(men2, others2, side, v2),
                        self.capture_slots(men2, others2, side.opponent(), v2),
                    )
                }
            };
            bad |= avail & breaks(mine, theirs);
        }
        cand & any & !bad
    }

    /// The moves of `side`'s other kings from row `r`: a range of the group's move list.
    #[inline(always)]
    fn range(starts: &[u32], r: usize, side: Color) -> (usize, usize) {
        let at = 2 * r + side.index();
        (starts[at] as usize, starts[at + 1] as usize)
    }

    /// The position of the group with the other kings `others`, the innermost on `x`.
    #[inline]
    fn position(&self, dec: &GroupDecoder, others: (u64, u64), x: u32, side: Color) -> Position {
        let (wk, bk) = self.lay.kings(others, x);
        dec.with_kings(wk, bk, side)
    }

    /// The capture positions `caps` of row `others` of `side` whose captures are the board's
    /// without the innermost king: their outcomes from the successors' rows, each looked up
    /// once for all those slots ([`Finished::values_with_king`]). A slot on a single jump's
    /// landing square blocks that capture: the others decide it. Where the innermost king
    /// can jump (its colour to move) or be jumped at once (the other's), those single jumps
    /// are added slot by slot (where one of them could go on, that piece's whole captures).
    /// Returns the slots won and lost among them, the rest of `caps`, left to resolve one by
    /// one (where a piece landing next to the innermost king could go on over it, where the
    /// king stands on a multiple jump's route, and every slot of a row whose board has a
    /// multiple jump under a precedence rule or a precedence rule chooses among single
    /// jumps: [`single_jumps`]), and those of the rest that are likely to have a multiple
    /// jump (the first two kinds).
    fn row_captures(
        &self,
        dec: &GroupDecoder,
        (wo, bo): (u64, u64),
        side: Color,
        caps: u32,
        w: &mut WorkerBufs<S::Cache>,
    ) -> Result<(u32, u32, u32, u32), SolveError<S::Error>> {
        let WorkerBufs {
            after,
            goes,
            legal,
            look,
        } = w;
        let rules = self.rules;
        let g = rules.geometry();
        let pos = dec.with_kings(wo, bo, side);
        let inner = self.lay.inner;
        // Where the board has a multiple jump: the slots on its route (one by one), and
        // those next to one of its landing squares (the innermost king could be jumped too).
        let mut multi = None;
        if !single_jumps(rules, &pos, after) {
            if rules.precedence != Precedence::Free {
                return Ok((0, 0, caps, 0));
            }
            multi = Some(self.multiple_jumps(&pos, legal, after));
        }
        let own = pos.pieces(side);
        let opp = pos.pieces(side.opponent());
        let empty = g.all & !pos.occupied();
        let man_dirs = man_capture_dirs(rules, side);
        let kings = pos.kings();
        // The men that may take the innermost king (a king of the other side).
        let men = if rules.men_capture_kings {
            own & !kings
        } else {
            0
        };
        // Where the innermost king would capture, or be captured, on the board.
        let mut involved = 0u64;
        for d in Dir::ALL {
            involved |= if side == inner {
                g.step_set(opp & g.step_set(empty, d.reverse()), d.reverse())
            } else {
                let takers = own & kings | if man_dirs.contains(&d) { men } else { 0 };
                g.step_set(takers, d) & g.step_set(empty, d.reverse())
            };
        }
        let (mut cut, mut then) = (0u64, 0u64);
        match multi {
            Some((route, next_to)) => {
                cut = route;
                then = next_to;
            }
            None if side != inner => {
                goes.clear();
                for succ in after.iter() {
                    let on = self.goes_on(&pos, succ);
                    goes.push(on);
                    then |= on;
                }
            }
            None => {}
        }
        // Under free choice among single jumps, a slot where some captures would go on over
        // the innermost king keeps the others (read a row at a time with the rest below);
        // the captures over that king come from the pieces that make them (slot by slot).
        let split = if multi.is_none() && rules.precedence == Precedence::Free {
            caps & then as u32
        } else {
            0
        };
        let row = caps & !((involved | then | cut) as u32);
        // Where the innermost king captures or is captured at once: the board's captures,
        // and its own jumps or the jumps over it slot by slot (below).
        let jumping = caps & (involved & !then & !cut) as u32;
        let multi = (then | cut) as u32;
        if row | jumping | split == 0 {
            return Ok((0, 0, caps, caps & multi));
        }
        // Each capture for the slots other than its landing square (where the innermost
        // king stands in its way) and those where it would go on over that king.
        let (mut won, mut drawn, mut some) = (0u32, 0u32, 0u32);
        for (i, succ) in after.iter().enumerate() {
            let land = (succ.pieces(side) & !own) as u32;
            let mut slots = (row | jumping) & !land;
            if split != 0 {
                slots |= split & !land & !(goes[i] as u32);
            }
            some |= slots;
            // A slot that one capture wins needs no other look-up.
            let (lost, draw) = self
                .src
                .losses_draws_with_king(succ, inner, u64::from(slots & !won), look)
                .map_err(SolveError::Lookup)?;
            won |= lost as u32;
            drawn |= draw as u32;
        }
        // The jumps of or over the innermost king, where no capture above wins already.
        let mut xs = jumping & !won;
        while xs != 0 {
            let x = xs.trailing_zeros();
            xs &= xs - 1;
            let (w, d) = if side == inner {
                self.own_jumps(&pos, x, legal, look)?
            } else {
                self.jumps_over(&pos, x, legal, look)?
            };
            won |= u32::from(w) << x;
            drawn |= u32::from(d) << x;
        }
        // The captures over the innermost king where a capture would go on over it.
        let mut xs = split & !won;
        while xs != 0 {
            let x = xs.trailing_zeros();
            xs &= xs - 1;
            let (w, d) = self.split_slot(&pos, x, (after, goes), legal, look)?;
            won |= u32::from(w) << x;
            drawn |= u32::from(d) << x;
        }
        // A slot on the landing square of every capture has a capture of its own (it is a
        // capture slot): resolved one by one.
        let done = (row & some) | jumping | split;
        let won = won & done;
        let rest = caps & !done;
        if cfg!(debug_assertions) {
            self.check_split(&pos, split, (won, drawn), w)?;
        }
        Ok((won, done & !won & !drawn, rest, rest & multi))
    }

    /// The captures of board `pos` (without the innermost king) where one is a multiple
    /// jump, under free choice among them: their successors, once each, into `after`, and
    /// two sets of squares where the innermost king would change them: the multiple jumps'
    /// routes (standing on one cuts a capture short, which may make a shorter one a move of
    /// its own) and, where it belongs to the other side, the squares next to a landing
    /// square in a direction the piece captures in with the square beyond it free (the
    /// piece could go on over it). Free counts the squares of the pieces taken and the one
    /// left: more than the rules may allow, so more slots go one by one, never fewer.
    fn multiple_jumps(
        &self,
        pos: &Position,
        legal: &mut Vec<Move>,
        after: &mut Vec<Position>,
    ) -> (u64, u64) {
        let rules = self.rules;
        let g = rules.geometry();
        let side = pos.side_to_move();
        let jumped = side != self.lay.inner;
        let crown = match side {
            Color::White => g.top_row,
            Color::Black => g.bottom_row,
        };
        let man_dirs: &[Dir] = if rules.men_capture_kings {
            man_capture_dirs(rules, side)
        } else {
            &[]
        };
        let empty = g.all & !pos.occupied();
        legal_moves(rules, pos, Counting::Paths, legal);
        after.clear();
        let (mut route, mut next_to) = (0u64, 0u64);
        for (i, m) in legal.iter().enumerate() {
            let path = m.path();
            if path.len() > 1 {
                route |= path.iter().fold(0u64, |a, &l| a | 1 << l);
            }
            if jumped {
                let free = empty | 1u64 << m.from | m.captured;
                let mut king = pos.kings() >> m.from & 1 != 0;
                for &l in path {
                    let on_crown = crown >> l & 1 != 0;
                    if !king && on_crown {
                        match rules.mid_capture_promotion {
                            MidCapturePromotion::CrownAndStop => break,
                            MidCapturePromotion::CrownAndContinue => king = true,
                            MidCapturePromotion::ContinueAsMan => {}
                        }
                    }
                    let dirs = if king { &Dir::ALL[..] } else { man_dirs };
                    for &d in dirs {
                        next_to |= g.step_set(1u64 << l, d) & g.step_set(free, d.reverse());
                    }
                }
            }
            let seen = legal[..i].iter().any(|o| {
                o.from == m.from
                    && o.to == m.to
                    && o.captured == m.captured
                    && o.crowned == m.crowned
            });
            if !seen {
                after.push(m.apply_unchecked(pos));
            }
        }
        (route, next_to)
    }

    /// Whether the innermost king, on slot `x` of board `pos` (without it, its colour to
    /// move), has a capture to a lost position and one to a drawn one: its single jumps
    /// built directly, or where one could go on over another piece, its captures from the
    /// move generator ([`captures_from`], into `legal`).
    fn own_jumps(
        &self,
        pos: &Position,
        x: u32,
        legal: &mut Vec<Move>,
        look: &mut S::Cache,
    ) -> Result<(bool, bool), SolveError<S::Error>> {
        let g = self.rules.geometry();
        let opp = pos.pieces(pos.side_to_move().opponent());
        let empty = g.all & !pos.occupied();
        // Its start square is empty once it has jumped.
        let free = empty | 1u64 << x;
        let at = pos.with_king(self.lay.inner, x);
        let (mut won, mut drawn) = (false, false);
        for d in Dir::ALL {
            let o = g.step(x as u8, d);
            if o == NONE || opp >> o & 1 == 0 {
                continue;
            }
            let l = g.step(o, d);
            if l == NONE || empty >> l & 1 == 0 {
                continue;
            }
            let again = Dir::ALL.iter().any(|&d2| {
                let o2 = g.step(l, d2);
                o2 != NONE && o2 != o && opp >> o2 & 1 != 0 && {
                    let l2 = g.step(o2, d2);
                    l2 != NONE && free >> l2 & 1 != 0
                }
            });
            if again {
                // Every capture of the king (its single jumps noted so far among them).
                let seen = (&mut won, &mut drawn);
                self.note_captures(&at, x as u8, u64::MAX, (legal, look), seen)?;
                return Ok((won, drawn));
            }
            self.note_jump(&at.after_jump(g, x as u8, o, l), look, &mut won, &mut drawn)?;
            if won {
                break; // one winning capture is enough
            }
        }
        Ok((won, drawn))
    }

    /// Records in `won` / `drawn` ([`BitSlice::note_jump`]) the captures of the piece on
    /// `from` in `at` (from the move generator, [`captures_from`], into `legal`) that take a
    /// piece of `taking`, until one wins.
    fn note_captures(
        &self,
        at: &Position,
        from: u8,
        taking: u64,
        (legal, look): (&mut Vec<Move>, &mut S::Cache),
        (won, drawn): (&mut bool, &mut bool),
    ) -> Result<(), SolveError<S::Error>> {
        captures_from(self.rules, at, from, legal);
        for m in legal.iter().filter(|m| m.captured & taking != 0) {
            self.note_jump(&m.apply_unchecked(at), look, won, drawn)?;
            if *won {
                break; // one winning capture is enough
            }
        }
        Ok(())
    }

    /// Records in `won` / `drawn` whether jump successor `succ` is lost / drawn for the side
    /// then to move ([`BitSlice::own_jumps`], [`BitSlice::jumps_over`]).
    fn note_jump(
        &self,
        succ: &Position,
        look: &mut S::Cache,
        won: &mut bool,
        drawn: &mut bool,
    ) -> Result<(), SolveError<S::Error>> {
        match self
            .src
            .value(succ, look)
            .map_err(SolveError::Lookup)?
            .wld()
        {
            Wld::Loss => *won = true,
            Wld::Draw => *drawn = true,
            Wld::Win => {}
        }
        Ok(())
    }

    /// Whether a capture over the innermost king, on slot `x` of board `pos` (without it,
    /// the other colour to move), reaches a lost position and whether one reaches a drawn
    /// one: single jumps built directly, or where one could go on (a multiple jump, or a
    /// crowning that goes on capturing), the captures of that piece over the king from the
    /// move generator ([`captures_from`], into `legal`).
    fn jumps_over(
        &self,
        pos: &Position,
        x: u32,
        legal: &mut Vec<Move>,
        look: &mut S::Cache,
    ) -> Result<(bool, bool), SolveError<S::Error>> {
        let rules = self.rules;
        let g = rules.geometry();
        let side = pos.side_to_move();
        let (own, opp, kings) = (pos.pieces(side), pos.pieces(side.opponent()), pos.kings());
        let empty = g.all & !pos.occupied() & !(1u64 << x);
        let man_dirs = man_capture_dirs(rules, side);
        let crown = match side {
            Color::White => g.top_row,
            Color::Black => g.bottom_row,
        };
        let at = pos.with_king(self.lay.inner, x);
        let (mut won, mut drawn) = (false, false);
        for d in Dir::ALL {
            let from = g.step(x as u8, d.reverse());
            if from == NONE || own >> from & 1 == 0 {
                continue;
            }
            let king = kings >> from & 1 != 0;
            if !(king || rules.men_capture_kings && man_dirs.contains(&d)) {
                continue;
            }
            let to = g.step(x as u8, d);
            if to == NONE || empty >> to & 1 == 0 {
                continue;
            }
            let (dirs, goes_on): (&[Dir], bool) = if king {
                (&Dir::ALL, false)
            } else if crown >> to & 1 != 0 {
                match rules.mid_capture_promotion {
                    MidCapturePromotion::CrownAndStop => (&[], false),
                    MidCapturePromotion::ContinueAsMan => (man_dirs, false),
                    MidCapturePromotion::CrownAndContinue => (&[], true),
                }
            } else {
                (man_dirs, false)
            };
            let takes = if king || rules.men_capture_kings {
                opp
            } else {
                opp & !kings
            };
            // Its start square is empty once it has jumped.
            let free = empty | 1u64 << from;
            let again = goes_on
                || dirs.iter().any(|&d2| {
                    let o2 = g.step(to, d2);
                    o2 != NONE && takes >> o2 & 1 != 0 && {
                        let l2 = g.step(o2, d2);
                        l2 != NONE && free >> l2 & 1 != 0
                    }
                });
            if again {
                // That piece's captures that take the king.
                let seen = (&mut won, &mut drawn);
                self.note_captures(&at, from, 1u64 << x, (legal, look), seen)?;
            } else {
                self.note_jump(
                    &at.after_jump(g, from, x as u8, to),
                    look,
                    &mut won,
                    &mut drawn,
                )?;
            }
            if won {
                break; // one winning capture is enough
            }
        }
        Ok((won, drawn))
    }

    /// Where capture `succ` of board `pos` (single jumps only, the innermost king's other
    /// colour to move) would go on over the innermost king: the squares next to its landing
    /// square, in a direction the piece captures in, with the square beyond free.
    #[inline]
    fn goes_on(&self, pos: &Position, succ: &Position) -> u64 {
        let rules = self.rules;
        let g = rules.geometry();
        let side = pos.side_to_move();
        let (own, kings) = (pos.pieces(side), pos.kings());
        let moved = succ.pieces(side);
        let (start, land) = (own & !moved, moved & !own);
        let crown = match side {
            Color::White => g.top_row,
            Color::Black => g.bottom_row,
        };
        let dirs: &[Dir] = if start & kings != 0 {
            &Dir::ALL
        } else if !rules.men_capture_kings
            || (land & crown != 0
                && rules.mid_capture_promotion == MidCapturePromotion::CrownAndStop)
        {
            &[]
        } else {
            man_capture_dirs(rules, side)
        };
        // Its start square is empty once it has jumped.
        let free = g.all & !pos.occupied() | start;
        let mut then = 0u64;
        for &d in dirs {
            then |= g.step_set(land, d) & g.step_set(free, d.reverse());
        }
        then
    }

    /// Whether a capture over the innermost king, on slot `x` of board `pos` (single jumps
    /// only, whose captures are `after`, each going on over the innermost king where `goes`
    /// says; the other colour to move), reaches a lost position
    /// and whether one reaches a drawn one: the captures from the move generator
    /// ([`captures_from`], into `legal`) that take the king, of the pieces whose capture
    /// lands next to it and of those that jump it at once.
    fn split_slot(
        &self,
        pos: &Position,
        x: u32,
        (after, goes): (&[Position], &[u64]),
        legal: &mut Vec<Move>,
        look: &mut S::Cache,
    ) -> Result<(bool, bool), SolveError<S::Error>> {
        let rules = self.rules;
        let g = rules.geometry();
        let side = pos.side_to_move();
        let (own, kings) = (pos.pieces(side), pos.kings());
        let empty = g.all & !pos.occupied();
        let mut from = 0u64;
        for (succ, on) in after.iter().zip(goes) {
            if on >> x & 1 != 0 {
                from |= own & !succ.pieces(side);
            }
        }
        let man_dirs = man_capture_dirs(rules, side);
        for d in Dir::ALL {
            let men = if rules.men_capture_kings && man_dirs.contains(&d) {
                own & !kings
            } else {
                0
            };
            let (s, l) = (g.step(x as u8, d.reverse()), g.step(x as u8, d));
            if s != NONE && l != NONE && (own & kings | men) >> s & 1 != 0 && empty >> l & 1 != 0 {
                from |= 1u64 << s;
            }
        }
        let at = pos.with_king(self.lay.inner, x);
        let (mut won, mut drawn) = (false, false);
        while from != 0 && !won {
            let s = from.trailing_zeros() as u8;
            from &= from - 1;
            let seen = (&mut won, &mut drawn);
            self.note_captures(&at, s, 1u64 << x, (legal, look), seen)?;
        }
        Ok((won, drawn))
    }

    /// Checks the outcomes `(won, drawn)` that [`BitSlice::row_captures`] found for the slots
    /// of `split` against every capture from the move generator (debug builds).
    fn check_split(
        &self,
        pos: &Position,
        mut split: u32,
        (won, drawn): (u32, u32),
        w: &mut WorkerBufs<S::Cache>,
    ) -> Result<(), SolveError<S::Error>> {
        while split != 0 {
            let x = split.trailing_zeros();
            split &= split - 1;
            let found = match (won >> x & 1, drawn >> x & 1) {
                (1, _) => Wld::Win,
                (_, 1) => Wld::Draw,
                _ => Wld::Loss,
            };
            let whole = self.capture_value(&pos.with_king(self.lay.inner, x), true, w)?;
            debug_assert_eq!(found, whole, "slot {x} of {pos:?}");
        }
        Ok(())
    }

    /// The outcome of capture position `pos` from the slices its captures lead to: single
    /// jumps built directly where they are all there is ([`single_jumps`], not tried where
    /// the caller knows a multiple jump is `likely`), the move generator otherwise; the
    /// successors looked up until one is lost for the other side.
    fn capture_value(
        &self,
        pos: &Position,
        likely: bool,
        w: &mut WorkerBufs<S::Cache>,
    ) -> Result<Wld, SolveError<S::Error>> {
        let WorkerBufs {
            after, legal, look, ..
        } = w;
        if !likely && single_jumps(self.rules, pos, after) {
            assert!(
                !after.is_empty(),
                "capture slots disagree with single_jumps"
            );
            return self.best_of(after.iter().copied(), look);
        }
        legal_moves(self.rules, pos, Counting::Unique, legal);
        assert!(!legal.is_empty(), "a capture slot without a move");
        self.best_of(legal.iter().map(|m| m.apply_unchecked(pos)), look)
    }

    /// The best outcome for the side to move among successors `succs`, looked up in turn
    /// until one is lost for the other side.
    fn best_of(
        &self,
        succs: impl Iterator<Item = Position>,
        look: &mut S::Cache,
    ) -> Result<Wld, SolveError<S::Error>> {
        let mut best = Wld::Loss;
        for succ in succs {
            match self
                .src
                .value(&succ, look)
                .map_err(SolveError::Lookup)?
                .wld()
            {
                Wld::Loss => return Ok(Wld::Win),
                Wld::Draw => best = Wld::Draw,
                Wld::Win => {}
            }
        }
        Ok(best)
    }

    /// Re-evaluates the rows marked dirty, side by side, until none is: each open slot is
    /// won if a move reaches a position lost for the other side, lost if every move reaches
    /// a won one and no exit saves it. A row that changes marks the rows that read it (its
    /// predecessors: the other side's rows its king moves lead from). Returns the passes.
    fn iterate(&self, b: &mut Bufs, wide: bool) -> usize {
        let Bufs {
            sh,
            rows,
            wl,
            dirty,
            ..
        } = b;
        let mut passes = 0;
        loop {
            let mut changed = false;
            for side in [Color::White, Color::Black] {
                let (my_wl, them) = split_sides(wl, side);
                let (my_dirty, their_dirty) = split_sides(dirty, side);
                // A side's rows read only the other side's: its rows' re-evaluations are
                // independent of each other, and marking their readers is all they share.
                let pass = Pass {
                    side,
                    sh,
                    me: &rows[side.index()],
                    them,
                    their_dirty,
                    shared: wide,
                };
                changed |= if wide {
                    my_wl
                        .par_chunks_mut(CHUNK)
                        .zip(my_dirty.par_chunks_mut(CHUNK / 64))
                        .enumerate()
                        .map(|(i, (wl, flags))| self.sweep(&pass, i * CHUNK, wl, flags))
                        .reduce(|| false, |a, b| a | b)
                } else {
                    self.sweep(&pass, 0, my_wl, my_dirty)
                };
            }
            passes += 1;
            if !changed {
                return passes;
            }
        }
    }

    /// One side's dirty rows from `first` on (`my_wl` and `flags` theirs): each re-evaluated
    /// ([`BitSlice::iterate`]), its readers marked where it changed. Whether any changed.
    fn sweep(
        &self,
        p: &Pass,
        first: usize,
        my_wl: &mut [WinLoss],
        flags: &mut [AtomicU64],
    ) -> bool {
        let g = self.rules.geometry();
        let inner = self.lay.inner;
        let side = p.side;
        let mark = |r: usize| {
            let (word, bit) = (&p.their_dirty[r / 64], 1u64 << (r % 64));
            if p.shared {
                word.fetch_or(bit, Relaxed);
            } else {
                word.store(word.load(Relaxed) | bit, Relaxed);
            }
        };
        let mut changed = false;
        // The dirty rows in order, each word of flags taken when the walk reaches it.
        let mut dirty_rows = flags.iter_mut().enumerate().flat_map(|(w, f)| {
            let mut d = std::mem::take(f.get_mut());
            std::iter::from_fn(move || {
                (d != 0).then(|| {
                    let i = 64 * w + d.trailing_zeros() as usize;
                    d &= d - 1;
                    i
                })
            })
        });
        // Rows come in no order a cache line holds, so what the next two dirty rows will
        // read is asked for while this one is re-evaluated, a step a row: the second's own
        // entries (whose addresses need no load), then the next one's list of moves (its
        // start asked for a row ago). (Asking for the rows those moves lead to as well, a
        // third step, cost more than it saved: English 0422, session 47.)
        let mut ahead: [Option<usize>; 3] = [None; 3];
        for a in &mut ahead[1..] {
            *a = dirty_rows.next();
        }
        loop {
            ahead = [ahead[1], ahead[2], dirty_rows.next()];
            let Some(i) = ahead[0] else {
                break;
            };
            let r = first + i;
            if let Some(n) = ahead[2].map(|j| first + j) {
                prefetch(&p.sh.kings[n]);
                prefetch(&p.me[n]);
                if let Some(st) = p.sh.starts.get(2 * n) {
                    prefetch(st);
                }
            }
            if let (Some(n), false) = (ahead[1].map(|j| first + j), p.sh.lean) {
                let (lo, hi) = Self::range(&p.sh.starts, n, side);
                for k in (lo..hi).step_by(16).chain((hi > lo).then(|| hi - 1)) {
                    prefetch(&p.sh.moves[k]);
                }
            }
            let row = p.me[r];
            let mine = my_wl[i];
            let open = row.open & !(mine.win() | mine.loss());
            if open == 0 {
                continue;
            }
            let v = p.sh.valid[r];
            let mut wins = 0u32;
            let mut all_won = !row.nonloss;
            // Only first copies are open, and only their bits are ever set: a move to
            // a slot that is not a first copy counts as won here (its won bit is set:
            // [`WinLoss`]), and is read from that position's first copy in another row
            // (`crossings`).
            if side == inner {
                let t = p.them[r];
                for d in Dir::ALL {
                    wins |= from_of(g, t.loss(), d);
                    all_won &= !from_of(g, v, d) | from_of(g, t.win(), d);
                }
                self.crossings(p.sh, r, open, |x, row, at| {
                    let t = p.them[row];
                    wins |= (t.loss() >> at & 1) << x;
                    all_won &= !(1 << x) | (t.win() >> at & 1) << x;
                });
            }
            // A move's slot where its king lands, or not a first copy, reads as won.
            self.each_row(p.sh, r, side, |row| {
                let t = p.them[row];
                wins |= t.loss();
                all_won &= t.win();
            });
            let won = open & wins;
            let lost = open & !wins & all_won;
            if won | lost == 0 {
                continue;
            }
            changed = true;
            my_wl[i] = WinLoss::new(mine.win() | won, mine.loss() | lost);
            // Who reads this row: the other side's rows that move into it (across the
            // first copies too).
            if side.opponent() == inner {
                mark(r);
                self.crossings(p.sh, r, won | lost, |_, row, _| mark(row));
            }
            self.each_row(p.sh, r, side.opponent(), mark);
        }
        changed
    }

    /// Writes the group's planes for the groups that reach it, and its outcomes and capture
    /// bits (and threat positions, where it finds them) in the slice's index order (the
    /// innermost king of each position the lowest of its colour); returns its wins, losses
    /// and draws per side, and its threat positions per side.
    fn write_out(
        &self,
        grp: u64,
        dec: &GroupDecoder,
        b: &mut Bufs,
        wide: bool,
    ) -> ([[u64; 3]; 2], [u64; 2]) {
        let rows = self.lay.rows;
        let slot = self.slot_of[grp as usize] as usize;
        // `f` over the rows, in tasks of `CHUNK` on every thread where `wide`.
        let over_rows = |f: &(dyn Fn(usize, usize) -> Counts + Sync)| -> Counts {
            if wide {
                (0..rows.div_ceil(CHUNK))
                    .into_par_iter()
                    .map(|c| f(c * CHUNK, (c * CHUNK + CHUNK).min(rows)))
                    .reduce(Counts::default, add_counts)
            } else {
                f(0, rows)
            }
        };
        let sh = &b.sh;
        over_rows(&|first, end| {
            for side in 0..2 {
                let base = (slot * 2 + side) * rows;
                for r in first..end {
                    // The solved slots' bits alone ([`WinLoss`]).
                    let solved = sh.valid[r] & self.lay.first_copies(sh.kings[r]);
                    let wl = b.wl[side][r];
                    let wl = WinLoss::new(wl.win() & solved, wl.loss());
                    self.planes[base + r].store(wl.0, Relaxed);
                    if self.threats && side == 0 {
                        self.caps[slot * rows + r].store(b.caps[r], Relaxed);
                    }
                }
            }
            Counts::default()
        });
        let kk = self.ix.kings_per_group();
        let base = grp * kk;
        let ranker = dec.ranker();
        let (won_lost, threats) = if self.lay.runs {
            over_rows(&|first, end| self.write_runs(base, &ranker, b, first..end))
        } else {
            self.write_scattered(base, kk, &ranker, b)
        };
        (won_lost.map(|[w, l]| [w, l, kk - w - l]), threats)
    }

    /// [`BitSlice::write_out`] of rows `rows` where a row's first copies are one run of the
    /// slice's index, in the order of their squares, and the runs come in the order of the
    /// rows: their wins and losses per side, and their threat positions per side.
    fn write_runs(
        &self,
        base: u64,
        ranker: &KingsRanker,
        b: &Bufs,
        rows: std::ops::Range<usize>,
    ) -> Counts {
        let mut won_lost = [[0u64; 2]; 2];
        let mut threats = [0u64; 2];
        let mut words = [Flush::new(self.values[0]), Flush::new(self.values[1])];
        let mut caps = [Flush::new(self.capture[0]), Flush::new(self.capture[1])];
        for r in rows {
            let others = b.sh.kings[r];
            let first = self.lay.first_copies(others) & b.sh.valid[r];
            if first == 0 {
                continue;
            }
            let (wk, bk) = self.lay.kings(others, first.trailing_zeros());
            let start = base + ranker.rank(wk, bk);
            let len = first.count_ones();
            for side in 0..2 {
                let (row, wl) = (&b.rows[side][r], b.wl[side][r]);
                let [win, loss, cap, threat] = gather(
                    first,
                    [wl.win(), wl.loss(), row.cap | row.threat, row.threat],
                );
                won_lost[side][0] += u64::from(win.count_ones());
                won_lost[side][1] += u64::from(loss.count_ones());
                threats[side] += u64::from(threat.count_ones());
                let code = (spread(win) * u64::from(WldCode::Win.bits()))
                    | (spread(loss) * u64::from(WldCode::Loss.bits()));
                words[side].put_run(2 * start, code, 2 * len);
                caps[side].put_run(start, u64::from(cap), len);
            }
        }
        (won_lost, threats)
    }

    /// [`BitSlice::write_out`] of every row where White is the innermost colour and Black
    /// has kings: Black's kings are ranked among the squares White's leave, so a row's
    /// first copies lie apart in the index. Each row's are ranked from tables built once
    /// (`with_one_more`), their codes gathered in the group's own words and written in
    /// order at the end. On one thread: the rows' first copies scatter over the group's
    /// words, and an atomic `or` a position made this twice as slow on two threads
    /// (English 0304, performance-history, session 34).
    fn write_scattered(&self, base: u64, kk: u64, ranker: &KingsRanker, b: &mut Bufs) -> Counts {
        let n32 = kk.div_ceil(32) as usize;
        for side in 0..2 {
            b.codes[side].clear();
            b.codes[side].resize(n32, 0);
            b.dcs[side].clear();
            b.dcs[side].resize(n32.div_ceil(2), 0);
        }
        let mut won_lost = [[0u64; 2]; 2];
        let mut threats = [0u64; 2];
        for (r, &(wo, bo)) in b.sh.kings.iter().enumerate() {
            let first = self.lay.first_copies((wo, bo)) & b.sh.valid[r];
            if first == 0 {
                continue;
            }
            let at = ranker.with_one_more(wo, bo, Color::White);
            for side in 0..2 {
                let row = &b.rows[side][r];
                let (win, loss) = (b.wl[side][r].win(), b.wl[side][r].loss());
                let dc = (row.cap | row.threat) & first;
                won_lost[side][0] += u64::from((win & first).count_ones());
                won_lost[side][1] += u64::from((loss & first).count_ones());
                threats[side] += u64::from((row.threat & first).count_ones());
                let (codes, dcs) = (&mut b.codes[side], &mut b.dcs[side]);
                let mut m = first & (win | loss | dc);
                while m != 0 {
                    let x = m.trailing_zeros();
                    m &= m - 1;
                    let j = at.rank(x) as usize;
                    let code = (u64::from(win >> x & 1) * u64::from(WldCode::Win.bits()))
                        | (u64::from(loss >> x & 1) * u64::from(WldCode::Loss.bits()));
                    codes[j / 32] |= code << (2 * (j % 32));
                    dcs[j / 64] |= u64::from(dc >> x & 1) << (j % 64);
                }
            }
        }
        let mut words = [Flush::new(self.values[0]), Flush::new(self.values[1])];
        let mut caps = [Flush::new(self.capture[0]), Flush::new(self.capture[1])];
        for side in 0..2 {
            for (w, &code) in b.codes[side].iter().enumerate() {
                let len = (kk - 32 * w as u64).min(32) as u32;
                words[side].put_run(2 * (base + 32 * w as u64), code, 2 * len);
            }
            for (w, &dc) in b.dcs[side].iter().enumerate() {
                let len = (kk - 64 * w as u64).min(64) as u32;
                caps[side].put_run(base + 64 * w as u64, dc, len);
            }
        }
        (won_lost, threats)
    }
}

/// A hint that `x` will be read soon (a no-op where the target has no prefetch).
#[inline(always)]
fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `_mm_prefetch` needs SSE, which every x86-64 processor has; a prefetch reads
    // nothing into the program and cannot fault, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            std::ptr::from_ref(x).cast(),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

/// The bits of each word at the set bits of `mask`, packed to the low end in order (what
/// `pext` does; a loop over the mask's runs of set bits, since builds do not assume BMI2).
#[inline]
fn gather<const N: usize>(mask: u32, words: [u32; N]) -> [u32; N] {
    let mut out = [0u32; N];
    let (mut m, mut at) = (mask, 0u32);
    while m != 0 {
        let lo = m.trailing_zeros();
        let len = (!(m >> lo)).trailing_zeros();
        let keep = if len == 32 { u32::MAX } else { (1 << len) - 1 };
        for (o, w) in out.iter_mut().zip(words) {
            *o |= (w >> lo & keep) << at;
        }
        at += len;
        m &= !(keep << lo);
    }
    out
}

/// The sum of `f` over the squares of `set`.
#[inline]
fn ones(mut set: u64, f: impl Fn(u8) -> u32) -> u32 {
    let mut sum = 0;
    while set != 0 {
        sum += f(set.trailing_zeros() as u8);
        set &= set - 1;
    }
    sum
}

/// One side's rows (or flags) and the other's, apart, for `side` to move.
#[inline]
fn split_sides<T>(both: &mut [Vec<T>; 2], side: Color) -> (&mut [T], &mut [T]) {
    let [w, b] = both;
    match side {
        Color::White => (w, b),
        Color::Black => (b, w),
    }
}

/// Bits gathered a word at a time into an array other groups write too. A word whose bits
/// are all the group's is stored whole; one at either end of the group's range, shared with
/// the next group, has the group's bits cleared and then set (`fetch_and`, `fetch_or`), so
/// the other group's bits stay and bits a stopped run left there are overwritten.
struct Flush<'a> {
    words: &'a [AtomicU64],
    at: u64,
    word: u64,
    /// The bits of word `at` that the group writes.
    mask: u64,
}

impl<'a> Flush<'a> {
    fn new(words: &'a [AtomicU64]) -> Flush<'a> {
        Flush {
            words,
            at: u64::MAX,
            word: 0,
            mask: 0,
        }
    }

    /// Write the `len` (at most 64) low bits of `bits` from bit `at` of the array on (runs
    /// come in order).
    #[inline]
    fn put_run(&mut self, at: u64, bits: u64, len: u32) {
        let mask = u64::MAX >> (64 - len);
        let (w, s) = (at / 64, (at % 64) as u32);
        self.put(w, bits << s, mask << s);
        if s + len > 64 {
            self.put(w + 1, bits >> (64 - s), mask >> (64 - s));
        }
    }

    /// Write `bits` (within `mask`, the position's bits) of word `at` (the words come in
    /// order).
    #[inline]
    fn put(&mut self, at: u64, bits: u64, mask: u64) {
        if at != self.at {
            self.flush();
            self.at = at;
        }
        self.word |= bits;
        self.mask |= mask;
    }

    fn flush(&mut self) {
        if self.mask == u64::MAX {
            self.words[self.at as usize].store(self.word, Relaxed);
        } else if self.mask != 0 {
            let w = &self.words[self.at as usize];
            w.fetch_and(!self.mask, Relaxed);
            w.fetch_or(self.word, Relaxed);
        }
        self.word = 0;
        self.mask = 0;
    }
}

impl Drop for Flush<'_> {
    fn drop(&mut self) {
        self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bitbase::solve_kings_wld;
    use crate::compress::add_threats;
    use crate::store::{Codes, Store};

    /// Solves every slice of `rules` up to `pieces` with the grouped WLD solver (kings only:
    /// the bit solver) into a store of outcomes, and each slice the bit-parallel solver
    /// takes with it too, from the same store: every position's outcome and capture flag,
    /// and the counts, must agree; and solved with threat positions, its "don't care" bits
    /// must be the grouped solver's capture bits with the writer's threat pass
    /// (`add_threats`) added. Only the slices `keep` takes are solved (they must hold the
    /// slices each reads). Returns the slices compared.
    fn agrees_with_grouped(rules: Rules, pieces: u32, keep: &dyn Fn(Material) -> bool) -> usize {
        let mut store = Store::new(rules);
        let mut compared = 0;
        let mut threats = 0;
        for m in Material::solve_order(pieces, rules.max_pieces_per_side()) {
            if !keep(m) {
                continue;
            }
            let want = if m.men() == 0 {
                solve_kings_wld(&rules, &store, m, &|_| {}).unwrap()
            } else {
                solve_slice_grouped_wld(&rules, &store, m, false, &|_| {}).unwrap()
            };
            // On one thread, and on three: a round of one group (every kings-only slice's
            // and some of the others') then shares its rows among the threads; with threat
            // positions on three threads, lean rows.
            for threads in [1, 3] {
                if !bitpar_supports(&rules, m) {
                    break;
                }
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                let got = pool
                    .install(|| solve_slice_bitpar_wld(&rules, &store, m))
                    .unwrap();
                got.assert_agrees_with(&want);
                assert_eq!(got.threats, None);
                // With threat positions: the capture bits of both sides with those the
                // writer's threat pass adds, and the same counts.
                let ix = SliceIndex::new(m, rules.geometry());
                let (mut c0, mut c1) = (want.capture[0].to_vec(), want.capture[1].to_vec());
                let t0 = add_threats(&rules, &ix, Color::White, &mut c0, &c1);
                let t1 = add_threats(&rules, &ix, Color::Black, &mut c1, &c0);
                let got = pool
                    .install(|| {
                        let how = BitparHow {
                            threats: true,
                            lean: threads == 3,
                        };
                        solve_slice_bitpar_wld_in(&rules, &store, m, how, None, &|_| {})
                    })
                    .unwrap();
                assert_eq!(got.threats, Some([t0, t1]), "{m}");
                for side in 0..2 {
                    for i in 0..want.size {
                        assert_eq!(got.code(side, i), want.code(side, i), "{m} {side} {i}");
                    }
                }
                assert!(got.capture[0].to_vec() == c0, "{m}: White's threats differ");
                assert!(got.capture[1].to_vec() == c1, "{m}: Black's threats differ");
                threats += t0 + t1;
                compared += usize::from(threads == 1);
            }
            let [a, b] = want.values;
            store.insert_codes(
                m,
                [Some(Codes::Wld(a.to_vec())), Some(Codes::Wld(b.to_vec()))],
            );
        }
        assert!(threats > 0, "no threat position compared");
        compared
    }

    /// Every English slice of 2-4 pieces with a king, pieces on both sides: the slices
    /// with men and kings, and those of kings only (one group).
    #[test]
    fn english_two_to_four_pieces_agree_with_the_grouped_solver() {
        let n = agrees_with_grouped(Rules::ENGLISH, 4, &|_| true);
        assert_eq!(n, 19, "slices compared");
    }

    /// Slices where the innermost colour has two or three kings (each position two or three
    /// slots, its first copy solved, moves across first copies read from other rows):
    /// English 2-5 (men and kings), and the kings-only slices of at most three kings a side
    /// (0303: one group, its rows shared among the threads).
    #[test]
    fn several_kings_of_the_innermost_colour_agree_with_the_grouped_solver() {
        assert_eq!(agrees_with_grouped(Rules::ENGLISH, 5, &|_| true), 39);
        let kings = |m: Material| m.men() == 0 && m.white_kings <= 3 && m.black_kings <= 3;
        assert_eq!(agrees_with_grouped(Rules::ENGLISH, 6, &kings), 6);
    }

    /// The other rule sets it takes: Italian (men do not capture kings; captures ranked by
    /// the Italian precedence) and English with a blocked side drawn.
    #[test]
    fn italian_and_english_blocked_draw_agree_with_the_grouped_solver() {
        assert_eq!(agrees_with_grouped(Rules::ITALIAN, 4, &|_| true), 19);
        let rules = Rules {
            blocked: dtb_probe::internal::rules::BlockedOutcome::Draw,
            ..Rules::ENGLISH
        };
        assert_eq!(agrees_with_grouped(rules, 4, &|_| true), 19);
    }

    /// Rule fields that make multiple jumps common on few pieces (men capturing backward),
    /// with each way a man may be crowned mid-capture and captured pieces removed at once,
    /// and a man crowned mid-capture going on backwards as a king where men capture forwards
    /// only: the capture rows whose board holds a multiple jump (`multiple_jumps`).
    #[test]
    fn multiple_jump_rules_agree_with_the_grouped_solver() {
        use dtb_probe::internal::rules::Removal;
        for (promotion, removal, backward) in [
            (MidCapturePromotion::CrownAndStop, Removal::AtEnd, true),
            (
                MidCapturePromotion::CrownAndContinue,
                Removal::Immediate,
                true,
            ),
            (MidCapturePromotion::ContinueAsMan, Removal::AtEnd, true),
            // A man that crowns on a jump goes on as a king, backwards too, where men
            // capture forwards only.
            (MidCapturePromotion::CrownAndContinue, Removal::AtEnd, false),
        ] {
            let rules = Rules {
                men_capture_backward: backward,
                mid_capture_promotion: promotion,
                removal,
                ..Rules::ENGLISH
            };
            assert_eq!(
                agrees_with_grouped(rules, 4, &|_| true),
                19,
                "{promotion:?} {removal:?} backward {backward}"
            );
        }
    }

    /// `gather` packs the bits under the mask in order, as `pext` would (checked against a
    /// bit-by-bit packing), and `spread` moves bit k to bit 2k.
    #[test]
    fn gather_and_spread_move_the_bits_they_say() {
        let by_bits = |mask: u32, w: u32| {
            let (mut out, mut k) = (0u32, 0);
            for b in 0..32 {
                if mask >> b & 1 != 0 {
                    out |= (w >> b & 1) << k;
                    k += 1;
                }
            }
            out
        };
        let mut x = 0x9E37_79B9u32;
        for mask in [
            0,
            1,
            u32::MAX,
            0x8000_0001,
            0x0F0F_F0F0,
            0x7FFF_FFFE,
            0xDEAD_BEEF,
        ] {
            for _ in 0..50 {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                let w = [x, !x, x.rotate_left(7)];
                assert_eq!(gather(mask, w), w.map(|w| by_bits(mask, w)), "{mask:#x}");
            }
        }
        assert_eq!(gather(0b1011_0100, [0b1001_0100]), [0b1011]);
        assert_eq!(spread(0), 0);
        assert_eq!(spread(0b1011), 0b0100_0101);
        assert_eq!(spread(u32::MAX), 0x5555_5555_5555_5555);
        assert_eq!(spread(1 << 31), 1 << 62);
    }

    /// Which rule sets it takes: 8x8 with short kings and compulsory capture.
    #[test]
    fn it_takes_short_kings_on_eight_by_eight_only() {
        let m = Material::parse("1111").unwrap();
        assert!(bitpar_supports(&Rules::ENGLISH, m));
        assert!(bitpar_supports(&Rules::ITALIAN, m));
        for rules in [
            Rules::GRACZ8,
            Rules::RUSSIAN,
            Rules::POOL,
            Rules::INTERNATIONAL,
        ] {
            assert!(!bitpar_supports(&rules, m), "{}", rules.name);
        }
        // No king to be the innermost, or a side without pieces.
        assert!(!bitpar_supports(
            &Rules::ENGLISH,
            Material::parse("2020").unwrap()
        ));
        assert!(!bitpar_supports(
            &Rules::ENGLISH,
            Material::parse("1100").unwrap()
        ));
    }

    /// Rows and the other kings' move lists are numbered by `u32`: past what it numbers, a
    /// slice's rows are lean (no move list) or, past the rows, it is not bit-parallel.
    #[test]
    fn what_a_u32_numbers() {
        let e = Rules::ENGLISH;
        let m = |s: &str| Material::parse(s).unwrap();
        // The largest rows at eight pieces: 0404's, four white kings and three black ones
        // (Black's fourth innermost) on 32 squares, at most four moves each of the seven.
        assert_eq!(Layout::new(&e, m("0404")).rows, 117_804_960);
        assert!(bitpar_move_list_fits(&e, m("0404")));
        assert!(bitpar_move_list_fits(&e, m("1111")));
        // 0405: 589,024,800 rows x 8 kings x 4 = 18.8 G moves.
        assert!(bitpar_supports(&e, m("0405")));
        assert!(!bitpar_move_list_fits(&e, m("0405")));
        // 0505: 3,534,148,800 rows; 0506: 13,547,570,400.
        assert!(bitpar_supports(&e, m("0505")));
        assert!(!bitpar_supports(&e, m("0506")));
        // No king: no rows, nothing to number.
        assert!(bitpar_move_list_fits(&e, m("2020")));
    }
}
