//! An explicit-counter solver of a count profile: the oracle that DTC tables are checked
//! against (issue 35). It solves the states (position, counter) themselves, one value per
//! counter, from nothing but the rule model as `probe/src/count.rs` states it:
//!
//! - the regime of a position comes from its material ([`CountProfile::regime`]) and has a
//!   limit L in plies, or none ([`CountProfile::limit`]);
//! - a side to move without a legal move has lost, or what the variant's blocked rule says
//!   ([`blocked_code`]), at every counter; a side to move without pieces has lost;
//! - otherwise a counter at or over L is a draw;
//! - otherwise the value is the best over the legal moves ([`legal_moves`], unique moves) of
//!   the successor's value at counter 0 if the move resets ([`CountProfile::resets`]), else at
//!   the counter plus one.
//!
//! No DTC code and no single number per position: each counter has its own value.
//!
//! **Order.** A move that resets leads to a slice solved earlier (a capture, a crowning) or to
//! a men placement of the same slice with its men further advanced (a man moves forward only).
//! A move that does not reset keeps the regime, so its successor has the same limit, one
//! counter more: a king move inside the same men placement, or (International's *five* and
//! *sixteen*, where only a change of regime resets) a man move, a crowning or a capture that
//! keeps the regime, each to a placement or slice solved earlier. So the slices are solved in
//! [`Material::solve_order`], the men placements of a slice from the most advanced to the
//! least, and in one placement the counter layers from L down to 0. A regime without a limit
//! has one layer, whose king moves inside a placement are solved by a fixed point.
//!
//! Nothing trusts that order: every value is stored as "not computed" until it is, and a
//! read of a value not computed panics (only the fixed point reads its own placement's
//! undecided values, and it reads them from its own buffer).

use dtb_probe::fen;
use dtb_probe::internal::board::Geometry;
use dtb_probe::internal::index::{MenCache, SliceIndex};
use dtb_probe::internal::value::{blocked_code, Code};
use dtb_probe::movegen::{legal_moves, Counting, Move};
use dtb_probe::{Color, CountProfile, Material, Position, Rules, Wld};

/// A number below 10,000 for a material whose counts are at most 9 (every slice solved).
fn material_key(m: &Material) -> usize {
    m.counts().iter().fold(0, |k, &c| {
        assert!(c < 10, "{m}: a count above 9");
        10 * k + c as usize
    })
}

/// Two bits a state: 0 not computed yet, else a [`Wld`].
struct Packed(Vec<u64>);

impl Packed {
    fn new(n: u64) -> Packed {
        Packed(vec![0; n.div_ceil(32) as usize])
    }

    fn get(&self, i: u64) -> Option<Wld> {
        match (self.0[(i / 32) as usize] >> (2 * (i % 32))) & 3 {
            0 => None,
            1 => Some(Wld::Win),
            2 => Some(Wld::Draw),
            _ => Some(Wld::Loss),
        }
    }

    fn set(&mut self, i: u64, w: Wld) {
        let bits = match w {
            Wld::Win => 1,
            Wld::Draw => 2,
            Wld::Loss => 3,
        };
        let word = &mut self.0[(i / 32) as usize];
        let shift = 2 * (i % 32);
        assert_eq!((*word >> shift) & 3, 0, "a state's value set twice");
        *word |= bits << shift;
    }
}

/// The value for the mover of a move to a successor of value `w` (for its side to move).
fn for_mover(w: Wld) -> Wld {
    match w {
        Wld::Win => Wld::Loss,
        Wld::Draw => Wld::Draw,
        Wld::Loss => Wld::Win,
    }
}

/// The better of two values for the side to move.
fn better(a: Wld, b: Wld) -> Wld {
    let rank = |w| match w {
        Wld::Loss => 0,
        Wld::Draw => 1,
        Wld::Win => 2,
    };
    if rank(b) > rank(a) {
        b
    } else {
        a
    }
}

