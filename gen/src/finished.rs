//! What the solver reads of the slices finished before the one it solves: the one interface
//! between the solver ([`crate::solve`], [`crate::bitbase`]) and wherever finished values
//! are kept. A build reads them from its [`crate::store::Store`] (in memory, or scratch
//! files mapped from disk); [`TableSource`] reads them from finished table files through
//! `dtb-probe`, an independent path that tests solve against.

use dtb_probe::internal::format::ValueKind;
use dtb_probe::internal::position::Position;
use dtb_probe::internal::rules::Color;
use dtb_probe::internal::tablebase::{ProbeError, Tablebase};
use dtb_probe::internal::value::{Code, Wld, LOST};

/// The finished slices a solver reads.
pub trait Finished: Sync {
    /// A look-up cache of one worker thread, kept from position to position.
    type Cache: Default + Send;
    /// Why a value cannot be given (a slice not finished, a damaged file).
    type Error: std::error::Error + Send + Sync + 'static;

    /// The true value code of `pos` (WLD-only sources give nominal distances), capture
    /// positions included;
    /// [`LOST`] if the side to move has no piece. The side not to move must have a piece.
    ///
    /// # Errors
    /// [`Finished::Error`] if the slice of `pos` is not finished here.
    fn value(&self, pos: &Position, cache: &mut Self::Cache) -> Result<Code, Self::Error>;

    /// The value codes of the positions `pos` plus a king of `color` on each square of
    /// `squares` (empty squares of `pos`), as `f(square, code)` in ascending order of the
    /// squares: what [`Finished::value`] gives for each, which a source may find faster for
    /// the whole row (one look-up of the men placement, the kings ranked square by square:
    /// [`crate::store::Store`]).
    ///
    /// # Errors
    /// As [`Finished::value`]; `f` has been called for the squares before the failing one.
    fn values_with_king(
        &self,
        pos: &Position,
        color: Color,
        squares: u64,
        cache: &mut Self::Cache,
        f: &mut dyn FnMut(u32, Code),
    ) -> Result<(), Self::Error> {
        let mut each = squares;
        while each != 0 {
            let x = each.trailing_zeros();
            each &= each - 1;
            f(x, self.value(&pos.with_king(color, x), cache)?);
        }
        Ok(())
    }

    /// The squares of `squares` where [`Finished::values_with_king`] gives a loss for the
    /// side to move, and those where it gives a draw: what the bit-parallel solver reads of
    /// a row of look-ups, which a source may find without a call a square
    /// ([`crate::store::Store`]).
    ///
    /// # Errors
    /// As [`Finished::values_with_king`].
    fn losses_draws_with_king(
        &self,
        pos: &Position,
        color: Color,
        squares: u64,
        cache: &mut Self::Cache,
    ) -> Result<(u64, u64), Self::Error> {
        let mut masks = (0u64, 0u64);
        self.values_with_king(pos, color, squares, cache, &mut |x, code| {
            mark_loss_draw(&mut masks, x, code)
        })?;
        Ok(masks)
    }
}

/// Sets bit `x` of the first mask if `code` is a loss for the side to move, of the second if
/// a draw ([`Finished::losses_draws_with_king`]).
#[inline(always)]
pub(crate) fn mark_loss_draw(masks: &mut (u64, u64), x: u32, code: Code) {
    match code.wld() {
        Wld::Loss => masks.0 |= 1 << x,
        Wld::Draw => masks.1 |= 1 << x,
        Wld::Win => {}
    }
}

/// Finished slices read from table files through a [`Tablebase`]: DTW values (exact) or WLD
/// values (nominal distances), captures resolved by the probe's own search.
pub struct TableSource {
    tb: Tablebase,
    kind: ValueKind,
}

impl TableSource {
    /// Values of `kind` from `tb`.
    pub fn new(tb: Tablebase, kind: ValueKind) -> TableSource {
        TableSource { tb, kind }
    }
}

impl Finished for TableSource {
    type Cache = ();
    type Error = ProbeError;

    fn value(&self, pos: &Position, _: &mut ()) -> Result<Code, ProbeError> {
        if pos.pieces(pos.side_to_move()) == 0 {
            return Ok(LOST);
        }
        Ok(match self.kind {
            ValueKind::Wld => Code::of_wld(self.tb.probe_wld(pos)?),
            // The code keeps the flag of a reversed outcome (`blocked = majority`), which
            // `plies + 1` alone would drop.
            ValueKind::Dtw => self.tb.probe_dtw(pos)?.code(),
            // DTC codes as stored (the solver converts what a move makes of them).
            ValueKind::Dtc => self.tb.probe_code(pos, ValueKind::Dtc)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bitbase::solve_kings_wld;
    use crate::build::{self, Plan, Quiet};
    use crate::solve::{solve_slice, solve_slice_grouped_wld};
    use crate::store::Store;
    use dtb_probe::internal::format::WldCode;
    use dtb_probe::internal::material::Material;
    use dtb_probe::Rules;

    /// The 4-piece slices solved from finished 2-4 files read through `dtb-probe`
    /// ([`TableSource`], captures resolved by the probe's search) give the same values as
    /// from the build's in-memory store: DTW codes exactly, and the WLD solvers' outcomes
    /// from WLD files.
    #[test]
    fn solving_from_table_files_equals_solving_from_the_store() {
        let rules = Rules::ENGLISH;
        let dir = tempfile::tempdir().unwrap();
        build::run(&Plan::new(rules, 4, dir.path()).unwrap(), &Quiet).unwrap();
        let open = || Tablebase::open(dir.path(), rules).unwrap();
        let dtw = TableSource::new(open(), ValueKind::Dtw);
        let wld = TableSource::new(open(), ValueKind::Wld);
        let mut store = Store::new(rules);
        for m in Material::solve_order(3, 12) {
            store.insert(
                solve_slice(&rules, &store, m, &|_| {})
                    .unwrap()
                    .into_stored(),
            );
        }
        let mut checked = 0;
        for m in Material::solve_order(4, 12) {
            if m.pieces() != 4 {
                continue;
            }
            let want = solve_slice(&rules, &store, m, &|_| {}).unwrap();
            let got = solve_slice(&rules, &dtw, m, &|_| {}).unwrap();
            assert!(want.values == got.values, "{m}: DTW values differ");
            let w = if m.men() == 0 {
                solve_kings_wld(&rules, &wld, m, &|_| {}).unwrap()
            } else {
                solve_slice_grouped_wld(&rules, &wld, m, false, &|_| {}).unwrap()
            };
            for side in 0..2 {
                for i in 0..want.size {
                    assert_eq!(
                        w.code(side, i),
                        WldCode::of(want.values[side][i as usize]),
                        "{m}"
                    );
                }
            }
            store.insert(want.into_stored());
            checked += 1;
        }
        assert!(checked >= 8, "{checked} slices");
    }
}
