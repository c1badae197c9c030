//! One men group solved ([`solve_group`]): its cells, the init pass that classifies every
//! position, the propagation by levels of plies over king moves, and the write-out into the
//! slice's results. The parent module runs the groups in rounds of potential.

use super::*;

/// One position of a group while it is solved: value (or open), exit bits and slowest
/// loss exit, successors left in the group. One struct, so a predecessor update touches one
/// cache line instead of three (large groups do not fit in cache). Value and counter are
/// atomics for the parallel propagation of a group alone in its round; a worker that owns
/// the cells reaches them through `get_mut`, plain loads and stores.
struct Cell {
    val: AtomicU16,
    aux: u16,
    cnt: AtomicU8,
}

impl Cell {
    /// Open, no exits, no successors counted.
    fn open() -> Cell {
        Cell {
            val: AtomicU16::new(OPEN),
            aux: 0,
            cnt: AtomicU8::new(0),
        }
    }

    /// Its value, `None` while open.
    #[inline]
    fn value(&self) -> Option<Code> {
        match self.val.load(Relaxed) {
            OPEN => None,
            bits => Some(Code::from_bits(bits)),
        }
    }
}

/// The value of a cell not yet resolved.
const OPEN: u16 = u16::MAX;

/// Frontier positions a parallel propagation step (a group alone in its round) hands to one
/// task; a level with fewer than two tasks' worth runs on the worker alone.
const PROPAGATE_CHUNK: usize = if cfg!(test) { 1 << 6 } else { 1 << 14 };

/// Buffers of one worker, reused from group to group (`C`: the look-up cache of the
/// finished slices read).
#[derive(Default)]
pub(super) struct Scratch<C> {
    cells: Vec<Cell>,
    kings: Vec<(u64, u64)>,
    frontier: Vec<Vec<u32>>,
    cands: Vec<Vec<u32>>,
    moves: Vec<dtb_probe::movegen::Move>,
    after: Vec<Position>,
    man_moves: Vec<ManMove>,
    look: C,
    /// Progress units not reported yet.
    pub(super) unreported: u64,
}

/// Progress units a worker gathers before it reports them.
pub(super) const PROGRESS_BATCH: u64 = 1 << 20;

/// A man move of a group that does not crown: from, to, and the group it leads to (its
/// first index and its kings ranker).
struct ManMove {
    from: u8,
    to: u8,
    start: u64,
    rank: dtb_probe::internal::index::KingsRanker,
}

fn put(lists: &mut Vec<Vec<u32>>, level: usize, l: u32) {
    if lists.len() <= level {
        lists.resize_with(level + 1, Vec::new);
    }
    lists[level].push(l);
}

/// Positions of a group's init pass classified per parallel chunk (a group alone in its
/// round, see [`solve_group`]). Small in unit tests, so that the solver agreement test
/// takes the chunked path on the small slices it solves.
const INIT_CHUNK: usize = if cfg!(test) { 1 << 8 } else { 1 << 16 };

/// The fixed context of the slice being solved, the same for each of its groups.
pub(super) struct SliceSolve<'a, S, R> {
    pub(super) rules: &'a Rules,
    pub(super) src: &'a S,
    pub(super) material: Material,
    pub(super) ix: &'a SliceIndex,
    pub(super) steps: &'a Steps,
    pub(super) slice: &'a Shared<'a, R>,
    /// DTC solving: the count profile, by which a man move into a solved group of this
    /// slice is an exit ([`CountProfile::convert`]); `None` for game values.
    pub(super) count: Option<&'a CountProfile>,
}

impl<S, R> SliceSolve<'_, S, R> {
    /// The code a man move into a solved group of this slice, whose position has `child`,
    /// stands for: `child` itself, or under a count profile its conversion.
    #[inline]
    fn man_exit(&self, child: Code) -> Code {
        match self.count {
            None => child,
            Some(p) => p.convert(&self.material, &self.material, true, child),
        }
    }
}

/// What classifying one position of a men group needs: the slice's context and the group's
/// man moves. Shared by the threads of a parallel init pass.
struct GroupInit<'a, S, R> {
    cx: &'a SliceSolve<'a, S, R>,
    man_moves: &'a [ManMove],
    first_move: [u8; 64],
    dec: dtb_probe::internal::index::GroupDecoder,
    group_men: u64,
}