/// One canonical slice: its index, its regime's limit and its values.
struct Slice {
    index: SliceIndex,
    limit: Option<u16>,
    /// `values[side * layers + counter]`, side 0 White; `layers` = L + 1, or 1 without a limit.
    values: Vec<Packed>,
}

impl Slice {
    fn layers(&self) -> usize {
        self.limit.map_or(1, |l| l as usize + 1)
    }

    /// The layer of `counter`: counters past the limit are the limit's (drawn but for
    /// terminals), and a slice without a limit has one.
    fn layer(&self, counter: u32) -> usize {
        self.limit.map_or(0, |l| counter.min(u32::from(l)) as usize)
    }

    fn slot(&self, side: Color, layer: usize) -> usize {
        side_no(side) * self.layers() + layer
    }
}

fn side_no(side: Color) -> usize {
    match side {
        Color::White => 0,
        Color::Black => 1,
    }
}

/// Where a state lies: a slice (by number), an index and the side to move (8 bytes: a
/// placement holds one a move).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct State {
    idx: u32,
    slice: u16,
    side: Color,
}

impl State {
    fn new(slice: usize, idx: u64, side: Color) -> State {
        State {
            idx: u32::try_from(idx).expect("a slice of at most 2^32 positions"),
            slice: u16::try_from(slice).expect("at most 2^16 slices"),
            side,
        }
    }
}

/// The moves of the states of one placement, classified: state i's are `counted[start[i]..
/// start[i + 1]]`, `terminal[i]` and `fixed[i]`.
#[derive(Default)]
struct Moves {
    /// No legal move: the variant's terminal value, at every counter.
    terminal: Vec<Option<Wld>>,
    /// The best for the mover over the moves whose successor's value is one number: moves
    /// that reset (the successor at counter 0) and captures of the last piece.
    fixed: Vec<Option<Wld>>,
    /// Successors of moves that do not reset: read at the counter plus one.
    counted: Vec<State>,
    start: Vec<usize>,
}

impl Moves {
    fn counted(&self, i: usize) -> &[State] {
        &self.counted[self.start[i]..self.start[i + 1]]
    }
}

/// The game results of every state (position, counter) of every slice up to N pieces under
/// one count profile, for the side to move.
pub struct Counted {
    rules: Rules,
    profile: CountProfile,
    max_pieces: u32,
    slices: Vec<Slice>,
    /// Slice numbers by [`material_key`] (a hash map costs a fifth of the solving time).
    by_material: Vec<Option<usize>>,
}

/// Solves every slice of 2..=`max_pieces` pieces under `rules` and `profile`.
pub fn solve(rules: &Rules, profile: &CountProfile, max_pieces: u32) -> Counted {
    let g = rules.geometry();
    let mut c = Counted {
        rules: *rules,
        profile: *profile,
        max_pieces,
        slices: Vec::new(),
        by_material: vec![None; 10_000],
    };
    for m in Material::solve_order(max_pieces, max_pieces) {
        let index = SliceIndex::new(m, g);
        let limit = profile.limit(profile.regime(&m));
        assert_eq!(
            limit,
            profile.limit(profile.regime(&m.mirror())),
            "{m}: a regime differs from its mirror's"
        );
        let layers = limit.map_or(1, |l| l as usize + 1);
        let values = (0..2 * layers).map(|_| Packed::new(index.size())).collect();
        c.by_material[material_key(&m)] = Some(c.slices.len());
        c.slices.push(Slice {
            index,
            limit,
            values,
        });
        let s = c.slices.len() - 1;
        for group in placements_in_order(&c.slices[s].index, g) {
            c.solve_placement(s, group);
        }
    }
    c
}

