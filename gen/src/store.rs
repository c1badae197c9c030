//! The values of solved slices held in memory while later slices are solved: exactly what the
//! files hold (capture positions "don't care"), so a resumed build that loads them from disk
//! computes the same tables as one that never stopped.

use std::path::Path;
use std::sync::Arc;

use dtb_probe::format::{unpack_value, ValueKind, WLD_LOSS, WLD_WIN};
use dtb_probe::index::SliceIndex;
use dtb_probe::material::Material;
use dtb_probe::position::Position;
use dtb_probe::rules::{Color, Rules};
use dtb_probe::table::{BlockCache, TableError, TableFile};
use dtb_probe::value::{code_of_wld, ValueSource, Wld};

/// One side's stored values: DTW codes, or (in a WLD-only build) outcomes packed two bits
/// a position, 32 a word, as `WLD_WIN` / `WLD_LOSS` / `WLD_DRAW` ([`dtb_probe::format`]).
pub enum Codes {
    Dtw(Vec<u16>),
    Wld(Vec<u64>),
}

impl Codes {
    /// Pack WLD file values (`WLD_WIN`, `WLD_LOSS`, `WLD_DRAW`) as they are.
    pub fn pack_wld(values: &[u16]) -> Codes {
        Codes::pack(values)
    }

    fn pack(values: &[u16]) -> Codes {
        use rayon::prelude::*;
        let words = values
            .par_chunks(32)
            .map(|chunk| {
                chunk
                    .iter()
                    .enumerate()
                    .fold(0u64, |w, (j, &v)| w | (v as u64 & 3) << (2 * j))
            })
            .collect();
        Codes::Wld(words)
    }

    /// The code at `i` (a WLD outcome with its nominal distance), `None` past the end
    /// (`len` values are held).
    #[inline]
    fn get(&self, i: usize, len: u64) -> Option<u16> {
        match self {
            Codes::Dtw(v) => v.get(i).copied(),
            Codes::Wld(_) if i as u64 >= len => None,
            Codes::Wld(w) => {
                let bits = (w.get(i / 32)? >> (2 * (i % 32))) & 3;
                Some(match bits as u16 {
                    WLD_WIN => code_of_wld(Wld::Win),
                    WLD_LOSS => code_of_wld(Wld::Loss),
                    _ => code_of_wld(Wld::Draw),
                })
            }
        }
    }

    fn bytes(&self) -> u64 {
        match self {
            Codes::Dtw(v) => v.len() as u64 * 2,
            Codes::Wld(w) => w.len() as u64 * 8,
        }
    }
}

/// A slice's stored codes per side (`None` for a side not stored: the colour-symmetric
/// slices keep White to move only).
pub struct StoredSlice {
    index: SliceIndex,
    sides: [Option<Codes>; 2],
}

impl StoredSlice {
    /// Bytes of memory held.
    pub fn bytes(&self) -> u64 {
        self.sides.iter().flatten().map(Codes::bytes).sum()
    }
}

/// A look-up of a slice that is not (yet) in the store: a bug in the solve order.
#[derive(Debug, thiserror::Error)]
#[error("slice {material} ({side:?} to move) is not solved yet")]
pub struct Missing {
    pub material: Material,
    pub side: Color,
}

/// Solved slices by canonical material, in a table indexed by the four counts (a look-up is
/// an array access, not a hash: it happens for every exit of every position solved).
pub struct Store {
    rules: Rules,
    slices: Vec<Option<Arc<StoredSlice>>>,
}

/// Counts per kind of piece are below this (20 a side at most, on 10x10).
const COUNT_BOUND: usize = 21;

#[inline]
fn slot(m: &Material) -> Option<usize> {
    let c = [m.white_men, m.white_kings, m.black_men, m.black_kings];
    if c.iter().any(|&x| x as usize >= COUNT_BOUND) {
        return None;
    }
    Some(c.iter().fold(0, |acc, &x| acc * COUNT_BOUND + x as usize))
}

impl Store {
    /// An empty store for `rules`.
    pub fn new(rules: Rules) -> Store {
        Store {
            rules,
            slices: Vec::new(),
        }
    }