impl<'a, S, R> GroupInit<'a, S, R> {
    /// Group `grp`'s decoder and its man moves (listed into `man_moves`).
    fn new(cx: &'a SliceSolve<'a, S, R>, grp: u64, man_moves: &'a mut Vec<ManMove>) -> Self {
        let dec = cx.ix.group_decoder(grp);
        let (wmen, bmen) = dec.men();
        let first_move = list_man_moves(cx, wmen, bmen, man_moves);
        GroupInit {
            cx,
            man_moves,
            first_move,
            dec,
            group_men: wmen | bmen,
        }
    }
}

impl<S: Finished, R: Results> GroupInit<'_, S, R> {
    /// What the position with kings `wk`, `bk` and `side` to move learns from its moves.
    /// A position without a capture is classified without a move list: king moves stay in
    /// the group (counted), man moves lead to solved groups or, crowning, to other slices.
    #[inline]
    fn start(
        &self,
        (wk, bk): (u64, u64),
        side: Color,
        moves: &mut Vec<dtb_probe::movegen::Move>,
        after: &mut Vec<Position>,
        look: &mut S::Cache,
    ) -> Result<Start, SolveError<S::Error>> {
        let GroupInit {
            cx,
            man_moves,
            ref first_move,
            ref dec,
            group_men,
        } = *self;
        let SliceSolve {
            rules,
            src,
            material,
            ix,
            steps,
            slice,
            ..
        } = *cx;
        let g = rules.geometry();
        let pos = dec.with_kings(wk, bk, side);
        // Under compulsory capture `single_jumps` answers most positions alone: the
        // positions after its single captures, or none when there is no capture. Where it
        // declines (a longer capture, a flying king, a precedence rule), `has_capture` tells.
        let quick = rules.capture_compulsory && single_jumps(rules, &pos, after);
        Ok(if quick && !after.is_empty() {
            // Single jumps only: every one leaves the slice.
            let mut exits = Exits::default();
            for succ in after.iter() {
                exits.add(src.value(succ, look).map_err(SolveError::Lookup)?);
            }
            exits.finish(true)
        } else if !quick && has_capture(rules, &pos) {
            legal_moves(rules, &pos, Counting::Unique, moves);
            classify(rules, &pos, moves, |succ| {
                if succ.material() != material {
                    src.value(succ, look).map(Some)
                } else if succ.occupied() & !succ.kings() == group_men {
                    Ok(None) // a king move: same men, same group
                } else {
                    Ok(Some(cx.man_exit(slice.values.get(
                        succ.side_to_move().index(),
                        ix.index(succ) as usize,
                    ))))
                }
            })
            .map_err(SolveError::Lookup)?
        } else {
            let occ = pos.occupied();
            let own = pos.pieces(side);
            let mut exits = Exits::default();
            let mut any = false;
            let mut ks = own & pos.kings();
            while ks != 0 {
                let sq = ks.trailing_zeros() as u8;
                ks &= ks - 1;
                exits.inside += steps.king_targets(sq, occ).count_ones() as u8;
            }
            any |= exits.inside != 0;
            let mut men = own & !pos.kings();
            while men != 0 {
                let sq = men.trailing_zeros() as u8;
                men &= men - 1;
                let mut to = steps.fwd[side.index()][sq as usize] & !occ;
                while to != 0 {
                    let t = to.trailing_zeros() as u8;
                    to &= to - 1;
                    any = true;
                    let c = match man_moves[first_move[sq as usize] as usize..]
                        .iter()
                        .take_while(|m| m.from == sq)
                        .find(|m| m.to == t)
                    {
                        Some(m) => cx.man_exit(slice.values.get(
                            side.opponent().index(),
                            (m.start + m.rank.rank(wk, bk)) as usize,
                        )),
                        // A crowning: the successor lies in another slice.
                        None => src
                            .value(&pos.after_quiet_move(g, sq, t), look)
                            .map_err(SolveError::Lookup)?,
                    };
                    exits.add(c);
                }
            }
            if any {
                exits.finish(false)
            } else {
                Start::Known {
                    code: blocked_code(rules, &pos),
                    capture: false,
                }
            }
        })
    }
}

