//! Arrays of 64-bit words for the slice being solved, in memory or in a scratch file mapped
//! from disk: the WLD solver's outcomes (2 bits a position) and capture flags (1 bit) of a
//! slice larger than the memory budget live in a shared, writable mapping of a scratch file,
//! so that the kernel may write back and evict their pages and the build's resident memory
//! stays within its budget (the [`crate::scratch::Spill`] watch drops the mapped pages from the
//! process when it passes its limit; they stay in the page cache or on disk, not lost).

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use crate::scratch::{Pages, Spill};

/// Zeroed words, in memory or mapped from a scratch file.
pub enum Words {
    /// On the heap.
    Heap(Vec<AtomicU64>),
    /// In a scratch file (removed when dropped).
    File(Arc<WordFile>),
}

impl Default for Words {
    fn default() -> Words {
        Words::Heap(Vec::new())
    }
}

/// A scratch file mapped shared and writable, seen as words.
pub struct WordFile {
    map: memmap2::MmapMut,
    /// The mapping's first byte, taken from `&mut map` when it was made (so that writes
    /// through it are allowed), page-aligned.
    ptr: *mut u64,
    len: usize,
    path: PathBuf,
}

// SAFETY: `ptr` points into `map`, which lives as long as the `WordFile` and is never
// remapped; every access through it is either atomic ([`Words::atomics`], shared) or through
// `&mut Words` (exclusive), so sharing the pointer between threads adds no unsynchronised
// access. `MmapMut` itself is `Send + Sync`.
unsafe impl Send for WordFile {}
// SAFETY: as for `Send` above.
unsafe impl Sync for WordFile {}

impl WordFile {
    /// Write the mapping's changed pages to the file and wait until they are.
    ///
    /// # Errors
    /// As `msync`.
    pub fn flush(&self) -> std::io::Result<()> {
        self.map.flush()
    }

    /// The scratch file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for WordFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

impl Pages for WordFile {
    fn drop_pages(&self) {
        // SAFETY: `MADV_DONTNEED` throws away written pages of private or anonymous mappings;
        // this mapping is a shared mapping of a file, so the kernel only removes the
        // page-table entries: written data stays in the page cache (to be written back), and
        // the next access, atomic or not, on any thread maps the same, up-to-date page again.
        let _ = unsafe {
            self.map
                .unchecked_advise(memmap2::UncheckedAdvice::DontNeed)
        };
    }
}

/// A large buffer could not be allocated: the memory budget, or a limit of the process
/// (`ulimit -v`, a cgroup), is smaller than the forecast assumed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("cannot allocate {} MiB", .bytes >> 20)]
pub struct OutOfMemory {
    /// Bytes asked for.
    pub bytes: u64,
}

/// `n` values made by `make`, in a vector whose allocation may fail (a failed allocation of
/// a slice-sized buffer is an error the build reports, not an abort of the process).
/// Filled on every thread of the current rayon pool: filling is the first touch of each
/// page, and a slice's arrays (a gigabyte at 7 pieces) filled on one thread kept the other
/// cores idle for seconds at the start of every large slice (English 1222 as a job: 3.5 s
/// on one core; performance-history, session 40).
///
/// # Errors
/// [`OutOfMemory`] if the allocator refuses.
pub fn try_filled<T: Send>(
    n: u64,
    make: impl Fn() -> T + Sync + Send,
) -> Result<Vec<T>, OutOfMemory> {
    use rayon::prelude::*;
    let bytes = n.saturating_mul(std::mem::size_of::<T>() as u64);
    let len = usize::try_from(n).map_err(|_| OutOfMemory { bytes })?;
    let mut v = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| OutOfMemory { bytes })?;
    // Into the capacity reserved: an indexed iterator of `len` items does not reallocate.
    v.par_extend(
        (0..len)
            .into_par_iter()
            .with_min_len(FILL_MIN)
            .map(|_| make()),
    );
    Ok(v)
}

/// Items a task of [`try_filled`] makes at least: small vectors stay on one thread.
const FILL_MIN: usize = 1 << 16;