    /// Add a solved slice's stored DTW codes (`sides[s]` for side `s`, if stored).
    pub fn insert(&mut self, material: Material, sides: [Option<Vec<u16>>; 2]) {
        let [a, b] = sides;
        self.insert_codes(material, [a.map(Codes::Dtw), b.map(Codes::Dtw)]);
    }

    /// Add a solved slice's values in either form.
    pub fn insert_codes(&mut self, material: Material, sides: [Option<Codes>; 2]) {
        let index = SliceIndex::new(material, self.rules.geometry());
        let Some(at) = slot(&material) else {
            return; // cannot happen: no variant has more than 20 pieces a side
        };
        if self.slices.is_empty() {
            self.slices.resize(COUNT_BOUND.pow(4), None);
        }
        self.slices[at] = Some(Arc::new(StoredSlice { index, sides }));
    }

    /// Total bytes held.
    pub fn bytes(&self) -> u64 {
        self.slices.iter().flatten().map(|s| s.bytes()).sum()
    }

    /// Read a DTW table file entirely into the store.
    ///
    /// # Errors
    /// A [`TableError`] if the file cannot be read or is corrupt.
    pub fn load_dtw_file(&mut self, material: Material, path: &Path) -> Result<(), TableError> {
        self.load_file(material, path, ValueKind::Dtw)
    }

    /// Read a WLD table file entirely into the store (packed, as a WLD-only build keeps it).
    ///
    /// # Errors
    /// A [`TableError`] if the file cannot be read or is corrupt.
    pub fn load_wld_file(&mut self, material: Material, path: &Path) -> Result<(), TableError> {
        self.load_file(material, path, ValueKind::Wld)
    }

    fn load_file(
        &mut self,
        material: Material,
        path: &Path,
        kind: ValueKind,
    ) -> Result<(), TableError> {
        let table = TableFile::open(path, Arc::new(BlockCache::new(1 << 20)))?;
        let h = table.header().clone();
        let per_side = h.blocks_per_side();
        let mut sides: [Option<Codes>; 2] = [None, None];
        let mut block = 0u32;
        if h.kind != kind {
            return Err(TableError::Format {
                path: path.to_path_buf(),
                source: dtb_probe::format::FormatError::Invalid(format!(
                    "a {} table where a {} table was expected",
                    h.kind.extension(),
                    kind.extension()
                )),
            });
        }
        for (s, slot) in sides.iter_mut().enumerate() {
            if !h.side_stored(s) {
                continue;
            }
            let len = h.positions_per_side as usize;
            // WLD values are packed as they are read: the largest 7-piece slice would need
            // 2.8 GB a side as 16-bit codes.
            let mut codes = match kind {
                ValueKind::Dtw => Codes::Dtw(Vec::with_capacity(len)),
                ValueKind::Wld => Codes::Wld(vec![0u64; len.div_ceil(32)]),
            };
            let mut i = 0usize;
            for _ in 0..per_side {
                let raw = table.read_block(block)?;
                for j in 0..h.block_values(block) {
                    let code =
                        unpack_value(h.value_width, &raw, j).map_err(|e| TableError::Format {
                            path: path.to_path_buf(),
                            source: e,
                        })?;
                    match &mut codes {
                        Codes::Dtw(v) => v.push(code),
                        Codes::Wld(w) => w[i / 32] |= (code as u64 & 3) << (2 * (i % 32)),
                    }
                    i += 1;
                }
                block += 1;
            }
            *slot = Some(codes);
        }
        self.insert_codes(material, sides);
        Ok(())
    }
}

impl ValueSource for Store {
    type Error = Missing;

    fn stored(&self, pos: &Position) -> Result<u16, Missing> {
        let material = pos.material();
        let side = pos.side_to_move();
        let missing = || Missing { material, side };
        let s = slot(&material)
            .and_then(|at| self.slices.get(at))
            .and_then(Option::as_ref)
            .ok_or_else(missing)?;
        let v = s.sides[side.index()].as_ref().ok_or_else(missing)?;
        v.get(s.index.index(pos) as usize, s.index.size())
            .ok_or_else(missing)
    }
}