/// Enters what the init pass learnt of position `l` into its cell and the level lists.
#[inline]
fn record(
    st: Start,
    cell: &mut Cell,
    l: u32,
    frontier: &mut Vec<Vec<u32>>,
    cands: &mut Vec<Vec<u32>>,
) {
    match st {
        Start::Known { code, capture } => {
            *cell.val.get_mut() = code.bits();
            if capture {
                cell.aux = AUX_CAPTURE; // a known cell's aux is otherwise unused
            }
            if let Some(p) = code.plies() {
                put(frontier, p as usize, l);
            }
        }
        Start::Open {
            inside,
            aux,
            win_exit,
        } => {
            *cell.cnt.get_mut() = inside;
            cell.aux = aux;
            if let Some(w) = win_exit {
                put(cands, w.plies().unwrap_or(0) as usize, l);
            }
        }
    }
}

/// A position whose last successor in the group was just found won in `level` plies: the
/// level it is lost in (the next, or its slowest exit if that is later), or `None` if an
/// exit wins or draws for it (`aux`: its exit bits), which then decides its value.
#[inline(always)]
fn lost_at(aux: u16, level: usize) -> Option<usize> {
    if aux & (AUX_WIN_EXIT | AUX_DRAW_EXIT) != 0 {
        return None;
    }
    Some(((aux & AUX_LEVEL) as usize).max(level + 1))
}

/// Solve one men group and write its values and capture flags into the slice's results,
/// which hold the final values of every group of higher potential. A script of phases:
/// the worker's buffers sized ([`Scratch::prepare`]), the group's man moves listed
/// ([`list_man_moves`]), every position classified ([`GroupInit`]), the levels propagated
/// ([`GroupLevels`]), the values written out ([`write_group`]). `parallel` (a group alone in
/// its round, with the progress callback of its parallel init pass) runs the init pass and
/// large levels on every thread.
///
/// A position without a capture is classified without a move list: its king moves stay in
/// the group (counted), its man moves lead to solved groups or, crowning, to other slices.
/// Capture positions go through the general move generator. Predecessors are king unmoves
/// of the side that just moved, ranked among the group's empty squares.
pub(super) fn solve_group<S: Finished, R: Results>(
    cx: &SliceSolve<S, R>,
    grp: u64,
    sc: &mut Scratch<S::Cache>,
    parallel: Option<&(dyn Fn(u64) + Sync)>,
) -> Result<GroupResult, SolveError<S::Error>> {
    let kk = cx.ix.kings_per_group() as usize;
    sc.prepare(kk)
        .map_err(|e| SolveError::OutOfMemory(cx.material, e))?;
    let Scratch {
        cells,
        kings,
        frontier,
        cands,
        moves,
        after,
        man_moves,
        look,
        unreported: _,
    } = sc;
    let init = GroupInit::new(cx, grp, man_moves);
    let reported = match parallel.filter(|_| kk >= 2 * INIT_CHUNK) {
        Some(progress) => init.parallel(cells, kings, frontier, cands, progress)?,
        None => {
            init.serial(cells, kings, (frontier, cands), (moves, after, look))?;
            0
        }
    };
    let levels = GroupLevels {
        kk,
        kings,
        men: init.group_men,
        steps: cx.steps,
        dec: &init.dec,
        // DTC codes are flagged wherever a conversion ends a distance.
        mixed: mixed_levels(cx.rules) || cx.count.is_some(),
    }
    .propagate(cells, frontier, cands, parallel.is_some())
    .ok_or(SolveError::TooDeep(cx.material))?;
    let (counts, max_plies) = write_group(cx.slice, cells, grp, kk);
    Ok(GroupResult {
        counts,
        max_plies,
        levels,
        reported,
    })
}

/// [`solve_group`] for a group of a slice without kings: one position a side, and every
/// move leaves the group (a man move into a solved group, a crowning or a capture into
/// another slice), so each position is classified once ([`GroupInit::start`]) and written,
/// without the cells, level lists and propagation of a group with kings (a men-only slice
/// has millions of groups, and those were most of their time).
pub(super) fn solve_men_group<S: Finished, R: Results>(
    cx: &SliceSolve<S, R>,
    grp: u64,
    sc: &mut Scratch<S::Cache>,
) -> Result<GroupResult, SolveError<S::Error>> {
    debug_assert_eq!(cx.ix.kings_per_group(), 1);
    let Scratch {
        moves,
        after,
        man_moves,
        look,
        ..
    } = sc;
    let init = GroupInit::new(cx, grp, man_moves);
    let mut counts = [[0u64; 3]; 2];
    let mut max_plies = 0u16;
    let mut plies = [None; 2];
    let i = grp as usize;
    for side in [Color::White, Color::Black] {
        let s = side.index();
        let (code, capture) = match init.start((0, 0), side, moves, after, look)? {
            Start::Known { code, capture } => (code, capture),
            // Only a king's move stays in its group.
            Start::Open { .. } => unreachable!("a position without kings waits for nothing"),
        };
        cx.slice.values.set_run(s, i, 1, |_| code);
        if capture {
            cx.slice.capture[s][i / 64].fetch_or(1 << (i % 64), Relaxed);
        }
        tally(&mut counts[s], &mut max_plies, code);
        plies[s] = code.plies();
    }
    // The levels [`solve_group`] would count: one a distinct distance.
    let levels = match plies {
        [None, None] => 0,
        [Some(a), Some(b)] if a != b => 2,
        _ => 1,
    };
    Ok(GroupResult {
        counts,
        max_plies,
        levels,
        reported: 0,
    })
}