impl Words {
    /// `n` zeroed words on the heap.
    ///
    /// # Errors
    /// [`OutOfMemory`] if the allocator refuses.
    pub fn zeroed(n: u64) -> Result<Words, OutOfMemory> {
        Ok(Words::Heap(try_filled(n, || AtomicU64::new(0))?))
    }

    /// `n` zeroed words in a new scratch file at `path` (created or truncated, sparse until
    /// written), whose pages `spill`'s watch drops from the process's resident memory.
    ///
    /// # Errors
    /// Creating, sizing or mapping the file.
    pub fn zeroed_in_file(n: u64, path: &Path, spill: &Spill) -> std::io::Result<Words> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        file.set_len(n * 8)?;
        Words::map_file(&file, n, path, spill)
    }

    /// The `n` words a stopped run of the build left in the scratch file at `path`, mapped
    /// again as they are and watched by `spill` as [`Words::zeroed_in_file`]'s are; `None` if
    /// there is no such file or it does not hold exactly `n` words.
    ///
    /// # Errors
    /// Opening (other than not found) or mapping the file.
    pub fn reopen_in_file(n: u64, path: &Path, spill: &Spill) -> std::io::Result<Option<Words>> {
        let file = match std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
        {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        if file.metadata()?.len() != n.saturating_mul(8) {
            return Ok(None);
        }
        Words::map_file(&file, n, path, spill).map(Some)
    }

    /// Map the scratch file `file` (at `path`, `n` words long) shared and writable.
    fn map_file(
        file: &std::fs::File,
        n: u64,
        path: &Path,
        spill: &Spill,
    ) -> std::io::Result<Words> {
        let len = usize::try_from(n)
            .map_err(|_| std::io::Error::other("more words than this machine addresses"))?;
        if len == 0 {
            return Ok(Words::default());
        }
        // SAFETY: `MmapMut::map_mut` is unsafe because the bytes change if the file is
        // modified by someone else while mapped. The file is one of the build's scratch files,
        // under a name of its own (its slice's) in the scratch folder of a build directory the
        // build holds locked: made just now, or left by a stopped run of the build and taken
        // over whole (the stopped process is gone); only this mapping writes it, and it is
        // removed when the mapping is dropped.
        let mut map = unsafe { memmap2::MmapMut::map_mut(file)? };
        let _ = map.advise(memmap2::Advice::Random);
        let ptr = map.as_mut_ptr().cast::<u64>();
        let words = Arc::new(WordFile {
            map,
            ptr,
            len,
            path: path.to_path_buf(),
        });
        spill.register(Arc::clone(&words) as Arc<dyn Pages>);
        Ok(Words::File(words))
    }

    /// The scratch file the words live in, if they do.
    pub fn file(&self) -> Option<Arc<WordFile>> {
        match self {
            Words::Heap(_) => None,
            Words::File(f) => Some(Arc::clone(f)),
        }
    }

    /// Number of words.
    pub fn len(&self) -> usize {
        match self {
            Words::Heap(v) => v.len(),
            Words::File(f) => f.len,
        }
    }

    /// Whether there are no words.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the words live in a scratch file.
    fn is_mapped(&self) -> bool {
        matches!(self, Words::File(_))
    }

    /// The words as atomics, for the solver's worker threads; the mutable borrow keeps any
    /// plain view ([`Words::as_slice`]) away while they write.
    pub fn atomics(&mut self) -> &[AtomicU64] {
        match self {
            Words::Heap(v) => v,
            // SAFETY: `ptr` is the page-aligned start of a live mapping of `len * 8` bytes;
            // `AtomicU64` has the size and alignment of `u64`, and any bits are a valid value.
            Words::File(f) => unsafe { std::slice::from_raw_parts(f.ptr.cast(), f.len) },
        }
    }

    /// The words.
    pub fn as_slice(&self) -> &[u64] {
        match self {
            // SAFETY: `AtomicU64` has the in-memory representation of `u64`; with `&self` no
            // atomic view exists ([`Words::atomics`] borrows mutably), so nothing writes.
            Words::Heap(v) => unsafe { std::slice::from_raw_parts(v.as_ptr().cast(), v.len()) },
            // SAFETY: as above, over a live mapping of `len` words.
            Words::File(f) => unsafe { std::slice::from_raw_parts(f.ptr, f.len) },
        }
    }

    /// The words, to change.
    fn as_mut_slice(&mut self) -> &mut [u64] {
        match self {
            // SAFETY: as in `as_slice`; `&mut self` makes the view exclusive.
            Words::Heap(v) => unsafe {
                std::slice::from_raw_parts_mut(v.as_mut_ptr().cast(), v.len())
            },
            // SAFETY: as above; the page watch only advises the kernel, never reads or writes.
            Words::File(f) => unsafe { std::slice::from_raw_parts_mut(f.ptr, f.len) },
        }
    }

    /// A copy on the heap.
    pub fn to_vec(&self) -> Vec<u64> {
        self.as_slice().to_vec()
    }
}

