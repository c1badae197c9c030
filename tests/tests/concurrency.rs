//! Many threads, one `Tablebase`, one corrupt block.
//!
//! English 2-4 tables are built once; a copy has one WLD block corrupted. 32 threads share
//! one `Tablebase` on the copy, opened with nothing probed (tables open lazily, under
//! contention), and probe the same pseudo-random positions in different orders. Every answer
//! must equal a single-threaded reference on the intact tables, except the WLD answers whose
//! look-ups touch the corrupt block: those must be the same error, naming the corrupt file, in
//! every thread. Once with the default cache and once with a 64 KiB cache that evicts all the
//! time.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Barrier, Mutex};
use std::time::Instant;

use dtb_gen::build::{run, Plan, Quiet};
use dtb_probe::internal::format::{block_range, Header, ValueKind, WldCode};
use dtb_probe::internal::index::SliceIndex;
use dtb_probe::internal::value::{self, Code, ValueSource};
use dtb_probe::movegen::has_capture;
use dtb_probe::{Color, Dtw, Material, Position, ProbeError, Rules, Tablebase, Wld};

const RULES: Rules = Rules::ENGLISH;
const THREADS: usize = 32;
/// The slice whose WLD file is corrupted, and the block (side 0, white to move).
const CORRUPT: Material = Material::new(0, 1, 1, 1);
const CORRUPT_BLOCK: u32 = 0;

/// Deterministic pseudo-random numbers (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        dtb_probe::internal::rng::splitmix64(&mut self.0)
    }

    fn below(&mut self, n: u64) -> u64 {
        ((self.next() as u128 * n as u128) >> 64) as u64
    }
}

/// The intact tables and the copy with the corrupt block.
struct Dirs {
    intact: tempfile::TempDir,
    corrupt: tempfile::TempDir,
    /// The corrupted file.
    corrupt_file: PathBuf,
}

fn dirs() -> Dirs {
    let intact = tempfile::Builder::new()
        .prefix("dtb-concurrency-")
        .tempdir()
        .expect("temp dir");
    let plan = Plan::new(RULES, 4, intact.path()).expect("plan");
    run(&plan, &Quiet).expect("English 2-4 build");
    let corrupt = tempfile::Builder::new()
        .prefix("dtb-concurrency-corrupt-")
        .tempdir()
        .expect("temp dir");
    for e in std::fs::read_dir(intact.path()).expect("list") {
        let e = e.expect("entry");
        let name = e.file_name();
        if name.to_string_lossy().starts_with("english-") {
            std::fs::copy(e.path(), corrupt.path().join(&name)).expect("copy");
        }
    }
    let corrupt_file = corrupt.path().join(format!("english-{CORRUPT}.wld"));
    let mut bytes = std::fs::read(&corrupt_file).expect("read table");
    let h = Header::decode(&bytes).expect("header");
    assert!(h.block_count > 1, "the corrupt slice needs several blocks");
    let (s, e) = block_range(&h, &bytes, CORRUPT_BLOCK).expect("block range");
    assert!(e > s);
    bytes[(s + e) / 2] ^= 0x10;
    std::fs::write(&corrupt_file, &bytes).expect("write corrupt table");
    Dirs {
        intact,
        corrupt,
        corrupt_file,
    }
}

/// A value source over the intact tables that records which (slice, block) of each kind every
/// look-up reads: what `Tablebase` would read for the same position.
struct Recorder<'a> {
    tb: &'a Tablebase,
    kind: ValueKind,
    touched: std::cell::RefCell<BTreeSet<(Material, u32)>>,
}

