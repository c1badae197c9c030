//! Table file reader: arbitrary bytes written to a file, opened with `TableFile::open`, then
//! `verify_payload`, `value` at edge and input-chosen indices of every side, and `read_block`.
//! Nothing may panic; errors are fine.
//!
//! The table format is checksummed (header, payload, every block), so random mutations would
//! almost never get past the header checksum. The first input byte therefore says which
//! checksums the harness recomputes before writing the file (bit 0: header, bit 1: payload,
//! bit 2: the block checksums of every block whose offsets lie inside the file), so that the
//! checks behind them (header fields, block table, decompression, block contents) are reached.
#![no_main]

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use dtb_probe::internal::table::{BlockCache, TableFile};
use libfuzzer_sys::fuzz_target;

const HEADER_LEN: usize = 256;

fn path() -> &'static PathBuf {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| {
        std::env::temp_dir().join(format!("dtb-fuzz-table-{}.wld", std::process::id()))
    })
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(
        b.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(
        b.get(at..at.checked_add(8)?)?.try_into().ok()?,
    ))
}

/// Recomputes the checksums `flags` asks for, innermost first.
fn fix_checksums(file: &mut [u8], flags: u8) {
    if file.len() < HEADER_LEN {
        return;
    }
    if flags & 4 != 0 {
        let n = u32_at(file, 84).unwrap_or(0) as usize;
        let offsets = HEADER_LEN;
        let crcs = offsets + (n + 1) * 8;
        for i in 0..n.min(1 << 16) {
            let (Some(s), Some(e)) = (
                u64_at(file, offsets + 8 * i),
                u64_at(file, offsets + 8 * (i + 1)),
            ) else {
                break;
            };
            let at = crcs + 4 * i;
            if s <= e && (e as usize) <= file.len() && at + 4 <= file.len() {
                let c = crc32fast::hash(&file[s as usize..e as usize]);
                file[at..at + 4].copy_from_slice(&c.to_le_bytes());
            }
        }
    }
    if flags & 2 != 0 {
        let c = crc32fast::hash(&file[HEADER_LEN..]);
        file[248..252].copy_from_slice(&c.to_le_bytes());
    }
    if flags & 1 != 0 {
        let c = crc32fast::hash(&file[..252]);
        file[252..256].copy_from_slice(&c.to_le_bytes());
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let mut file = rest.to_vec();
    fix_checksums(&mut file, flags);
    let p = path();
    std::fs::write(p, &file).expect("write the temporary table");
    let cache = Arc::new(BlockCache::new(1 << 20));
    let opened = TableFile::open(p, cache);
    // The mapping outlives the name: remove the file now, whatever happened.
    let _ = std::fs::remove_file(p);
    let Ok(t) = opened else {
        return;
    };
    let _ = t.verify_payload();
    let h = t.header().clone();
    let n = h.positions_per_side;
    let pick = u64::from(flags).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    for side in 0..3 {
        for i in [
            0,
            1,
            n / 2,
            n.saturating_sub(1),
            n,
            n.saturating_add(1),
            u64::MAX,
            pick % n.max(1),
        ] {
            if let Ok(v) = t.stored_code(side, i) {
                assert!(
                    h.side_stored(side) && i < n,
                    "value {v} for side {side} index {i} of {n}"
                );
            }
        }
    }
    for b in [
        0,
        1,
        h.block_count / 2,
        h.block_count.saturating_sub(1),
        h.block_count,
        u32::MAX,
    ] {
        let _ = t.read_block(b);
    }
});
