//! Scratch files of the build and the watch over its resident memory: the bottom of the
//! generator's storage, below the solver ([`crate::words`]) and the store of finished slices
//! ([`crate::store`]). A [`Scratch`] file holds a finished slice's true values, written whole
//! under a temporary name with a checksum sidecar and mapped read-only; [`Spill`] drops the
//! pages of every registered mapping ([`Pages`]) from the process whenever its resident set
//! passes the budget, so that mapped files never push a build past its memory budget.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use dtb_probe::internal::value::Code;

/// The values a scratch file is written from: packed outcomes ([`crate::store::Codes::Wld`]'s words) or
/// DTW codes; little-endian in the file either way.
#[derive(Clone, Copy)]
pub enum Raw<'a> {
    Words(&'a [u64]),
    Codes(&'a [Code]),
}

impl Raw<'_> {
    fn len(&self) -> u64 {
        match self {
            Raw::Words(w) => w.len() as u64 * 8,
            Raw::Codes(c) => c.len() as u64 * 2,
        }
    }

    fn kind(&self) -> ScratchKind {
        match self {
            Raw::Words(_) => ScratchKind::Wld,
            Raw::Codes(_) => ScratchKind::Dtw,
        }
    }
}

/// What a scratch file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScratchKind {
    /// Outcomes, 2 bits a position (position `i` in byte `i / 4`).
    Wld,
    /// DTW codes, 2 bytes a position.
    Dtw,
}

/// A scratch file of a finished slice's true values, mapped read-only, with a sidecar
/// `<name>.crc` (its length and CRC-32) written after it, so that a build stopped at any
/// moment finds it whole or not at all; removed with its sidecar when dropped.
pub struct Scratch {
    map: memmap2::Mmap,
    path: PathBuf,
    kind: ScratchKind,
}

/// The sidecar of scratch file `path`.
pub(crate) fn sidecar(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".crc");
    PathBuf::from(name)
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(sidecar(&self.path));
        let _ = std::fs::remove_file(&self.path);
    }
}

impl Scratch {
    /// Bytes of the file.
    pub fn len(&self) -> u64 {
        self.map.len() as u64
    }

    /// Whether the file is empty.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// What the file holds.
    pub fn kind(&self) -> ScratchKind {
        self.kind
    }

    /// The file's bytes (little-endian words or codes, as [`Raw`] wrote them).
    #[inline]
    pub fn bytes(&self) -> &[u8] {
        &self.map
    }
}

/// A file mapping whose pages the [`Spill`] watch drops from the process's resident set.
pub trait Pages: Send + Sync {
    /// Drop this process's mapping of the file's pages (they stay in the page cache): its
    /// resident memory goes down, and the next access to a page maps it again.
    fn drop_pages(&self);
}

impl Pages for Scratch {
    fn drop_pages(&self) {
        // SAFETY: `MADV_DONTNEED` is unchecked in memmap2 because, on a private or anonymous
        // mapping, it throws away pages the process wrote. This mapping is a read-only,
        // shared mapping of a file that nothing writes while it is mapped (the build writes
        // it whole, then maps it; it lives in the locked build directory's scratch folder),
        // so the kernel only removes page-table entries: a later read faults the same bytes
        // back in from the page cache or the file. Readers on other threads may read at the
        // same moment and see the same bytes either way.
        let _ = unsafe {
            self.map
                .unchecked_advise(memmap2::UncheckedAdvice::DontNeed)
        };
    }
}