impl ValueSource for Recorder<'_> {
    type Error = ProbeError;

    fn stored(&self, pos: &Position) -> Result<Code, ProbeError> {
        let m = pos.material();
        let t = self.tb.table(m, self.kind)?;
        let index = SliceIndex::new(m, RULES.geometry()).index(pos);
        let side = pos.side_to_move().index();
        let (block, _) = t
            .header()
            .block_of(side, index)
            .expect("index inside the table");
        self.touched.borrow_mut().insert((m, block));
        let raw = t
            .stored_code(side, index)
            .map_err(|e| ProbeError::Table(std::sync::Arc::new(e)))?;
        Ok(match self.kind {
            ValueKind::Dtw | ValueKind::Dtc => Code::from_bits(raw),
            ValueKind::Wld => WldCode::from_bits(raw)
                .unwrap_or_else(|| panic!("WLD code {raw}"))
                .code(),
        })
    }
}

/// What a probe of one position must answer on the corrupt directory.
#[derive(Clone, Debug, PartialEq)]
struct Expected {
    wld: Result<Wld, String>,
    dtw: Result<Dtw, String>,
}

/// The positions, their expected answers, and how many are capture positions.
struct Case {
    positions: Vec<Position>,
    expected: Vec<Expected>,
    captures: usize,
    /// The error every probe touching the corrupt block must give.
    corrupt_error: String,
}

fn case(d: &Dirs) -> Case {
    let g = RULES.geometry();
    let mut rng = Rng(0x00c0_ffee_0042);
    let mut materials: Vec<Material> = Vec::new();
    for m in Material::solve_order(4, RULES.max_pieces_per_side()) {
        materials.push(m);
        if m.mirror() != m {
            materials.push(m.mirror());
        }
    }
    assert!(materials.len() > 30, "{} materials", materials.len());
    let mut positions = Vec::new();
    for m in &materials {
        let ix = SliceIndex::new(*m, g);
        let n = ix.size();
        for side in [Color::White, Color::Black] {
            let mut idx = vec![0, n - 1];
            idx.extend((0..22).map(|_| rng.below(n)));
            for i in idx {
                positions.push(ix.unindex(i, side));
            }
        }
    }
    // The reference: one thread, intact tables, plus the blocks each probe reads.
    let reference = Tablebase::open(d.intact.path(), RULES).expect("open intact");
    let corrupt_error = {
        let t = dtb_probe::internal::table::TableFile::open(
            &d.corrupt_file,
            std::sync::Arc::new(dtb_probe::internal::table::BlockCache::new(1 << 20)),
        )
        .expect("the corrupt file still opens: only a block is bad");
        let h = t.header().clone();
        let (side, first) = (0..2)
            .flat_map(|s| (0..h.positions_per_side).step_by(997).map(move |i| (s, i)))
            .find(|&(s, i)| h.block_of(s, i).map(|b| b.0) == Some(CORRUPT_BLOCK))
            .expect("an index in the corrupt block");
        t.stored_code(side, first)
            .expect_err("the corrupt block reads")
            .to_string()
    };
    let mut expected = Vec::new();
    let mut captures = 0;
    for pos in &positions {
        if has_capture(&RULES, pos) {
            captures += 1;
        }
        let rec = Recorder {
            tb: &reference,
            kind: ValueKind::Wld,
            touched: Default::default(),
        };
        let code = value::resolve(&RULES, &rec, pos).expect("intact tables answer");
        let wld = reference.probe_wld(pos).expect("intact WLD");
        assert_eq!(code.wld(), wld);
        let dtw = reference.probe_dtw(pos).expect("intact DTW");
        let touches = rec.touched.borrow().contains(&(CORRUPT, CORRUPT_BLOCK));
        expected.push(Expected {
            wld: if touches {
                Err(corrupt_error.clone())
            } else {
                Ok(wld)
            },
            dtw: Ok(dtw),
        });
    }
    Case {
        positions,
        expected,
        captures,
        corrupt_error,
    }
}

