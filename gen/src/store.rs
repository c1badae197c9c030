//! The values of solved slices held in memory while later slices are solved: exactly what the
//! files hold (capture positions "don't care"), so a resumed build that loads them from disk
//! computes the same tables as one that never stopped.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use dtb_probe::format::{unpack_value, ValueKind};
use dtb_probe::index::SliceIndex;
use dtb_probe::material::Material;
use dtb_probe::position::Position;
use dtb_probe::rules::{Color, Rules};
use dtb_probe::table::{BlockCache, TableError, TableFile};
use dtb_probe::value::ValueSource;

/// A slice's stored codes per side (`None` for a side not stored: the colour-symmetric
/// slices keep White to move only).
pub struct StoredSlice {
    index: SliceIndex,
    sides: [Option<Vec<u16>>; 2],
}

impl StoredSlice {
    /// Bytes of memory held.
    pub fn bytes(&self) -> u64 {
        self.sides
            .iter()
            .flatten()
            .map(|v| v.len() as u64 * 2)
            .sum()
    }
}

/// A look-up of a slice that is not (yet) in the store: a bug in the solve order.
#[derive(Debug, thiserror::Error)]
#[error("slice {material} ({side:?} to move) is not solved yet")]
pub struct Missing {
    pub material: Material,
    pub side: Color,
}

/// Solved slices by canonical material.
pub struct Store {
    rules: Rules,
    slices: HashMap<Material, Arc<StoredSlice>>,
}

impl Store {
    /// An empty store for `rules`.
    pub fn new(rules: Rules) -> Store {
        Store {
            rules,
            slices: HashMap::new(),
        }
    }

    /// Add a solved slice's stored codes (`sides[s]` for side `s`, if stored).
    pub fn insert(&mut self, material: Material, sides: [Option<Vec<u16>>; 2]) {
        let index = SliceIndex::new(material, self.rules.geometry());
        self.slices
            .insert(material, Arc::new(StoredSlice { index, sides }));
    }

    /// Total bytes held.
    pub fn bytes(&self) -> u64 {
        self.slices.values().map(|s| s.bytes()).sum()
    }

    /// Read a DTW table file entirely into the store.
    ///
    /// # Errors
    /// A [`TableError`] if the file cannot be read or is corrupt.
    pub fn load_dtw_file(&mut self, material: Material, path: &Path) -> Result<(), TableError> {
        let table = TableFile::open(path, Arc::new(BlockCache::new(1 << 20)))?;
        let h = table.header().clone();
        let per_side = h.blocks_per_side();
        let mut sides: [Option<Vec<u16>>; 2] = [None, None];
        let mut block = 0u32;
        debug_assert_eq!(h.kind, ValueKind::Dtw);
        for (s, slot) in sides.iter_mut().enumerate() {
            if !h.side_stored(s) {
                continue;
            }
            let mut v = Vec::with_capacity(h.positions_per_side as usize);
            for _ in 0..per_side {
                let raw = table.read_block(block)?;
                for j in 0..h.block_values(block) {
                    let code =
                        unpack_value(h.value_width, &raw, j).map_err(|e| TableError::Format {
                            path: path.to_path_buf(),
                            source: e,
                        })?;
                    v.push(code);
                }
                block += 1;
            }
            *slot = Some(v);
        }
        self.insert(material, sides);
        Ok(())
    }
}

impl ValueSource for Store {
    type Error = Missing;

    fn stored(&self, pos: &Position) -> Result<u16, Missing> {
        let material = pos.material();
        let side = pos.side_to_move();
        let missing = || Missing { material, side };
        let s = self.slices.get(&material).ok_or_else(missing)?;
        let v = s.sides[side.index()].as_ref().ok_or_else(missing)?;
        v.get(s.index.index(pos) as usize)
            .copied()
            .ok_or_else(missing)
    }
}
