//! The whole-slice reference solver (compiled for tests only): the tests' oracle for the
//! grouped solver, by the phases the parent module's docs describe.

use super::*;
use dtb_probe::internal::index::MenCache;
use dtb_probe::movegen::quiet_unmoves;

const UNRESOLVED: u16 = u16::MAX;
const CHUNK: u64 = 1 << 14;

/// The whole-slice reference solver: every position of both sides in shared atomic cells,
/// each level processed in parallel. An independent way to the same values as
/// [`solve_slice_grouped`], kept as the tests' oracle (it is not used by builds: its memory,
/// about 53 bytes a position, is what the grouped solver exists to avoid).
///
/// # Errors
/// As [`solve_slice`].
// The test oracle, written as one plain function on purpose: not library code.
#[allow(clippy::too_many_lines)]
pub(crate) fn solve_slice_reference<S: Finished>(
    rules: &Rules,
    src: &S,
    material: Material,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<SolvedSlice, SolveError<S::Error>> {
    let ix = SliceIndex::new(material, rules.geometry());
    let n = ix.size();
    let total = 2 * n;
    let state: Vec<AtomicU16> = (0..total).map(|_| AtomicU16::new(UNRESOLVED)).collect();
    let cnt: Vec<AtomicU8> = (0..total).map(|_| AtomicU8::new(0)).collect();
    let aux: Vec<AtomicU16> = (0..total).map(|_| AtomicU16::new(0)).collect();
    let side_of = |g: u64| if g < n { Color::White } else { Color::Black };

    // Phase 1: initialise.
    let chunks = total.div_ceil(CHUNK);
    type Lists = (Vec<(u16, u64)>, Vec<(u16, u64)>);
    let init: Result<Vec<Lists>, S::Error> = (0..chunks)
        .into_par_iter()
        .map(|c| {
            let mut resolved = Vec::new();
            let mut cands = Vec::new();
            let mut moves = Vec::new();
            let mut men = MenCache::default();
            let mut look = S::Cache::default();
            let lo = c * CHUNK;
            let hi = (lo + CHUNK).min(total);
            for g in lo..hi {
                let side = side_of(g);
                let pos = ix.unindex_cached(g % n, side, &mut men);
                legal_moves(rules, &pos, Counting::Unique, &mut moves);
                let start = classify(rules, &pos, &moves, |succ| {
                    if succ.material() == material {
                        Ok(None)
                    } else {
                        src.value(succ, &mut look).map(Some)
                    }
                })?;
                match start {
                    Start::Known { code, capture } => {
                        state[g as usize].store(code.bits(), Relaxed);
                        if capture {
                            aux[g as usize].store(AUX_CAPTURE, Relaxed);
                        }
                        if let Some(p) = code.plies() {
                            resolved.push((p, g));
                        }
                    }
                    Start::Open {
                        inside,
                        aux: a,
                        win_exit,
                    } => {
                        cnt[g as usize].store(inside, Relaxed);
                        aux[g as usize].store(a, Relaxed);
                        if let Some(w) = win_exit {
                            cands.push((w.plies().unwrap_or(0), g));
                        }
                    }
                }
            }
            progress(hi - lo);
            Ok((resolved, cands))
        })
        .collect();
    let init = init.map_err(SolveError::Lookup)?;

    // Per-level lists: frontier[L] = positions resolved in exactly L plies; cands[L] = those
    // to resolve in L plies if nothing faster turned up.
    let mut frontier: Vec<Vec<u64>> = Vec::new();
    let mut cands: Vec<Vec<u64>> = Vec::new();
    let put = |lists: &mut Vec<Vec<u64>>, level: u16, g: u64| {
        let l = level as usize;
        if lists.len() <= l {
            lists.resize_with(l + 1, Vec::new);
        }
        lists[l].push(g);
    };
    for (r, c) in init {
        for (l, g) in r {
            put(&mut frontier, l, g);
        }
        for (l, g) in c {
            put(&mut cands, l, g);
        }
    }

    // Phase 2: propagate.
    let mut level = 0usize;
    let mut levels = 0usize;
    while level < frontier.len() || level < cands.len() {
        if level >= AUX_LEVEL as usize {
            return Err(SolveError::TooDeep(material));
        }
        // Scheduled exits reach their distance: a win exit's (a position with one), else a
        // slow loss.
        if let Some(list) = cands.get_mut(level) {
            let list = std::mem::take(list);
            for g in list {
                let win = aux[g as usize].load(Relaxed) & AUX_WIN_EXIT != 0;
                if state[g as usize]
                    .compare_exchange(UNRESOLVED, code_at(level, win).bits(), Relaxed, Relaxed)
                    .is_ok()
                {
                    put(&mut frontier, level as u16, g);
                }
            }
        }
        let current = frontier
            .get_mut(level)
            .map(std::mem::take)
            .unwrap_or_default();
        if current.is_empty() {
            level += 1;
            continue;
        }
        levels += 1;
        let mixed = mixed_levels(rules);
        let lost_here = level.is_multiple_of(2);
        let (win_next, loss_next) = (
            code_at(level + 1, true).bits(),
            code_at(level + 1, false).bits(),
        );
        // Per chunk: positions resolved at the next level, and (level, position) for later.
        type Produced = (Vec<u64>, Vec<(u16, u64)>);
        let produced: Vec<Produced> = current
            .par_chunks(4096)
            .map(|part| {
                let mut next = Vec::new();
                let mut later = Vec::new();
                let mut pre = Vec::new();
                for &g in part {
                    let lost = if mixed {
                        Code::from_bits(state[g as usize].load(Relaxed)).wld() == Wld::Loss
                    } else {
                        lost_here
                    };
                    let pos = ix.unindex(g % n, side_of(g));
                    pre.clear();
                    quiet_unmoves(rules, &pos, &mut pre);
                    for q in &pre {
                        let qg = ix.index(q)
                            + if q.side_to_move() == Color::White {
                                0
                            } else {
                                n
                            };
                        let cell = &state[qg as usize];
                        if cell.load(Relaxed) != UNRESOLVED {
                            continue;
                        }
                        if lost {
                            if cell
                                .compare_exchange(UNRESOLVED, win_next, Relaxed, Relaxed)
                                .is_ok()
                            {
                                next.push(qg);
                            }
                        } else if cnt[qg as usize].fetch_sub(1, Relaxed) == 1 {
                            let a = aux[qg as usize].load(Relaxed);
                            if a & (AUX_WIN_EXIT | AUX_DRAW_EXIT) != 0 {
                                continue;
                            }
                            let slowest_exit = (a & AUX_LEVEL) as usize;
                            if slowest_exit <= level + 1 {
                                cell.store(loss_next, Relaxed);
                                next.push(qg);
                            } else {
                                later.push((slowest_exit as u16, qg));
                            }
                        }
                    }
                }
                progress(part.len() as u64);
                (next, later)
            })
            .collect();
        for (next, later) in produced {
            for g in next {
                put(&mut frontier, level as u16 + 1, g);
            }
            for (l, g) in later {
                put(&mut cands, l, g);
            }
        }
        level += 1;
    }

    // Phase 3: collect.
    let mut values = [
        Vec::with_capacity(n as usize),
        Vec::with_capacity(n as usize),
    ];
    let mut capture = [
        vec![0u64; n.div_ceil(64) as usize],
        vec![0u64; n.div_ceil(64) as usize],
    ];
    let mut counts = [[0u64; 3]; 2];
    let mut max_plies = 0u16;
    for g in 0..total {
        let side = (g / n) as usize;
        let i = g % n;
        let v = match state[g as usize].load(Relaxed) {
            UNRESOLVED => DRAW,
            bits => Code::from_bits(bits),
        };
        tally(&mut counts[side], &mut max_plies, v);
        values[side].push(v);
        if aux[g as usize].load(Relaxed) & AUX_CAPTURE != 0 {
            capture[side][(i / 64) as usize] |= 1 << (i % 64);
        }
    }
    Ok(SolvedSlice {
        material,
        size: n,
        values,
        capture,
        counts,
        max_plies,
        levels,
    })
}