/// 32 threads probe the positions (each a different order, `stride`-th ones only) on one
/// tablebase; returns the number of probes. Panics listing the first mismatches.
fn hammer(c: &Case, tb: &Tablebase, stride: usize) -> usize {
    let barrier = Barrier::new(THREADS);
    let failures = Mutex::new(Vec::<String>::new());
    let probes = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let barrier = &barrier;
                let failures = &failures;
                let probes = &probes;
                s.spawn(move || {
                    let mut rng = Rng(t as u64 * 7919 + 1);
                    let mut order: Vec<usize> = (0..c.positions.len())
                        .filter(|i| (i + t) % stride == 0)
                        .collect();
                    for i in (1..order.len()).rev() {
                        order.swap(i, rng.below(i as u64 + 1) as usize);
                    }
                    barrier.wait();
                    let mut n = 0;
                    for &i in &order {
                        let pos = &c.positions[i];
                        // Alternate which kind comes first, so both kinds open tables first.
                        let (wld, dtw) = if (i + t) % 2 == 0 {
                            let w = tb.probe_wld(pos);
                            (w, tb.probe_dtw(pos))
                        } else {
                            let d = tb.probe_dtw(pos);
                            (tb.probe_wld(pos), d)
                        };
                        n += 2;
                        let got = Expected {
                            wld: wld.map_err(|e| e.to_string()),
                            dtw: dtw.map_err(|e| e.to_string()),
                        };
                        if got != c.expected[i] {
                            let mut f = failures.lock().unwrap();
                            if f.len() < 10 {
                                f.push(format!(
                                    "thread {t}: {}: got {got:?}, expected {:?}",
                                    dtb_probe::fen::write(pos),
                                    c.expected[i]
                                ));
                            }
                        }
                    }
                    probes.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
                })
            })
            .collect();
        for (t, h) in handles.into_iter().enumerate() {
            if h.join().is_err() {
                failures
                    .lock()
                    .unwrap()
                    .push(format!("thread {t} panicked"));
            }
        }
    });
    let f = failures.into_inner().unwrap();
    assert!(f.is_empty(), "{} mismatches:\n{}", f.len(), f.join("\n"));
    probes.into_inner()
}

fn check_case_is_meaningful(c: &Case, corrupt_file: &Path) {
    let errors = c.expected.iter().filter(|e| e.wld.is_err()).count();
    let capture_errors = c
        .positions
        .iter()
        .zip(&c.expected)
        .filter(|(p, e)| e.wld.is_err() && has_capture(&RULES, p))
        .count();
    eprintln!(
        "{} positions, {} capture positions, {} touch the corrupt block ({} of them captures); error: {}",
        c.positions.len(),
        c.captures,
        errors,
        capture_errors,
        c.corrupt_error
    );
    assert!(c.captures >= 100, "too few capture positions");
    assert!(errors >= 20, "too few positions touch the corrupt block");
    assert!(
        capture_errors >= 5,
        "too few capture positions reach the corrupt block"
    );
    assert!(errors * 4 < c.positions.len(), "nearly everything fails");
    assert!(
        c.corrupt_error
            .contains(&corrupt_file.display().to_string()),
        "the error does not name the corrupt file: {}",
        c.corrupt_error
    );
}

/// One test for both caches: the tables live in temporary directories owned here, so that
/// they are removed at the end (a static would never be dropped).
#[test]
fn many_threads_one_tablebase_with_a_corrupt_block() {
    let d = dirs();
    let c = case(&d);
    check_case_is_meaningful(&c, &d.corrupt_file);

    // The default cache: every block stays once loaded.
    let tb = Tablebase::open(d.corrupt.path(), RULES).expect("open corrupt copy");
    let t0 = Instant::now();
    let n = hammer(&c, &tb, 1);
    eprintln!(
        "default cache: {n} probes from {THREADS} threads in {:.2} s",
        t0.elapsed().as_secs_f64()
    );

    // A 64 KiB cache holds four 16 KiB blocks: evictions all the time, under contention.
    let mut tb = Tablebase::with_cache_bytes(RULES, 64 << 10);
    let found = tb
        .add_directory(d.corrupt.path())
        .expect("list corrupt copy");
    assert_eq!(found, 46);
    let t0 = Instant::now();
    let n = hammer(&c, &tb, 2);
    eprintln!(
        "64 KiB cache: {n} probes from {THREADS} threads in {:.2} s",
        t0.elapsed().as_secs_f64()
    );
}