/// The men placements (groups) of a slice, most advanced first: a man move's successor
/// placement comes before the placement it leaves.
fn placements_in_order(index: &SliceIndex, g: &Geometry) -> Vec<u64> {
    let advance = |group: u64| {
        let (w, b) = index.men_of(group);
        let rows = |mut bb: u64, white: bool| {
            let mut sum = 0u32;
            while bb != 0 {
                let (row, _) = g.coords(bb.trailing_zeros() as u8);
                // Row 0 is White's crowning row: white men advance toward it.
                sum += if white {
                    u32::from(g.size - 1 - row)
                } else {
                    u32::from(row)
                };
                bb &= bb - 1;
            }
            sum
        };
        rows(w, true) + rows(b, false)
    };
    let mut groups: Vec<u64> = (0..index.men_groups()).collect();
    groups.sort_by_key(|&gr| std::cmp::Reverse(advance(gr)));
    groups
}

impl Counted {
    /// The rules solved.
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// The profile solved.
    pub fn profile(&self) -> &CountProfile {
        &self.profile
    }

    /// The canonical slices solved, in the order solved.
    pub fn materials(&self) -> Vec<Material> {
        self.slices.iter().map(|s| s.index.material()).collect()
    }

    /// The limit of the regime of canonical slice `m` (`None`: no limit).
    pub fn limit(&self, m: &Material) -> Option<u16> {
        self.slices[self.by_material[material_key(&m.canonical())].expect("a solved slice")].limit
    }

    /// Calls `f` with every position of every slice, both sides to move, and the limit of
    /// its regime.
    pub fn for_each_position(&self, mut f: impl FnMut(&Position, Option<u16>)) {
        for s in &self.slices {
            for idx in 0..s.index.size() {
                for side in [Color::White, Color::Black] {
                    f(&s.index.unindex(idx, side), s.limit);
                }
            }
        }
    }

    /// The stored value of a state; `None` if not computed yet.
    fn stored(&self, st: State, counter: u32) -> Option<Wld> {
        let s = &self.slices[st.slice as usize];
        s.values[s.slot(st.side, s.layer(counter))].get(u64::from(st.idx))
    }

    /// Where `pos` (with pieces on both sides) is stored: its canonical slice.
    fn locate(&self, pos: &Position) -> State {
        let g = self.rules.geometry();
        let m = pos.material();
        let p = if m.is_canonical() {
            *pos
        } else {
            pos.flipped(g)
        };
        let Some(slice) = self.by_material[material_key(&p.material())] else {
            panic!(
                "{}: slice {m} is not solved (at most {} pieces)",
                fen::write_for(pos, &self.rules),
                self.max_pieces
            )
        };
        State::new(slice, self.slices[slice].index.index(&p), p.side_to_move())
    }

    /// The result for the side to move of `pos` with the counter at `counter` (plies since the
    /// last reset); a side to move without pieces has lost, one whose opponent has none has
    /// won. Panics for a state not computed yet (a bug of the solving order) or a slice not
    /// solved.
    pub fn value(&self, pos: &Position, counter: u16) -> Wld {
        let me = pos.side_to_move();
        if pos.pieces(me) == 0 {
            return Wld::Loss;
        }
        if pos.pieces(me.opponent()) == 0 {
            return Wld::Win;
        }
        let st = self.locate(pos);
        match self.stored(st, u32::from(counter)) {
            Some(w) => w,
            None => panic!(
                "{} at counter {counter}: its value is read before it is computed",
                fen::write_for(pos, &self.rules)
            ),
        }
    }

    /// The results of `pos` at every counter from 0 to its regime's limit L (L + 1 values; one
    /// for a regime without a limit), as [`Counted::value`] gives them one at a time.
    pub fn values_at(&self, pos: &Position) -> Vec<Wld> {
        let me = pos.side_to_move();
        if pos.pieces(me) == 0 || pos.pieces(me.opponent()) == 0 {
            return vec![self.value(pos, 0)];
        }
        let st = self.locate(pos);
        let layers = self.slices[st.slice as usize].layers();
        (0..layers as u32)
            .map(|c| match self.stored(st, c) {
                Some(w) => w,
                None => panic!(
                    "{} at counter {c}: its value is read before it is computed",
                    fen::write_for(pos, &self.rules)
                ),
            })
            .collect()
    }