/// CRC-32 of the file at `path`, read sequentially.
fn crc_of_file(path: &Path) -> std::io::Result<u32> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let mut crc = crc32fast::Hasher::new();
    let mut buf = vec![0u8; 1 << 22];
    loop {
        match file.read(&mut buf) {
            Ok(0) => return Ok(crc.finalize()),
            Ok(n) => crc.update(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

impl Scratch {
    /// The values `raw` written to the scratch file `path` (replaced if present, through a
    /// temporary name, then its sidecar) and mapped, registered with `spill` so that its
    /// pages can be dropped.
    ///
    /// # Errors
    /// The file cannot be written or mapped (a full disk, ...).
    pub fn write(raw: Raw, path: &Path, spill: &Spill) -> std::io::Result<Arc<Scratch>> {
        use std::io::Write;
        let tmp = path.with_extension("tmp");
        let mut crc = crc32fast::Hasher::new();
        {
            let file = std::fs::File::create(&tmp)?;
            let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
            let mut put = |bytes: &[u8]| -> std::io::Result<()> {
                crc.update(bytes);
                w.write_all(bytes)
            };
            match raw {
                Raw::Words(words) => {
                    for chunk in words.chunks(1 << 14) {
                        let b: Vec<u8> = chunk.iter().flat_map(|x| x.to_le_bytes()).collect();
                        put(&b)?;
                    }
                }
                Raw::Codes(codes) => {
                    for chunk in codes.chunks(1 << 15) {
                        let b: Vec<u8> =
                            chunk.iter().flat_map(|x| x.bits().to_le_bytes()).collect();
                        put(&b)?;
                    }
                }
            }
            w.flush()?;
        }
        let _ = std::fs::remove_file(sidecar(path));
        std::fs::rename(&tmp, path)?;
        let side = sidecar(path);
        let side_tmp = side.with_extension("crc.tmp");
        std::fs::write(&side_tmp, format!("{} {:08x}\n", raw.len(), crc.finalize()))?;
        std::fs::rename(&side_tmp, &side)?;
        let scratch = Scratch::map(path, raw.kind(), raw.len())?;
        spill.register(Arc::clone(&scratch) as Arc<dyn Pages>);
        Ok(scratch)
    }

    /// A scratch file of a stopped build, if it is whole: `len` bytes of `kind`, its length
    /// and CRC-32 those of its sidecar. Otherwise both are removed and `None` is returned.
    pub fn reuse(path: &Path, kind: ScratchKind, len: u64, spill: &Spill) -> Option<Arc<Scratch>> {
        let check = || -> Option<Arc<Scratch>> {
            let text = std::fs::read_to_string(sidecar(path)).ok()?;
            let (l, c) = text.trim().split_once(' ')?;
            if l.parse::<u64>().ok()? != len {
                return None;
            }
            let want = u32::from_str_radix(c, 16).ok()?;
            // Read in large sequential pieces, not through the mapping: its pages are
            // advised random, so hashing it faulted in one page at a time (a restart of
            // English 2-8 spent most of its load phase there).
            let got = crc_of_file(path).ok()?;
            let scratch = Scratch::map(path, kind, len).ok()?;
            (got == want).then_some(scratch)
        };
        match check() {
            Some(scratch) => {
                spill.register(Arc::clone(&scratch) as Arc<dyn Pages>);
                Some(scratch)
            }
            None => {
                let _ = std::fs::remove_file(sidecar(path));
                let _ = std::fs::remove_file(path);
                None
            }
        }
    }

    /// Map the scratch file `path`, which must be `len` bytes long.
    fn map(path: &Path, kind: ScratchKind, len: u64) -> std::io::Result<Arc<Scratch>> {
        let file = std::fs::File::open(path)?;
        // SAFETY: `Mmap::map` is unsafe because the bytes change if the file is modified while
        // mapped. This is a scratch file of this build, written in full under a temporary
        // name and renamed, in the scratch folder of a build directory that the build holds
        // locked; nothing writes it again, and it is removed only when the mapping is dropped
        // ([`Scratch`]). Every read is bounds-checked against the mapping's length.
        let map = unsafe { memmap2::Mmap::map(&file)? };
        if map.len() as u64 != len {
            return Err(std::io::Error::other(format!(
                "{}: {} bytes where {len} were expected",
                path.display(),
                map.len(),
            )));
        }
        let _ = map.advise(memmap2::Advice::Random);
        Ok(Arc::new(Scratch {
            map,
            path: path.to_path_buf(),
            kind,
        }))
    }
}

/// The scratch files of a build and a watch over its resident memory: when the process's
/// resident set passes a limit, every mapped scratch file's pages are dropped from it
/// ([`Scratch`]), so that mapped finished slices never push the build past its memory budget;
/// the page cache keeps what fits in the machine.
#[derive(Default)]
pub struct Spill {
    files: std::sync::Mutex<Vec<std::sync::Weak<dyn Pages>>>,
    /// Times pages were dropped.
    drops: std::sync::atomic::AtomicU64,
}

impl Spill {
    /// Watch `s`'s pages too (held weakly: a mapping dropped is forgotten).
    pub(crate) fn register(&self, s: Arc<dyn Pages>) {
        let mut files = self
            .files
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        files.retain(|w| w.strong_count() > 0);
        files.push(Arc::downgrade(&s));
    }

    /// Drop the pages of every mapped scratch file from this process's resident set.
    pub fn drop_pages(&self) {
        let files: Vec<Arc<dyn Pages>> = self
            .files
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .filter_map(std::sync::Weak::upgrade)
            .collect();
        for f in &files {
            f.drop_pages();
        }
        self.drops
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// How many times pages were dropped.
    pub fn drops(&self) -> u64 {
        self.drops.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Start a thread that checks the resident set every 50 ms and drops the scratch files'
    /// pages whenever it is above `limit` bytes (Linux; elsewhere it never finds it above),
    /// until the guard returned is dropped.
    pub fn watch(self: &Arc<Self>, limit: u64) -> Watch {
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (me, flag) = (Arc::clone(self), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            while !flag.load(std::sync::atomic::Ordering::Relaxed) {
                if resident_bytes().is_some_and(|r| r > limit) {
                    me.drop_pages();
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
        });
        Watch {
            stop,
            thread: Some(thread),
        }
    }
}

/// The watch of [`Spill::watch`]; dropping it stops the thread.
pub struct Watch {
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// This process's resident memory now, bytes (Linux `/proc/self/statm`; `None` elsewhere).
fn resident_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = s.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}
