//! Work that takes only the cores the solver leaves idle: a build writes a solved slice's
//! files (zstd, the read-back check) in the background while the next slice solves.
//!
//! A background thread ([`run`]) hands its blocks to the solver's own worker threads one at
//! a time ([`map_blocks`]), as jobs from outside the pool: a worker takes such a job only when
//! it has none of its own and none to steal (a round's last groups, a slice's serial steps),
//! and at most one a thread waits in the queue, so a round the solver starts meanwhile waits
//! for at most one block a thread. The background thread itself, which only queues blocks
//! and writes files, runs at the lowest CPU priority on Linux (nice 19, set per thread).

use std::cell::Cell;
use std::sync::Mutex;

thread_local! {
    /// Whether this thread's work is in the background ([`run`]).
    static BACKGROUND: Cell<bool> = const { Cell::new(false) };
}

/// Run `f` on this thread as background work: [`map_blocks`] inside it queues its blocks
/// one at a time instead of splitting them among the threads at once.
pub fn run<R>(f: impl FnOnce() -> R) -> R {
    lower_priority();
    BACKGROUND.with(|b| b.set(true));
    let r = f();
    BACKGROUND.with(|b| b.set(false));
    r
}

/// `f(state, i)` for every `i` in `0..n`, in parallel on the rayon pool, each thread's
/// `state` made by `init`; the results in order of `i`. On a background thread ([`run`]) the
/// items are queued at most one a thread at a time; elsewhere they are split as `par_iter`
/// splits them.
///
/// # Panics
/// If `f` or `init` panics (again, on the calling thread).
pub fn map_blocks<S, T>(
    n: u32,
    init: impl Fn() -> S + Sync,
    f: impl Fn(&mut S, u32) -> T + Sync,
) -> Vec<T>
where
    S: Send,
    T: Send,
{
    use rayon::prelude::*;
    if !BACKGROUND.with(Cell::get) || rayon::current_thread_index().is_some() {
        return (0..n).into_par_iter().map_init(&init, &f).collect();
    }
    let window = rayon::current_num_threads().max(1);
    let states: Mutex<Vec<S>> = Mutex::new(Vec::new());
    let (tx, rx) = std::sync::mpsc::channel::<(u32, Option<T>)>();
    let mut out: Vec<Option<T>> = (0..n).map(|_| None).collect();
    let mut failed = false;
    rayon::in_place_scope(|scope| {
        let mut queued = 0usize;
        let mut take = |queued: &mut usize| {
            // A job always sends, a panic as `None`: the count of jobs in flight stays true.
            if let Ok((i, t)) = rx.recv() {
                failed |= t.is_none();
                out[i as usize] = t;
            }
            *queued -= 1;
        };
        for i in 0..n {
            if queued == window {
                take(&mut queued);
            }
            let (tx, states, init, f) = (tx.clone(), &states, &init, &f);
            // From a thread outside the pool, a spawn is queued for the pool's threads: they
            // take it after their own work and the work they can steal.
            scope.spawn(move |_| {
                let t = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    let mut state = states
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .pop()
                        .unwrap_or_else(init);
                    let t = f(&mut state, i);
                    states
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .push(state);
                    t
                }))
                .ok();
                let _ = tx.send((i, t));
            });
            queued += 1;
        }
        while queued > 0 {
            take(&mut queued);
        }
    });
    assert!(!failed, "a background block job panicked");
    out.into_iter().flatten().collect()
}

/// A pool of `threads` threads at the lowest priority, or `None` where the system refuses
/// threads (the caller then writes on its own thread, as before).
pub fn pool(threads: usize) -> Option<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("dtb-write-{i}"))
        .start_handler(|_| lower_priority())
        .build()
        .ok()
}

/// Lower the calling thread's CPU priority to the lowest (Linux: nice 19 for this thread
/// alone). A refusal leaves it as it was: the work is the same, only its share of the cores
/// differs.
pub fn lower_priority() {
    #[cfg(target_os = "linux")]
    {
        let _ = rustix::process::setpriority_process(Some(rustix::thread::gettid()), 19);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn map_blocks_gives_every_result_in_order_in_the_background_or_not() {
        let want: Vec<u64> = (0..1000u64).map(|i| i * i).collect();
        let square = |calls: &mut u32, i: u32| {
            *calls += 1;
            u64::from(i) * u64::from(i)
        };
        assert_eq!(super::map_blocks(1000, || 0u32, square), want);
        let got = std::thread::spawn(move || super::run(|| super::map_blocks(1000, || 0u32, square)))
            .join()
            .expect("the background thread");
        assert_eq!(got, want);
        assert!(super::map_blocks(0, || 0u32, square).is_empty());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn pool_threads_run_at_the_lowest_priority() {
        let own = || {
            rustix::process::getpriority_process(Some(rustix::thread::gettid()))
                .expect("getpriority")
        };
        let before = own();
        let pool = super::pool(2).expect("a pool of two threads");
        let nice = pool.install(|| {
            rustix::process::getpriority_process(Some(rustix::thread::gettid()))
                .expect("getpriority")
        });
        assert_eq!(nice, 19);
        // The caller's own thread keeps its priority.
        assert_eq!(own(), before);
    }
}