impl<C> Scratch<C> {
    /// Empties the buffers for a group of `kk` kings placements a side, its cells open. The
    /// group's buffers may be slice-sized (a slice of kings only is one group): a failed
    /// allocation is an error, not an abort.
    fn prepare(&mut self, kk: usize) -> Result<(), OutOfMemory> {
        let total = 2 * kk;
        let oom = |bytes: usize| OutOfMemory {
            bytes: bytes as u64,
        };
        self.cells.clear();
        self.cells
            .try_reserve_exact(total)
            .map_err(|_| oom(total * std::mem::size_of::<Cell>()))?;
        self.cells.resize_with(total, Cell::open);
        self.kings.clear();
        // Exact, not by doubling: a group of kings only holds hundreds of millions of them.
        self.kings
            .try_reserve_exact(kk)
            .map_err(|_| oom(kk * std::mem::size_of::<(u64, u64)>()))?;
        for list in self.frontier.iter_mut().chain(self.cands.iter_mut()) {
            list.clear();
        }
        Ok(())
    }
}

/// Lists in `man_moves` where each man move of the group with men `wmen`, `bmen` that does
/// not crown leads: another men group, the kings unchanged, so a successor's index is that
/// group's start plus its kings' rank there. Returns `first_move`: for each square of a man,
/// where its moves start in `man_moves` (they are listed together, by square).
fn list_man_moves<S, R>(
    cx: &SliceSolve<S, R>,
    wmen: u64,
    bmen: u64,
    man_moves: &mut Vec<ManMove>,
) -> [u8; 64] {
    let (ix, g) = (cx.ix, cx.rules.geometry());
    let kk = ix.kings_per_group();
    let group_men = wmen | bmen;
    man_moves.clear();
    let mut first_move = [0u8; 64];
    for side in [Color::White, Color::Black] {
        let (mut men, crown_row) = match side {
            Color::White => (wmen, g.top_row),
            Color::Black => (bmen, g.bottom_row),
        };
        while men != 0 {
            let sq = men.trailing_zeros() as u8;
            men &= men - 1;
            first_move[sq as usize] = man_moves.len() as u8;
            let mut to = cx.steps.fwd[side.index()][sq as usize] & !group_men & !crown_row;
            while to != 0 {
                let t = to.trailing_zeros() as u8;
                to &= to - 1;
                let moved = (1u64 << sq) | (1u64 << t);
                let (w2, b2) = match side {
                    Color::White => (wmen ^ moved, bmen),
                    Color::Black => (wmen, bmen ^ moved),
                };
                man_moves.push(ManMove {
                    from: sq,
                    to: t,
                    start: ix.group_of(w2, b2) * kk,
                    rank: ix.ranker_of_men((w2, b2)),
                });
            }
        }
    }
    first_move
}