impl From<Vec<u64>> for Words {
    fn from(v: Vec<u64>) -> Words {
        Words::Heap(v.into_iter().map(AtomicU64::new).collect())
    }
}

impl std::ops::Deref for Words {
    type Target = [u64];
    fn deref(&self) -> &[u64] {
        self.as_slice()
    }
}

impl std::ops::DerefMut for Words {
    fn deref_mut(&mut self) -> &mut [u64] {
        self.as_mut_slice()
    }
}

impl PartialEq for Words {
    fn eq(&self, other: &Words) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl std::fmt::Debug for Words {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Words({} words{})",
            self.len(),
            if self.is_mapped() { ", mapped" } else { "" }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering::Relaxed;

    /// An allocation the machine cannot give is an error, not an abort.
    #[test]
    fn an_impossible_allocation_is_an_error() {
        let e = try_filled(u64::MAX / 16, || 0u64).unwrap_err();
        assert_eq!(e.bytes, u64::MAX / 16 * 8);
        assert!(e.to_string().starts_with("cannot allocate "), "{e}");
        assert!(Words::zeroed(1 << 62).is_err());
        assert_eq!(Words::zeroed(3).unwrap().as_slice(), &[0, 0, 0]);
    }

    /// Words in a file hold what was written through the atomics after their pages are
    /// dropped from the process, and the file goes with them.
    #[test]
    fn mapped_words_keep_their_values_across_dropped_pages() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w");
        let spill = Spill::default();
        let n = 3 * 4096 + 5;
        let mut w = Words::zeroed_in_file(n, &path, &spill).unwrap();
        assert!(w.is_mapped() && w.len() == n as usize);
        assert!(w.iter().all(|&x| x == 0));
        for (i, a) in w.atomics().iter().enumerate() {
            a.fetch_or((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15), Relaxed);
        }
        spill.drop_pages();
        assert!(w
            .iter()
            .enumerate()
            .all(|(i, &x)| x == (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)));
        w[7] = 1;
        spill.drop_pages();
        assert_eq!(w[7], 1);
        let heap = Words::from(w.to_vec());
        assert!(heap == w && !heap.is_mapped());
        drop(w);
        assert!(!path.exists(), "the scratch file outlived its words");
    }

    /// A scratch file a stopped run left is mapped again as it is, if it holds exactly the
    /// words asked for; a missing file, or one of another length, is none.
    #[test]
    fn a_stopped_runs_words_are_mapped_again_as_they_are() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w");
        let spill = Spill::default();
        assert!(Words::reopen_in_file(4, &path, &spill).unwrap().is_none());
        let words: Vec<u8> = (0..4u64).flat_map(|i| (i * 7 + 1).to_le_bytes()).collect();
        std::fs::write(&path, &words).unwrap();
        assert!(Words::reopen_in_file(5, &path, &spill).unwrap().is_none());
        assert!(Words::reopen_in_file(3, &path, &spill).unwrap().is_none());
        let mut w = Words::reopen_in_file(4, &path, &spill).unwrap().unwrap();
        assert_eq!(w.as_slice(), &[1, 8, 15, 22]);
        w.atomics()[2].store(99, Relaxed);
        w.file().unwrap().flush().unwrap();
        assert_eq!(std::fs::read(&path).unwrap()[16..24], 99u64.to_le_bytes());
        drop(w);
        assert!(!path.exists(), "the scratch file outlived its words");
    }
}