    /// The value for the mover of a move to state `st` at `counter` plies; panics when that
    /// state is not computed yet (the solving order would be wrong).
    fn successor(&self, st: State, counter: u32) -> Wld {
        match self.stored(st, counter) {
            Some(w) => for_mover(w),
            None => {
                let s = &self.slices[st.slice as usize];
                let pos = s.index.unindex(u64::from(st.idx), st.side);
                panic!(
                    "{} at counter {counter}: a successor read before it is computed (the \
                     solving order is wrong)",
                    fen::write_for(&pos, &self.rules)
                )
            }
        }
    }

    /// Adds the moves of `pos` (of slice number `slice`) to `out`, classified.
    fn add_moves(&self, slice: usize, pos: &Position, buf: &mut Vec<Move>, out: &mut Moves) {
        legal_moves(&self.rules, pos, Counting::Unique, buf);
        let terminal = buf.is_empty().then(|| blocked_code(&self.rules, pos).wld());
        let limit = self.slices[slice].limit;
        let mut fixed: Option<Wld> = None;
        let mut offer = |w: Wld| fixed = Some(fixed.map_or(w, |f| better(f, w)));
        for mv in buf.iter() {
            let after = mv.apply_unchecked(pos);
            if after.pieces(after.side_to_move()) == 0 {
                // The last piece taken: the game is over, whatever the counter.
                offer(Wld::Win);
                continue;
            }
            let st = self.locate(&after);
            if self.profile.resets(pos, mv) {
                offer(self.successor(st, 0));
            } else {
                assert_eq!(
                    self.slices[st.slice as usize].limit,
                    limit,
                    "{}: a move that does not reset changes the limit",
                    fen::write_for(pos, &self.rules)
                );
                out.counted.push(st);
            }
        }
        out.terminal.push(terminal);
        out.fixed.push(fixed);
        out.start.push(out.counted.len());
    }

    /// Solves men placement `group` of slice number `s`: every king placement, both sides to
    /// move, every counter.
    fn solve_placement(&mut self, s: usize, group: u64) {
        let k = self.slices[s].index.kings_per_group();
        let mut buf = Vec::new();
        let mut states = Vec::with_capacity(2 * k as usize);
        let mut moves = Moves {
            start: vec![0],
            ..Moves::default()
        };
        let mut cache = MenCache::default();
        for idx in group * k..(group + 1) * k {
            for side in [Color::White, Color::Black] {
                let pos = self.slices[s].index.unindex_cached(idx, side, &mut cache);
                self.add_moves(s, &pos, &mut buf, &mut moves);
                states.push(State::new(s, idx, side));
            }
        }
        match self.slices[s].limit {
            Some(l) => self.solve_layers(&states, &moves, l),
            None => self.solve_fixed_point(&states, &moves, group * k),
        }
    }

    /// Stores `w` as the value of `st` at counter layer `layer`.
    fn set(&mut self, st: State, layer: usize, w: Wld) {
        let sl = &mut self.slices[st.slice as usize];
        let slot = sl.slot(st.side, layer);
        sl.values[slot].set(u64::from(st.idx), w);
    }

    /// A limited placement: layer L drawn (terminals excepted), then each layer from the one
    /// above it.
    fn solve_layers(&mut self, states: &[State], moves: &Moves, limit: u16) {
        for c in (0..=u32::from(limit)).rev() {
            let layer: Vec<Wld> = (0..states.len())
                .map(|i| {
                    if let Some(t) = moves.terminal[i] {
                        return t;
                    }
                    if c == u32::from(limit) {
                        return Wld::Draw;
                    }
                    let mut best = moves.fixed[i];
                    for &succ in moves.counted(i) {
                        let w = self.successor(succ, c + 1);
                        best = Some(best.map_or(w, |b| better(b, w)));
                    }
                    best.expect("a state with legal moves has a best one")
                })
                .collect();
            for (&st, w) in states.iter().zip(layer) {
                self.set(st, c as usize, w);
            }
        }
    }