impl<S: Finished, R: Results> GroupInit<'_, S, R> {
    /// Classifies every position of the group on this thread, in index order, recording
    /// each in its cell and the level lists, and the kings placements in `kings`.
    /// `lists` are the level lists (frontier, candidates); `work` the worker's buffers
    /// (moves, positions after them, its look-up cache).
    #[allow(clippy::type_complexity)]
    fn serial(
        &self,
        cells: &mut [Cell],
        kings: &mut Vec<(u64, u64)>,
        (frontier, cands): (&mut Vec<Vec<u32>>, &mut Vec<Vec<u32>>),
        (moves, after, look): (
            &mut Vec<dtb_probe::movegen::Move>,
            &mut Vec<Position>,
            &mut S::Cache,
        ),
    ) -> Result<(), SolveError<S::Error>> {
        let kk = cells.len() / 2;
        for (li, (wk, bk)) in self.dec.kings_from(0).enumerate() {
            kings.push((wk, bk));
            for side in [Color::White, Color::Black] {
                let l = li + side.index() * kk;
                let st = self.start((wk, bk), side, moves, after, look)?;
                record(st, &mut cells[l], l as u32, frontier, cands);
            }
        }
        Ok(())
    }

    /// [`GroupInit::serial`] for one large group alone in its round (a slice of kings only):
    /// its positions are classified in chunks on every thread, each chunk into its own lists,
    /// merged after. Each chunk reports its progress; returns the progress reported (the
    /// propagation that follows is reported when the group is done).
    fn parallel(
        &self,
        cells: &mut [Cell],
        kings: &mut Vec<(u64, u64)>,
        frontier: &mut Vec<Vec<u32>>,
        cands: &mut Vec<Vec<u32>>,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<u64, SolveError<S::Error>> {
        let kk = cells.len() / 2;
        kings.resize(kk, (0, 0));
        let (white, black) = cells.split_at_mut(kk);
        type Lists = (Vec<Vec<u32>>, Vec<Vec<u32>>);
        let parts: Result<Vec<Lists>, SolveError<S::Error>> = white
            .par_chunks_mut(INIT_CHUNK)
            .zip(black.par_chunks_mut(INIT_CHUNK))
            .zip(kings.par_chunks_mut(INIT_CHUNK))
            .enumerate()
            .map_init(
                || (Vec::new(), Vec::new(), S::Cache::default()),
                |(moves, after, look), (c, ((white, black), ks))| {
                    let first = c * INIT_CHUNK;
                    let (mut fr, mut ca) = (Vec::new(), Vec::new());
                    let placements = self.dec.kings_from(first as u64).take(ks.len());
                    for (j, (wk, bk)) in placements.enumerate() {
                        ks[j] = (wk, bk);
                        for (side, cell) in
                            [(Color::White, &mut white[j]), (Color::Black, &mut black[j])]
                        {
                            let st = self.start((wk, bk), side, moves, after, look)?;
                            let l = first + j + side.index() * kk;
                            record(st, cell, l as u32, &mut fr, &mut ca);
                        }
                    }
                    progress(2 * ks.len() as u64);
                    Ok((fr, ca))
                },
            )
            .collect();
        for (fr, ca) in parts? {
            for (level, list) in fr.into_iter().enumerate() {
                for l in list {
                    put(frontier, level, l);
                }
            }
            for (level, list) in ca.into_iter().enumerate() {
                for l in list {
                    put(cands, level, l);
                }
            }
        }
        Ok(2 * kk as u64)
    }
}

/// How the propagation reaches a group's cells: [`Owned`] where one worker holds the group
/// (plain loads and stores through `get_mut`), [`Claimed`] where a group alone in its round
/// propagates a level on every thread (a cell claimed by compare-and-swap on a loss level, or
/// by the decrement that takes its counter to zero on a win level, so each is resolved
/// once). [`GroupLevels::step`] is written once over both, so the two cannot drift apart.
trait CellAccess {
    /// The value bits of cell `l` ([`OPEN`] while unresolved).
    fn val(&mut self, l: usize) -> u16;
    /// Resolves open cell `l` to `code`; false if another thread resolved it first.
    fn claim(&mut self, l: usize, code: u16) -> bool;
    /// Counts one successor of cell `l` off; true if it was its last one in the group.
    fn last_successor(&mut self, l: usize) -> bool;
    /// The exit bits and slowest loss exit of cell `l`.
    fn aux(&mut self, l: usize) -> u16;
    /// Resolves cell `l`, whose last successor this thread counted off, to `code`.
    fn set(&mut self, l: usize, code: u16);
}

/// The cells of a group one worker holds.
struct Owned<'a>(&'a mut [Cell]);

impl CellAccess for Owned<'_> {
    #[inline(always)]
    fn val(&mut self, l: usize) -> u16 {
        *self.0[l].val.get_mut()
    }

    #[inline(always)]
    fn claim(&mut self, l: usize, code: u16) -> bool {
        *self.0[l].val.get_mut() = code;
        true
    }

    #[inline(always)]
    fn last_successor(&mut self, l: usize) -> bool {
        let cnt = self.0[l].cnt.get_mut();
        *cnt -= 1;
        *cnt == 0
    }

    #[inline(always)]
    fn aux(&mut self, l: usize) -> u16 {
        self.0[l].aux
    }

    #[inline(always)]
    fn set(&mut self, l: usize, code: u16) {
        *self.0[l].val.get_mut() = code;
    }
}

/// The cells of a group whose level every thread propagates.
#[derive(Clone, Copy)]
struct Claimed<'a>(&'a [Cell]);

impl CellAccess for Claimed<'_> {
    #[inline(always)]
    fn val(&mut self, l: usize) -> u16 {
        self.0[l].val.load(Relaxed)
    }

    #[inline(always)]
    fn claim(&mut self, l: usize, code: u16) -> bool {
        self.0[l]
            .val
            .compare_exchange(OPEN, code, Relaxed, Relaxed)
            .is_ok()
    }

    #[inline(always)]
    fn last_successor(&mut self, l: usize) -> bool {
        self.0[l].cnt.fetch_sub(1, Relaxed) == 1
    }

    #[inline(always)]
    fn aux(&mut self, l: usize) -> u16 {
        self.0[l].aux
    }

    #[inline(always)]
    fn set(&mut self, l: usize, code: u16) {
        self.0[l].val.store(code, Relaxed);
    }
}

/// What the propagation of a group needs besides its cells and level lists: the group's
/// shape (`kk` kings placements a side, their squares, its men) to find predecessors.
struct GroupLevels<'a> {
    kk: usize,
    kings: &'a [(u64, u64)],
    men: u64,
    steps: &'a Steps,
    dec: &'a dtb_probe::internal::index::GroupDecoder,
    /// Under `blocked = majority` a level holds wins and losses: each position's outcome is
    /// read from its code. Otherwise a level's outcome is its parity.
    mixed: bool,
}

/// One level of the propagation: positions resolved in `level` plies, and the codes their
/// predecessors get.
#[derive(Clone, Copy)]
struct Level {
    level: usize,
    lost_here: bool,
    win_next: u16,
    loss_next: u16,
}