    /// A placement without a limit: its one layer by a fixed point over the moves inside the
    /// placement (a win as soon as one move reaches a lost successor, a loss once every move
    /// reaches a won one), the rest drawn.
    fn solve_fixed_point(&mut self, states: &[State], moves: &Moves, first: u64) {
        // The placement's states are its indices from `first` on, both sides each.
        let local = |st: &State| {
            let i = u64::from(st.idx).checked_sub(first)? as usize * 2 + side_no(st.side);
            (states.get(i) == Some(st)).then_some(i)
        };
        // Successors outside the placement are final: fold them into `fixed`.
        let mut fixed = moves.fixed.clone();
        let mut inside: Vec<Vec<usize>> = vec![Vec::new(); states.len()];
        for i in 0..states.len() {
            for succ in moves.counted(i) {
                match local(succ) {
                    Some(j) => inside[i].push(j),
                    None => {
                        let w = self.successor(*succ, 0);
                        fixed[i] = Some(fixed[i].map_or(w, |b| better(b, w)));
                    }
                }
            }
        }
        let mut val: Vec<Option<Wld>> = moves.terminal.clone();
        loop {
            let mut changed = false;
            for i in 0..states.len() {
                if val[i].is_some() {
                    continue;
                }
                let wins = fixed[i] == Some(Wld::Win)
                    || inside[i].iter().any(|&j| val[j] == Some(Wld::Loss));
                let loses = matches!(fixed[i], None | Some(Wld::Loss))
                    && inside[i].iter().all(|&j| val[j] == Some(Wld::Win));
                if wins {
                    val[i] = Some(Wld::Win);
                } else if loses {
                    val[i] = Some(Wld::Loss);
                }
                changed |= wins || loses;
            }
            if !changed {
                break;
            }
        }
        for (&st, v) in states.iter().zip(val) {
            self.set(st, 0, v.unwrap_or(Wld::Draw));
        }
    }

    /// Checks DTC codes against the oracle: for every position of every slice (both sides to
    /// move, terminals included) and every counter 0..L (0 alone without a limit),
    /// `profile.result_at(material, dtc(pos), counter)` must be the oracle's value. Panics
    /// with the first mismatch (its FEN, counter, both values and the code) and how many
    /// states disagree. `dtc` gets positions carrying `rules`.
    pub fn assert_agrees(
        &self,
        rules: &Rules,
        profile: &CountProfile,
        dtc: impl Fn(&Position) -> Code,
    ) {
        assert_eq!(*rules, self.rules, "the oracle solved other rules");
        assert_eq!(*profile, self.profile, "the oracle solved another profile");
        let mut first: Option<String> = None;
        let mut wrong = 0u64;
        let mut checked = 0u64;
        self.for_each_position(|board_pos, limit| {
            let pos = board_pos
                .with_rules(rules)
                .expect("an indexed position is legal");
            let code = dtc(&pos);
            let m = pos.material();
            let values = self.values_at(&pos);
            for c in 0..limit.unwrap_or(1) {
                checked += 1;
                let want = values[c as usize];
                let got = profile.result_at(&m, code, c);
                if got != want {
                    wrong += 1;
                    first.get_or_insert_with(|| {
                        format!(
                            "{} at counter {c}: the oracle says {want}, the DTC code {code:?} \
                             says {got}",
                            fen::write_for(&pos, rules)
                        )
                    });
                }
            }
        });
        if let Some(f) = first {
            panic!("{wrong} of {checked} states disagree; the first: {f}");
        }
    }
}