impl GroupLevels<'_> {
    /// Calls `visit` with each predecessor of position `l` of the group: the side that just
    /// moved (to reach `l`) moves a king back.
    #[inline(always)]
    fn for_each_predecessor(&self, l: usize, visit: &mut impl FnMut(usize)) {
        let (kk, kings, men, steps, dec) = (self.kk, self.kings, self.men, self.steps, self.dec);
        let mover_white = l >= kk;
        let (wk, bk) = kings[l % kk];
        let occ = men | wk | bk;
        let (mut mk, base) = if mover_white { (wk, 0) } else { (bk, kk) };
        while mk != 0 {
            let t = mk.trailing_zeros() as u8;
            mk &= mk - 1;
            let mut from = steps.king_targets(t, occ);
            while from != 0 {
                let f = from.trailing_zeros();
                from &= from - 1;
                // The predecessor: the king on `t` stood on `f`.
                let rank = dec.kings_rank_after((l % kk) as u64, wk, bk, t, f as u8);
                visit(base + rank as usize);
            }
        }
    }

    /// Propagates by levels of plies, king moves only, from the positions the init pass
    /// resolved (`frontier`) and scheduled (`cands`). Returns the number of levels run, or
    /// `None` past the deepest level a cell can hold.
    fn propagate(
        &self,
        cells: &mut [Cell],
        frontier: &mut Vec<Vec<u32>>,
        cands: &mut Vec<Vec<u32>>,
        parallel: bool,
    ) -> Option<usize> {
        let mut level = 0usize;
        let mut levels = 0usize;
        let mut current = Vec::new();
        while level < frontier.len() || level < cands.len() {
            if level >= AUX_LEVEL as usize {
                return None;
            }
            if let Some(list) = cands.get_mut(level) {
                for &l in list.iter() {
                    let cell = &mut cells[l as usize];
                    // A win exit's distance (a position with one), else a slow loss's.
                    let win = cell.aux & AUX_WIN_EXIT != 0;
                    let val = cell.val.get_mut();
                    if *val == OPEN {
                        *val = code_at(level, win).bits();
                        put(frontier, level, l);
                    }
                }
                list.clear();
            }
            current.clear();
            if let Some(f) = frontier.get_mut(level) {
                std::mem::swap(f, &mut current);
            }
            if current.is_empty() {
                level += 1;
                continue;
            }
            levels += 1;
            let lv = Level {
                level,
                lost_here: level.is_multiple_of(2),
                win_next: code_at(level + 1, true).bits(),
                loss_next: code_at(level + 1, false).bits(),
            };
            if parallel && current.len() >= 2 * PROPAGATE_CHUNK {
                let shared = Claimed(cells);
                type Found = (Vec<u32>, Vec<(usize, u32)>);
                let found: Vec<Found> = current
                    .par_chunks(PROPAGATE_CHUNK)
                    .map(|part| {
                        let (mut next, mut later) = (Vec::new(), Vec::new());
                        let mut cells = shared;
                        for &l in part {
                            self.step(&mut cells, lv, l, &mut |at, ql| {
                                if at == level + 1 {
                                    next.push(ql);
                                } else {
                                    later.push((at, ql));
                                }
                            });
                        }
                        (next, later)
                    })
                    .collect();
                for (next, later) in found {
                    for ql in next {
                        put(frontier, level + 1, ql);
                    }
                    for (at, ql) in later {
                        put(cands, at, ql);
                    }
                }
            } else {
                let mut owned = Owned(cells);
                for &l in &current {
                    self.step(&mut owned, lv, l, &mut |at, ql| {
                        let lists = if at == level + 1 {
                            &mut *frontier
                        } else {
                            &mut *cands
                        };
                        put(lists, at, ql);
                    });
                }
            }
            level += 1;
        }
        Some(levels)
    }

    /// The predecessors of position `l`, resolved at `lv.level`: each open one is won at the
    /// next level if `l` is lost; if `l` is won, it loses a successor, and with its last one
    /// gone it is lost at the next level or at its slowest exit (or its exits decide it).
    /// `found(at, ql)`: predecessor `ql` is resolved at level `at` (the next: done; a later
    /// one: scheduled).
    #[inline(always)]
    fn step<C: CellAccess>(
        &self,
        cells: &mut C,
        lv: Level,
        l: u32,
        found: &mut impl FnMut(usize, u32),
    ) {
        let lost = if self.mixed {
            Code::from_bits(cells.val(l as usize)).wld() == Wld::Loss
        } else {
            lv.lost_here
        };
        self.for_each_predecessor(l as usize, &mut |ql| {
            if cells.val(ql) != OPEN {
                return;
            }
            if lost {
                if cells.claim(ql, lv.win_next) {
                    found(lv.level + 1, ql as u32);
                }
                return;
            }
            if !cells.last_successor(ql) {
                return;
            }
            match lost_at(cells.aux(ql), lv.level) {
                Some(at) if at == lv.level + 1 => {
                    cells.set(ql, lv.loss_next);
                    found(at, ql as u32);
                }
                Some(at) => found(at, ql as u32),
                None => {}
            }
        });
    }
}

/// Writes the final values and capture flags of group `grp` (`kk` kings placements a side)
/// from its `cells` into the slice's results (open cells are draws); returns its wins,
/// losses and draws per side and its longest distance.
fn write_group<R: Results>(
    slice: &Shared<R>,
    cells: &[Cell],
    grp: u64,
    kk: usize,
) -> ([[u64; 3]; 2], u16) {
    let mut counts = [[0u64; 3]; 2];
    let mut max_plies = 0u16;
    let base = (grp * kk as u64) as usize;
    for (side, part) in cells.chunks(kk).enumerate() {
        slice
            .values
            .set_run(side, base, kk, |i| part[i].value().unwrap_or(DRAW));
        let capture = &slice.capture[side];
        // Capture flags are gathered a word at a time; a word at either end of the range
        // may be shared with the next group, hence `fetch_or`.
        let mut word = 0u64;
        let mut at = base / 64;
        for (i, cell) in part.iter().enumerate() {
            let val = cell.value();
            tally(&mut counts[side], &mut max_plies, val.unwrap_or(DRAW));
            let pos = base + i;
            if pos / 64 != at {
                if word != 0 {
                    capture[at].fetch_or(word, Relaxed);
                }
                word = 0;
                at = pos / 64;
            }
            if cell.aux & AUX_CAPTURE != 0 && val.is_some() {
                word |= 1 << (pos % 64);
            }
        }
        if word != 0 {
            capture[at].fetch_or(word, Relaxed);
        }
    }
    (counts, max_plies)
}
