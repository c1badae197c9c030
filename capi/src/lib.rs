//! The C ABI of dtb-probe: `libdtb.so` / `libdtb.a` and the header `include/dtb.h`
//! (generated from this file by cbindgen; `tests/header.rs` fails when it is stale).
//!
//! ```c
//! #include "dtb.h"
//! dtb_tablebase *tb;
//! if (dtb_open("tables", "english", 64u << 20, &tb) != DTB_OK) {
//!     fprintf(stderr, "%s\n", dtb_last_error());
//!     return 1;
//! }
//! dtb_value v;
//! if (dtb_probe_fen(tb, "W:WK32:BK26", &v) == DTB_OK)
//!     printf("wld %d dtw %d\n", v.wld, v.dtw);   /* wld 1 dtw 9 */
//! char best[DTB_MOVE_TEXT];
//! dtb_best_move_fen(tb, "W:WK32:BK26", best, sizeof best);   /* "32-27" */
//! dtb_close(tb);
//!
//! /* Under a count rule: DTC tables built with `dtb gen --values dtc --variant english,count=20` */
//! dtb_open("tables", "english,count=20", 64u << 20, &tb);
//! dtb_dtc d;
//! dtb_probe_dtc_fen(tb, "W:WK1,K19:BK27", 0, &d);
//! /* d.category == DTB_CATEGORY_CURSED_WIN, d.result == DTB_DRAW, d.plies 21, d.limit 20 */
//! ```
//!
//! Every function returning `int` returns a status: [`DTB_OK`] (0) on success, otherwise one
//! of the `DTB_ERR_*` codes (or [`DTB_NOT_CACHED`] from a cache-only probe), with the message
//! for the calling thread in [`dtb_last_error`]. No panic crosses the boundary (a panic would
//! be [`DTB_ERR_INTERNAL`]); NULL pointers, buffers too short, strings that are not UTF-8,
//! unknown variants, missing directories and corrupt files are all statuses. A
//! `dtb_tablebase` is probed from any number of threads at once; only `dtb_close` needs the
//! caller to make sure no probe of it is running.

#![allow(non_camel_case_types)]

use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_uint, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

use dtb_probe::internal::format::ValueKind;
use dtb_probe::internal::rules::Numbering;
use dtb_probe::movegen::{legal_moves, pdn_in_for, Counting, Move};
use dtb_probe::{
    fen, Category, Color, Dtc, Dtw, Position, ProbeError, Rules, Tablebase, Variant, Wld,
};

/// Success.
pub const DTB_OK: c_int = 0;
/// A pointer argument was NULL.
pub const DTB_ERR_NULL: c_int = 1;
/// A string argument (variant, FEN) is not UTF-8 text.
pub const DTB_ERR_UTF8: c_int = 2;
/// No variant of that name (see `dtb variants`).
pub const DTB_ERR_VARIANT: c_int = 3;
/// The table directory is missing, cannot be listed, or holds no table of the variant.
pub const DTB_ERR_DIRECTORY: c_int = 4;
/// The FEN text could not be parsed.
pub const DTB_ERR_FEN: c_int = 5;
/// The position is not legal under the variant's rules (pieces off the board, on one square,
/// a man on its crowning row, too many pieces, a side to move other than 0 or 1).
pub const DTB_ERR_POSITION: c_int = 6;
/// The board is empty: no side has a piece, and no game reaches it. A finished game is a
/// value, not this error: a side to move with no pieces or no move has lost (`{-1, 0}`), and
/// a side to move whose opponent has no pieces has won (`{1, 0}`).
pub const DTB_ERR_GAME_OVER: c_int = 7;
/// A table the probe needs is not in the directory (more pieces than were built, or a DTW
/// table of a WLD-only build for a best move or move list).
pub const DTB_ERR_MISSING_TABLE: c_int = 8;
/// A table file could not be read, is corrupt, or holds another variant's or slice's values
/// (or DTC values of another count profile than the one opened: `count=` in [`dtb_open`]).
pub const DTB_ERR_TABLE: c_int = 9;
/// A buffer or array given is too short (the message says how long it must be).
pub const DTB_ERR_BUFFER: c_int = 10;
/// A quiet-position probe ([`DTB_PROBE_QUIET`]) of a position whose side to move must
/// capture.
pub const DTB_ERR_CAPTURE_POSITION: c_int = 11;
/// A flag or argument value not defined (unknown flag bits).
pub const DTB_ERR_ARGUMENT: c_int = 12;
/// A bug in dtb (a panic caught at the boundary); the message says where.
pub const DTB_ERR_INTERNAL: c_int = 13;
/// A cache-only probe ([`DTB_PROBE_CACHE_ONLY`]) needed a block not in memory: no value, and
/// nothing was read from disk. Not an error: [`dtb_last_error`] is not changed.
pub const DTB_NOT_CACHED: c_int = 14;
/// A DTC probe's counter is negative, or at or over the limit of the position's count regime
/// (the game is then already drawn by the count rule).
pub const DTB_ERR_COUNTER: c_int = 15;

/// `dtb_value.wld` of a win for the side to move.
pub const DTB_WIN: c_int = 1;
/// `dtb_value.wld` of a draw.
pub const DTB_DRAW: c_int = 0;
/// `dtb_value.wld` of a loss for the side to move.
pub const DTB_LOSS: c_int = -1;

/// `dtb_dtc.category` of a win under the count rule (the numbers are Syzygy's WDL: 2 win, 1
/// cursed win, 0 draw, -1 blessed loss, -2 loss).
pub const DTB_CATEGORY_WIN: c_int = 2;
/// `dtb_dtc.category` of a cursed win: won game-theoretically, drawn by the count rule.
pub const DTB_CATEGORY_CURSED_WIN: c_int = 1;
/// `dtb_dtc.category` of a draw.
pub const DTB_CATEGORY_DRAW: c_int = 0;
/// `dtb_dtc.category` of a blessed loss: lost game-theoretically, drawn by the count rule.
pub const DTB_CATEGORY_BLESSED_LOSS: c_int = -1;
/// `dtb_dtc.category` of a loss under the count rule.
pub const DTB_CATEGORY_LOSS: c_int = -2;
/// `dtb_dtc.plies` of a draw, and `dtb_dtc.limit` where no count rule applies.
pub const DTB_NONE: c_int = -1;

/// `dtb_position.side_to_move` of White.
pub const DTB_WHITE: c_int = 0;
/// `dtb_position.side_to_move` of Black.
pub const DTB_BLACK: c_int = 1;

/// Probe flag: win/loss/draw only, from the WLD tables (`dtw` is -1); the cheapest probe.
pub const DTB_PROBE_WLD_ONLY: c_uint = 1;
/// Probe flag: answer only from tables already opened and blocks already in the cache;
/// otherwise return [`DTB_NOT_CACHED`] without reading the disk (KingsRow's cache-only flag,
/// for deep in the search).
pub const DTB_PROBE_CACHE_ONLY: c_uint = 2;
/// Probe flag: the caller resolves captures itself and probes only quiet positions; a
/// position whose side to move must capture is [`DTB_ERR_CAPTURE_POSITION`] (never a
/// meaningless stored value).
pub const DTB_PROBE_QUIET: c_uint = 4;

/// Bytes of `dtb_move.pdn`: room for any move's PDN text and its terminating NUL.
pub const DTB_MOVE_TEXT: usize = 128;

/// A table directory opened by [`dtb_open`]: opaque; probe it from any number of threads.
pub struct dtb_tablebase {
    tb: Tablebase,
}

/// A position as bitboards: bit `n - 1` stands for square `n` in the variant's own square
/// numbering (the numbers its FEN uses: 1..32 on 8x8, 1..50 on 10x10; bits above are zero).
/// `white` and `black` hold every piece of that colour, `kings` the kings of both colours.
/// In English checkers Black's men start on 1..12 and move toward 32. This is KingsRow's
/// 8x8 layout; for KingsRow's 10x10 layout (a gap bit after each ten squares) use
/// [`dtb_probe_kingsrow`].
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct dtb_position {
    /// Every white piece.
    pub white: u64,
    /// Every black piece.
    pub black: u64,
    /// Every king (both colours).
    pub kings: u64,
    /// [`DTB_WHITE`] (0) or [`DTB_BLACK`] (1).
    pub side_to_move: c_int,
}

/// A probed value, for the side to move.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct dtb_value {
    /// [`DTB_WIN`] (1), [`DTB_DRAW`] (0) or [`DTB_LOSS`] (-1).
    pub wld: c_int,
    /// Plies to the end of the game under perfect play (winner fastest, loser slowest): odd
    /// for a win, even for a loss, 0 for a game already over (a win when the opponent has no
    /// pieces; under `blocked=majority` either parity); -1 for a draw or where no distance is stored (a WLD-only
    /// directory, [`DTB_PROBE_WLD_ONLY`]).
    pub dtw: c_int,
}

/// One legal move with its value for the mover ([`dtb_moves_fen`], [`dtb_moves`]).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct dtb_move {
    /// PDN move text, NUL-terminated (`32-27`, `18x25`; the full path only where needed to
    /// tell captures apart).
    pub pdn: [c_char; DTB_MOVE_TEXT],
    /// The value of the move for the side making it: the value after it reversed, one ply
    /// longer (`wld` 1 = this move wins).
    pub value: dtb_value,
}

/// A position's value under the count profile the tablebase was opened with
/// ([`dtb_probe_dtc_fen`], [`dtb_probe_dtc`]): for the side to move, when `counter` plies have
/// passed since the counter was last reset (by a capture or a man move, as the profile says).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct dtb_dtc {
    /// The value at counter 0: [`DTB_CATEGORY_WIN`] (2), [`DTB_CATEGORY_CURSED_WIN`] (1),
    /// [`DTB_CATEGORY_DRAW`] (0), [`DTB_CATEGORY_BLESSED_LOSS`] (-1) or [`DTB_CATEGORY_LOSS`]
    /// (-2).
    pub category: c_int,
    /// The result at `counter` under the rule: [`DTB_WIN`] (1), [`DTB_DRAW`] (0) or
    /// [`DTB_LOSS`] (-1); a win (loss) only if `plies` is at most `limit - counter`.
    pub result: c_int,
    /// Plies to the next move that resets the counter into a position the same side still
    /// wins (loses) under the rule, or to the end of the game, winner fastest, loser slowest
    /// (over `limit` for a cursed win or a blessed loss); [`DTB_NONE`] (-1) for a draw.
    pub plies: c_int,
    /// The counter the value is at.
    pub counter: c_int,
    /// The limit in plies of the position's count regime; [`DTB_NONE`] (-1) where no count
    /// rule applies.
    pub limit: c_int,
}

/// One legal move with the DTC value of the position after it ([`dtb_moves_dtc_fen`]).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct dtb_dtc_move {
    /// PDN move text, NUL-terminated, as in [`dtb_move`].
    pub pdn: [c_char; DTB_MOVE_TEXT],
    /// The value of the position after the move for **its** side to move (the mover's
    /// opponent) at its counter: 0 after a move that resets the counter, else one more.
    pub after: dtb_dtc,
    /// 1 if the move resets the counter (a capture or a man move, or a change of count
    /// regime, as the profile says), else 0.
    pub zeroing: c_int,
}

/// What the block cache has done (since open) and holds ([`dtb_cache_stats`] fills it).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct dtb_stats {
    /// Block look-ups answered from memory.
    pub hits: u64,
    /// Block look-ups that read and decompressed a block from its file.
    pub misses: u64,
    /// Cache-only look-ups that found nothing in memory.
    pub not_cached: u64,
    /// Bytes of decompressed blocks held now by the shared cache.
    pub bytes: u64,
    /// The bound given to [`dtb_open`], in bytes: `bytes + thread_bytes` never exceeds it.
    pub capacity_bytes: u64,
    /// Bytes of decompressed blocks held now by the probing threads' recent-block slots (at
    /// most a quarter of `capacity_bytes`; freed with the handle).
    pub thread_bytes: u64,
}

/// A failed call: its status and message.
struct Failure(c_int, String);

type Res<T> = Result<T, Failure>;

fn fail<T>(code: c_int, msg: impl Into<String>) -> Res<T> {
    Err(Failure(code, msg.into()))
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last_error(msg: &str) {
    // A NUL inside a message (from a file name, say) would end the C string early.
    let msg = CString::new(msg.replace('\0', "\\0")).unwrap_or_default();
    LAST_ERROR.with(|e| {
        if let Ok(mut e) = e.try_borrow_mut() {
            *e = msg;
        }
    });
}

/// Runs `f`, catching panics; a failure sets the thread's last error and returns its status.
fn guard(name: &str, f: impl FnOnce() -> Res<c_int>) -> c_int {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(code)) => code,
        Ok(Err(Failure(code, msg))) => {
            set_last_error(&format!("{name}: {msg}"));
            code
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".into());
            set_last_error(&format!("{name}: internal error (please report): {what}"));
            DTB_ERR_INTERNAL
        }
    }
}

fn probe_failure(e: ProbeError) -> Failure {
    let code = match &e {
        ProbeError::IllegalPosition(_) => DTB_ERR_POSITION,
        ProbeError::GameOver => DTB_ERR_GAME_OVER,
        ProbeError::MissingTable { .. } => DTB_ERR_MISSING_TABLE,
        ProbeError::Table(_) | ProbeError::Mismatch { .. } => DTB_ERR_TABLE,
        ProbeError::Directory { .. } => DTB_ERR_DIRECTORY,
        ProbeError::CapturePosition => DTB_ERR_CAPTURE_POSITION,
        ProbeError::CounterOutOfRange { .. } => DTB_ERR_COUNTER,
        // Every position the C ABI probes is made under the tablebase's own rules (its FEN
        // and bitboards are read with them), so a position of other rules cannot reach a
        // probe; were one to, it is a variant error.
        ProbeError::VariantMismatch { .. } => DTB_ERR_VARIANT,
    };
    Failure(code, dtb_probe::report(&e))
}

/// # Safety
/// `p` is NULL or points to a NUL-terminated string alive for `'a`.
unsafe fn c_str<'a>(p: *const c_char, what: &str) -> Res<&'a CStr> {
    if p.is_null() {
        return fail(DTB_ERR_NULL, format!("{what} is NULL"));
    }
    // SAFETY: non-NULL, and the caller promises a NUL-terminated string.
    Ok(unsafe { CStr::from_ptr(p) })
}

/// # Safety
/// As [`c_str`].
unsafe fn c_text<'a>(p: *const c_char, what: &str) -> Res<&'a str> {
    // SAFETY: passed on from the caller.
    let s = unsafe { c_str(p, what) }?;
    s.to_str()
        .map_err(|e| Failure(DTB_ERR_UTF8, format!("{what} is not UTF-8 text: {e}")))
}

/// # Safety
/// `p` is NULL or points to a `T` alive for `'a`.
unsafe fn c_ref<'a, T>(p: *const T, what: &str) -> Res<&'a T> {
    // SAFETY: `as_ref` handles NULL; otherwise the caller promises a valid `T`.
    unsafe { p.as_ref() }.ok_or_else(|| Failure(DTB_ERR_NULL, format!("{what} is NULL")))
}

/// # Safety
/// `p` is NULL or points to a writable `T`.
unsafe fn c_out<'a, T>(p: *mut T, what: &str) -> Res<&'a mut T> {
    // SAFETY: `as_mut` handles NULL; otherwise the caller promises a writable `T`.
    unsafe { p.as_mut() }.ok_or_else(|| Failure(DTB_ERR_NULL, format!("{what} is NULL")))
}

fn wld_code(w: Wld) -> c_int {
    match w {
        Wld::Win => DTB_WIN,
        Wld::Draw => DTB_DRAW,
        Wld::Loss => DTB_LOSS,
    }
}

fn value_of(d: Dtw) -> dtb_value {
    dtb_value {
        wld: wld_code(d.wld),
        dtw: match (d.wld, d.plies) {
            (Wld::Draw, _) | (_, None) => -1,
            (_, Some(p)) => c_int::from(p),
        },
    }
}

fn parse_fen(tb: &Tablebase, text: &str) -> Res<Position> {
    fen::parse(text, tb.rules()).map_err(|e| {
        let code = match e {
            fen::FenError::Position(_) => DTB_ERR_POSITION,
            _ => DTB_ERR_FEN,
        };
        Failure(code, format!("FEN {}: {e}", dtb_probe::quote(text)))
    })
}

#[inline]
fn position_of(tb: &Tablebase, p: &dtb_position) -> Res<Position> {
    let rules = tb.rules();
    let side = match p.side_to_move {
        DTB_WHITE => Color::White,
        DTB_BLACK => Color::Black,
        s => {
            return fail(
                DTB_ERR_POSITION,
                format!("side_to_move is {s}: expected DTB_WHITE (0) or DTB_BLACK (1)"),
            )
        }
    };
    let g = rules.geometry();
    let outside = (p.white | p.black | p.kings) & !g.all;
    if outside != 0 {
        return fail(
            DTB_ERR_POSITION,
            format!(
                "bit {} is set: a {}x{} board has squares 1..={} (bits 0..={})",
                outside.trailing_zeros(),
                g.size,
                g.size,
                g.squares,
                g.squares - 1
            ),
        );
    }
    // The common case (every variant but Italian and Spanish) without a call a bitboard.
    let standard = rules.numbering == Numbering::Standard;
    let n = |bb| {
        if standard {
            bb
        } else {
            rules.numbering.to_internal(g, bb)
        }
    };
    Position::new(rules, n(p.white), n(p.black), n(p.kings), side)
        .map_err(|e| probe_failure(ProbeError::IllegalPosition(e)))
}

/// The probe behind [`dtb_probe_fen`] and [`dtb_probe()`]: `Ok(None)` = not cached.
#[inline]
fn probe_value(tb: &Tablebase, pos: &Position, flags: c_uint) -> Res<Option<dtb_value>> {
    if flags & !(DTB_PROBE_WLD_ONLY | DTB_PROBE_CACHE_ONLY | DTB_PROBE_QUIET) != 0 {
        return fail(DTB_ERR_ARGUMENT, format!("unknown flag bits in {flags:#x}"));
    }
    let wld_only = flags & DTB_PROBE_WLD_ONLY != 0;
    let cache_only = flags & DTB_PROBE_CACHE_ONLY != 0;
    let quiet = flags & DTB_PROBE_QUIET != 0;
    if quiet && tb.rules().capture_compulsory && dtb_probe::movegen::has_capture(tb.rules(), pos) {
        return Err(probe_failure(ProbeError::CapturePosition));
    }
    let wld = |w: Wld| dtb_value {
        wld: wld_code(w),
        dtw: -1,
    };
    let r = if wld_only {
        if cache_only {
            tb.probe_wld_cached(pos).map(|o| o.map(wld))
        } else {
            tb.probe_wld(pos).map(|w| Some(wld(w)))
        }
    } else {
        let d = if cache_only {
            tb.probe_dtw_cached(pos).map(|o| o.map(value_of))
        } else {
            tb.probe_dtw(pos).map(|d| Some(value_of(d)))
        };
        match d {
            // No distance stored for this slice (a WLD-only build): the outcome alone.
            Err(ProbeError::MissingTable {
                kind: ValueKind::Dtw,
                ..
            }) => {
                if cache_only {
                    tb.probe_wld_cached(pos).map(|o| o.map(wld))
                } else {
                    tb.probe_wld(pos).map(|w| Some(wld(w)))
                }
            }
            d => d,
        }
    };
    r.map_err(probe_failure)
}

fn write_text(text: &str, buf: *mut c_char, len: usize) -> Res<()> {
    if buf.is_null() {
        return fail(DTB_ERR_NULL, "buf is NULL");
    }
    if text.len() + 1 > len {
        return fail(
            DTB_ERR_BUFFER,
            format!(
                "buffer of {len} bytes is too short for {text:?}: {} needed",
                text.len() + 1
            ),
        );
    }
    // SAFETY: `buf` is non-NULL and the caller promises `len` writable bytes; we write
    // `text.len() + 1 <= len` of them, from a Rust string that cannot overlap the buffer.
    unsafe {
        std::ptr::copy_nonoverlapping(text.as_ptr(), buf.cast::<u8>(), text.len());
        *buf.add(text.len()) = 0;
    }
    Ok(())
}

fn best_text(tb: &Tablebase, pos: &Position) -> Res<String> {
    let ranked = if tb.materials(ValueKind::Dtw).is_empty() {
        tb.probe_moves_wld(pos)
    } else {
        tb.probe_moves(pos)
    }
    .map_err(probe_failure)?;
    let Some(best) = ranked.first() else {
        return Ok(String::new());
    };
    Ok(pdn(tb.rules(), pos, &best.mv))
}

fn pdn(rules: &Rules, pos: &Position, m: &Move) -> String {
    let mut all = Vec::new();
    legal_moves(rules, pos, Counting::Unique, &mut all);
    pdn_in_for(rules, m, &all)
}

fn write_moves(
    tb: &Tablebase,
    pos: &Position,
    moves: *mut dtb_move,
    cap: usize,
    count: *mut usize,
) -> Res<c_int> {
    // SAFETY: NULL is checked; otherwise the caller promises a writable size_t.
    let count = unsafe { c_out(count, "count") }?;
    let ranked = if tb.materials(ValueKind::Dtw).is_empty() {
        tb.probe_moves_wld(pos)
    } else {
        tb.probe_moves(pos)
    }
    .map_err(probe_failure)?;
    *count = ranked.len();
    if ranked.len() > cap {
        return fail(
            DTB_ERR_BUFFER,
            format!(
                "the position has {} legal moves, the array holds {cap} (count says how many)",
                ranked.len()
            ),
        );
    }
    if ranked.is_empty() {
        return Ok(DTB_OK);
    }
    if moves.is_null() {
        return fail(DTB_ERR_NULL, "moves is NULL");
    }
    let mut all = Vec::new();
    legal_moves(tb.rules(), pos, Counting::Unique, &mut all);
    for (i, r) in ranked.iter().enumerate() {
        let out = dtb_move {
            pdn: pdn_text(&pdn_in_for(tb.rules(), &r.mv, &all))?,
            value: value_of(r.for_mover()),
        };
        // SAFETY: `moves` is non-NULL and the caller promises `cap >= ranked.len() > i`
        // writable elements.
        unsafe { moves.add(i).write(out) };
    }
    Ok(DTB_OK)
}

/// Open the tables of `variant` (a preset name: `english`, `international`, ... as
/// `dtb variants` lists them; case-insensitive; with `FIELD=VALUE` overrides and `count=`
/// as `dtb --variant` takes them: `english,count=20` sets the count profile that DTC probes
/// answer under, [`dtb_probe_dtc_fen`]) in directory `dir`, with a block cache of
/// about `cache_bytes` of decompressed data (0: no cache, every probe decompresses; 64 MiB is
/// a good default). Files are listed now and each opened (memory-mapped) on first use.
/// On success `*out` is the handle, to be given back to [`dtb_close`].
///
/// Errors: [`DTB_ERR_NULL`], [`DTB_ERR_UTF8`] (the variant; the directory may be any bytes
/// the system allows), [`DTB_ERR_VARIANT`], [`DTB_ERR_DIRECTORY`] (missing, unreadable, or
/// without any table of the variant); `*out` is then NULL.
///
/// # Safety
/// `dir` and `variant` are NULL or NUL-terminated strings; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn dtb_open(
    dir: *const c_char,
    variant: *const c_char,
    cache_bytes: usize,
    out: *mut *mut dtb_tablebase,
) -> c_int {
    guard("dtb_open", || {
        // SAFETY: NULL is checked; otherwise the caller promises a writable pointer.
        let out = unsafe { c_out(out, "out") }?;
        *out = std::ptr::null_mut();
        // SAFETY: the caller promises NUL-terminated strings or NULL.
        let dir = unsafe { c_str(dir, "dir") }?;
        // SAFETY: as above.
        let variant = unsafe { c_text(variant, "variant") }?;
        // A preset's name, or a preset with FIELD=VALUE overrides and count= (as `dtb
        // --variant`).
        let parsed = Variant::parse(variant).map_err(|e| {
            Failure(
                DTB_ERR_VARIANT,
                format!("variant {}: {e}", dtb_probe::quote(variant)),
            )
        })?;
        let rules = parsed.rules;
        let dir = path_of(dir);
        if !dir.is_dir() {
            return fail(
                DTB_ERR_DIRECTORY,
                format!(
                    "{}: {}",
                    dir.display(),
                    if dir.exists() {
                        "not a directory"
                    } else {
                        "no such directory"
                    }
                ),
            );
        }
        let mut tb = Tablebase::with_cache_bytes(rules, cache_bytes);
        tb.set_count_profile(parsed.count);
        tb.add_directory(&dir).map_err(probe_failure)?;
        if tb.max_pieces() == 0 {
            return fail(
                DTB_ERR_DIRECTORY,
                format!(
                    "no {} tables in {} (build them with `dtb gen --variant {} --out DIR`)",
                    rules.name,
                    dir.display(),
                    rules.spec()
                ),
            );
        }
        *out = Box::into_raw(Box::new(dtb_tablebase { tb }));
        Ok(DTB_OK)
    })
}

#[cfg(unix)]
fn path_of(s: &CStr) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(s.to_bytes()))
}

#[cfg(not(unix))]
fn path_of(s: &CStr) -> PathBuf {
    PathBuf::from(s.to_string_lossy().into_owned())
}

/// Close a handle from [`dtb_open`] (NULL is ignored). No probe of it may be running or
/// start after.
///
/// # Safety
/// `tb` is NULL or a handle from [`dtb_open`] not yet closed.
#[no_mangle]
pub unsafe extern "C" fn dtb_close(tb: *mut dtb_tablebase) {
    if tb.is_null() {
        return;
    }
    let _ = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: `tb` came from `Box::into_raw` in `dtb_open` and is closed once.
        drop(unsafe { Box::from_raw(tb) });
    }));
}

/// Win/loss/draw and distance of the position in PDN FEN `fen` (`W:WK32:BK26`), captures
/// resolved: the full probe ([`dtb_probe()`] with flags 0). In a directory without DTW tables,
/// `dtw` is -1.
///
/// Errors: [`DTB_ERR_NULL`], [`DTB_ERR_UTF8`], [`DTB_ERR_FEN`], [`DTB_ERR_POSITION`],
/// [`DTB_ERR_GAME_OVER`], [`DTB_ERR_MISSING_TABLE`], [`DTB_ERR_TABLE`].
///
/// # Safety
/// `tb` is NULL or an open handle; `fen` NULL or a NUL-terminated string; `out` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn dtb_probe_fen(
    tb: *const dtb_tablebase,
    fen: *const c_char,
    out: *mut dtb_value,
) -> c_int {
    // SAFETY: passed on from the caller.
    unsafe { dtb_probe_fen_flags(tb, fen, 0, out) }
}

/// [`dtb_probe_fen`] with probe flags (`DTB_PROBE_*`, or'ed): as [`dtb_probe()`].
///
/// # Safety
/// As [`dtb_probe_fen`].
#[no_mangle]
pub unsafe extern "C" fn dtb_probe_fen_flags(
    tb: *const dtb_tablebase,
    fen: *const c_char,
    flags: c_uint,
    out: *mut dtb_value,
) -> c_int {
    guard("dtb_probe_fen", || {
        // SAFETY: NULL is checked; otherwise the caller promises an open handle.
        let tb = &unsafe { c_ref(tb, "tb") }?.tb;
        // SAFETY: the caller promises a NUL-terminated string or NULL.
        let text = unsafe { c_text(fen, "fen") }?;
        // SAFETY: NULL is checked; otherwise the caller promises a writable value.
        let out = unsafe { c_out(out, "out") }?;
        let pos = parse_fen(tb, text)?;
        Ok(match probe_value(tb, &pos, flags)? {
            Some(v) => {
                *out = v;
                DTB_OK
            }
            None => DTB_NOT_CACHED,
        })
    })
}

/// The value of a position given as bitboards ([`dtb_position`]), with `flags` (0 for the
/// full probe, or [`DTB_PROBE_WLD_ONLY`], [`DTB_PROBE_CACHE_ONLY`], [`DTB_PROBE_QUIET`]
/// or'ed). Returns [`DTB_NOT_CACHED`] (and leaves `*out`) when a cache-only probe needs a
/// block not in memory.
///
/// Errors: as [`dtb_probe_fen`] (bits off the board or a bad side to move are
/// [`DTB_ERR_POSITION`]), [`DTB_ERR_CAPTURE_POSITION`], [`DTB_ERR_ARGUMENT`] (unknown flags).
///
/// # Safety
/// `tb` is NULL or an open handle; `pos` NULL or valid; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn dtb_probe(
    tb: *const dtb_tablebase,
    pos: *const dtb_position,
    flags: c_uint,
    out: *mut dtb_value,
) -> c_int {
    guard("dtb_probe", || {
        // SAFETY: NULL is checked; otherwise the caller promises an open handle.
        let tb = &unsafe { c_ref(tb, "tb") }?.tb;
        // SAFETY: NULL is checked; otherwise the caller promises a valid position.
        let p = unsafe { c_ref(pos, "pos") }?;
        // SAFETY: NULL is checked; otherwise the caller promises a writable value.
        let out = unsafe { c_out(out, "out") }?;
        let pos = position_of(tb, p)?;
        if flags == 0 {
            // The engine's probe, without the flag handling's detours (which cost 7-12% of a
            // cached probe: docs/PERFORMANCE.md).
            match tb.probe_dtw(&pos) {
                Ok(d) => {
                    *out = value_of(d);
                    return Ok(DTB_OK);
                }
                Err(ProbeError::MissingTable {
                    kind: ValueKind::Dtw,
                    ..
                }) => {}
                Err(e) => return Err(probe_failure(e)),
            }
        }
        Ok(match probe_value(tb, &pos, flags)? {
            Some(v) => {
                *out = v;
                DTB_OK
            }
            None => DTB_NOT_CACHED,
        })
    })
}

/// The 10x10 gap bits of KingsRow's International layout: bits 10, 21, 32 and 43 hold no
/// square.
const KR10_GAPS: [u32; 4] = [10, 21, 32, 43];

fn from_kingsrow(size: u8, bb: u64) -> Res<u64> {
    if size != 10 {
        return Ok(bb);
    }
    let mut out = 0u64;
    for sq in 0..50u32 {
        // Square sq+1 lies at bit sq + (number of gaps below it).
        let bit = sq + sq / 10;
        if bb >> bit & 1 != 0 {
            out |= 1u64 << sq;
        }
    }
    let used: u64 = (0..50u32).map(|sq| 1u64 << (sq + sq / 10)).sum();
    if bb & !used != 0 {
        let bit = (bb & !used).trailing_zeros();
        let gap = if KR10_GAPS.contains(&bit) {
            " (a gap bit)"
        } else {
            ""
        };
        return fail(
            DTB_ERR_POSITION,
            format!("bit {bit}{gap} holds no square in KingsRow's 10x10 layout"),
        );
    }
    Ok(out)
}

/// [`dtb_probe()`] from KingsRow's egdb position (`EGDB_POSITION`: black, white, king
/// bitboards; `color` 0 = `EGDB_BLACK`, 1 = `EGDB_WHITE` to move). On 8x8, bit `n - 1` is
/// square `n` (as [`dtb_position`]); on 10x10, KingsRow's layout with a gap bit after each
/// ten squares (bits 10, 21, 32 and 43 unused: square 11 is bit 11, square 50 bit 54).
///
/// # Safety
/// `tb` is NULL or an open handle; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn dtb_probe_kingsrow(
    tb: *const dtb_tablebase,
    black: u64,
    white: u64,
    king: u64,
    color: c_int,
    flags: c_uint,
    out: *mut dtb_value,
) -> c_int {
    guard("dtb_probe_kingsrow", || {
        // SAFETY: NULL is checked; otherwise the caller promises an open handle.
        let tb = &unsafe { c_ref(tb, "tb") }?.tb;
        // SAFETY: NULL is checked; otherwise the caller promises a writable value.
        let out = unsafe { c_out(out, "out") }?;
        let size = tb.rules().board;
        let side = match color {
            0 => DTB_BLACK,
            1 => DTB_WHITE,
            c => {
                return fail(
                    DTB_ERR_POSITION,
                    format!("color is {c}: expected EGDB_BLACK (0) or EGDB_WHITE (1)"),
                )
            }
        };
        let p = dtb_position {
            white: from_kingsrow(size, white)?,
            black: from_kingsrow(size, black)?,
            kings: from_kingsrow(size, king)?,
            side_to_move: side,
        };
        let pos = position_of(tb, &p)?;
        if flags == 0 {
            // As in dtb_probe: the engine's probe without the flag handling's detours.
            match tb.probe_dtw(&pos) {
                Ok(d) => {
                    *out = value_of(d);
                    return Ok(DTB_OK);
                }
                Err(ProbeError::MissingTable {
                    kind: ValueKind::Dtw,
                    ..
                }) => {}
                Err(e) => return Err(probe_failure(e)),
            }
        }
        Ok(match probe_value(tb, &pos, flags)? {
            Some(v) => {
                *out = v;
                DTB_OK
            }
            None => DTB_NOT_CACHED,
        })
    })
}

/// The bitboards of a FEN, in [`dtb_position`]'s layout (for engines that read FEN once).
///
/// Errors: [`DTB_ERR_NULL`], [`DTB_ERR_UTF8`], [`DTB_ERR_FEN`], [`DTB_ERR_POSITION`].
///
/// # Safety
/// `tb` is NULL or an open handle; `fen` NULL or a NUL-terminated string; `out` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn dtb_position_from_fen(
    tb: *const dtb_tablebase,
    fen: *const c_char,
    out: *mut dtb_position,
) -> c_int {
    guard("dtb_position_from_fen", || {
        // SAFETY: NULL is checked; otherwise the caller promises an open handle.
        let tb = &unsafe { c_ref(tb, "tb") }?.tb;
        // SAFETY: the caller promises a NUL-terminated string or NULL.
        let text = unsafe { c_text(fen, "fen") }?;
        // SAFETY: NULL is checked; otherwise the caller promises a writable position.
        let out = unsafe { c_out(out, "out") }?;
        let pos = parse_fen(tb, text)?;
        let rules = tb.rules();
        let g = rules.geometry();
        let numbered = |bb: u64| {
            let mut out = 0u64;
            let mut b = bb;
            while b != 0 {
                let sq = b.trailing_zeros() as u8;
                b &= b - 1;
                out |= 1u64 << (rules.numbering.number(g, sq) - 1);
            }
            out
        };
        *out = dtb_position {
            white: numbered(pos.white()),
            black: numbered(pos.black()),
            kings: numbered(pos.kings()),
            side_to_move: match pos.side_to_move() {
                Color::White => DTB_WHITE,
                Color::Black => DTB_BLACK,
            },
        };
        Ok(DTB_OK)
    })
}

/// The best move of the FEN position as PDN text into `buf` (`len` bytes, NUL included;
/// [`DTB_MOVE_TEXT`] is always enough): in a win the fastest, in a loss the slowest, in a draw
/// a drawing move. An empty string when the side to move has no move or the game is over
/// (the opponent has no pieces). Uses the DTW tables
/// (the WLD tables in a WLD-only directory: then any move keeping the outcome).
///
/// Errors: as [`dtb_probe_fen`], and [`DTB_ERR_BUFFER`] if `len` is too short.
///
/// # Safety
/// `tb` is NULL or an open handle; `fen` NULL or a NUL-terminated string; `buf` NULL or
/// `len` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn dtb_best_move_fen(
    tb: *const dtb_tablebase,
    fen: *const c_char,
    buf: *mut c_char,
    len: usize,
) -> c_int {
    guard("dtb_best_move_fen", || {
        // SAFETY: NULL is checked; otherwise the caller promises an open handle.
        let tb = &unsafe { c_ref(tb, "tb") }?.tb;
        // SAFETY: the caller promises a NUL-terminated string or NULL.
        let text = unsafe { c_text(fen, "fen") }?;
        let pos = parse_fen(tb, text)?;
        write_text(&best_text(tb, &pos)?, buf, len)?;
        Ok(DTB_OK)
    })
}

/// [`dtb_best_move_fen`] of a position given as bitboards.
///
/// # Safety
/// `tb` is NULL or an open handle; `pos` NULL or valid; `buf` NULL or `len` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn dtb_best_move(
    tb: *const dtb_tablebase,
    pos: *const dtb_position,
    buf: *mut c_char,
    len: usize,
) -> c_int {
    guard("dtb_best_move", || {
        // SAFETY: NULL is checked; otherwise the caller promises an open handle.
        let tb = &unsafe { c_ref(tb, "tb") }?.tb;
        // SAFETY: NULL is checked; otherwise the caller promises a valid position.
        let p = unsafe { c_ref(pos, "pos") }?;
        let pos = position_of(tb, p)?;
        write_text(&best_text(tb, &pos)?, buf, len)?;
        Ok(DTB_OK)
    })
}

/// Every legal move of the FEN position with its value for the mover, best first (wins
/// fastest first, then draws, then losses slowest first): root-move ranking. Writes up to
/// `cap` entries to `moves` and the number of legal moves to `*count` (also when the array is
/// too short: call with `cap` 0 and `moves` NULL to learn it). A position without moves, or
/// whose game is over (the opponent has no pieces), gives `*count` 0.
///
/// Errors: as [`dtb_probe_fen`]; [`DTB_ERR_BUFFER`] when `cap < *count`;
/// [`DTB_ERR_MISSING_TABLE`] when a table a move leads to is missing.
///
/// # Safety
/// `tb` is NULL or an open handle; `fen` NULL or a NUL-terminated string; `moves` NULL or
/// `cap` writable elements; `count` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn dtb_moves_fen(
    tb: *const dtb_tablebase,
    fen: *const c_char,
    moves: *mut dtb_move,
    cap: usize,
    count: *mut usize,
) -> c_int {
    guard("dtb_moves_fen", || {
        // SAFETY: NULL is checked; otherwise the caller promises an open handle.
        let tb = &unsafe { c_ref(tb, "tb") }?.tb;
        // SAFETY: the caller promises a NUL-terminated string or NULL.
        let text = unsafe { c_text(fen, "fen") }?;
        let pos = parse_fen(tb, text)?;
        write_moves(tb, &pos, moves, cap, count)
    })
}

/// [`dtb_moves_fen`] of a position given as bitboards.
///
/// # Safety
/// As [`dtb_moves_fen`], with `pos` NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn dtb_moves(
    tb: *const dtb_tablebase,
    pos: *const dtb_position,
    moves: *mut dtb_move,
    cap: usize,
    count: *mut usize,
) -> c_int {
    guard("dtb_moves", || {
        // SAFETY: NULL is checked; otherwise the caller promises an open handle.
        let tb = &unsafe { c_ref(tb, "tb") }?.tb;
        // SAFETY: NULL is checked; otherwise the caller promises a valid position.
        let p = unsafe { c_ref(pos, "pos") }?;
        let pos = position_of(tb, p)?;
        write_moves(tb, &pos, moves, cap, count)
    })
}

fn category_code(c: Category) -> c_int {
    match c {
        Category::Win => DTB_CATEGORY_WIN,
        Category::CursedWin => DTB_CATEGORY_CURSED_WIN,
        Category::Draw => DTB_CATEGORY_DRAW,
        Category::BlessedLoss => DTB_CATEGORY_BLESSED_LOSS,
        Category::Loss => DTB_CATEGORY_LOSS,
    }
}

fn dtc_of(d: &Dtc) -> dtb_dtc {
    dtb_dtc {
        category: category_code(d.category),
        result: wld_code(d.result),
        plies: d.plies.map_or(DTB_NONE, c_int::from),
        counter: c_int::from(d.counter),
        limit: d.limit.map_or(DTB_NONE, c_int::from),
    }
}

/// A counter from C: 0 to 65535 (the probe then checks it against the position's limit).
fn counter_of(counter: c_int) -> Res<u16> {
    u16::try_from(counter).map_err(|_| {
        Failure(
            DTB_ERR_COUNTER,
            if counter < 0 {
                format!("counter is {counter}: plies since the last capture or man move, 0 or more")
            } else {
                format!("counter {counter} is over every count limit (at most 65535 plies)")
            },
        )
    })
}

fn probe_dtc_into(tb: &Tablebase, pos: &Position, counter: c_int, out: &mut dtb_dtc) -> Res<c_int> {
    let d = tb
        .probe_dtc(pos, counter_of(counter)?)
        .map_err(probe_failure)?;
    *out = dtc_of(&d);
    Ok(DTB_OK)
}

/// The value of the position in PDN FEN `fen` under the count profile the tablebase was
/// opened with (the variant's, or `count=` in [`dtb_open`]'s variant), `counter` plies after
/// the counter was last reset: category at counter 0, result at `counter`, distance to
/// conversion ([`dtb_dtc`]). Needs DTC tables built under that profile (`dtb gen --values
/// dtc --variant english,count=20`).
///
/// Errors: as [`dtb_probe_fen`]; [`DTB_ERR_COUNTER`] for a negative counter or one at or over
/// the limit of the position's count regime; [`DTB_ERR_MISSING_TABLE`] without DTC tables;
/// [`DTB_ERR_TABLE`] for DTC tables of another count profile.
///
/// # Safety
/// `tb` is NULL or an open handle; `fen` NULL or a NUL-terminated string; `out` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn dtb_probe_dtc_fen(
    tb: *const dtb_tablebase,
    fen: *const c_char,
    counter: c_int,
    out: *mut dtb_dtc,
) -> c_int {
    guard("dtb_probe_dtc_fen", || {
        // SAFETY: NULL is checked; otherwise the caller promises an open handle.
        let tb = &unsafe { c_ref(tb, "tb") }?.tb;
        // SAFETY: the caller promises a NUL-terminated string or NULL.
        let text = unsafe { c_text(fen, "fen") }?;
        // SAFETY: NULL is checked; otherwise the caller promises a writable value.
        let out = unsafe { c_out(out, "out") }?;
        let pos = parse_fen(tb, text)?;
        probe_dtc_into(tb, &pos, counter, out)
    })
}

/// [`dtb_probe_dtc_fen`] of a position given as bitboards ([`dtb_position`]).
///
/// # Safety
/// `tb` is NULL or an open handle; `pos` NULL or valid; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn dtb_probe_dtc(
    tb: *const dtb_tablebase,
    pos: *const dtb_position,
    counter: c_int,
    out: *mut dtb_dtc,
) -> c_int {
    guard("dtb_probe_dtc", || {
        // SAFETY: NULL is checked; otherwise the caller promises an open handle.
        let tb = &unsafe { c_ref(tb, "tb") }?.tb;
        // SAFETY: NULL is checked; otherwise the caller promises a valid position.
        let p = unsafe { c_ref(pos, "pos") }?;
        // SAFETY: NULL is checked; otherwise the caller promises a writable value.
        let out = unsafe { c_out(out, "out") }?;
        let pos = position_of(tb, p)?;
        probe_dtc_into(tb, &pos, counter, out)
    })
}

/// Every legal move of the FEN position at `counter`, best first for the mover under the
/// count rule (moves that win at this counter fastest first, then cursed wins, draws,
/// blessed losses, losses slowest first), each with the DTC value of the position after it
/// and whether it resets the counter. `cap`, `moves` and `*count` as in [`dtb_moves_fen`].
///
/// Errors: as [`dtb_probe_dtc_fen`]; [`DTB_ERR_BUFFER`] when `cap < *count`.
///
/// # Safety
/// `tb` is NULL or an open handle; `fen` NULL or a NUL-terminated string; `moves` NULL or
/// `cap` writable elements; `count` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn dtb_moves_dtc_fen(
    tb: *const dtb_tablebase,
    fen: *const c_char,
    counter: c_int,
    moves: *mut dtb_dtc_move,
    cap: usize,
    count: *mut usize,
) -> c_int {
    guard("dtb_moves_dtc_fen", || {
        // SAFETY: NULL is checked; otherwise the caller promises an open handle.
        let tb = &unsafe { c_ref(tb, "tb") }?.tb;
        // SAFETY: the caller promises a NUL-terminated string or NULL.
        let text = unsafe { c_text(fen, "fen") }?;
        // SAFETY: NULL is checked; otherwise the caller promises a writable size_t.
        let count = unsafe { c_out(count, "count") }?;
        let pos = parse_fen(tb, text)?;
        let ranked = tb
            .probe_moves_dtc(&pos, counter_of(counter)?)
            .map_err(probe_failure)?;
        *count = ranked.len();
        if ranked.len() > cap {
            return fail(
                DTB_ERR_BUFFER,
                format!(
                    "the position has {} legal moves, the array holds {cap} (count says how many)",
                    ranked.len()
                ),
            );
        }
        if ranked.is_empty() {
            return Ok(DTB_OK);
        }
        if moves.is_null() {
            return fail(DTB_ERR_NULL, "moves is NULL");
        }
        let mut all = Vec::new();
        legal_moves(tb.rules(), &pos, Counting::Unique, &mut all);
        for (i, r) in ranked.iter().enumerate() {
            let out = dtb_dtc_move {
                pdn: pdn_text(&pdn_in_for(tb.rules(), &r.mv, &all))?,
                after: dtc_of(&r.after),
                zeroing: c_int::from(r.zeroing),
            };
            // SAFETY: `moves` is non-NULL and the caller promises `cap >= ranked.len() > i`
            // writable elements.
            unsafe { moves.add(i).write(out) };
        }
        Ok(DTB_OK)
    })
}

/// A move's PDN text as the NUL-terminated array of [`dtb_move`] and [`dtb_dtc_move`].
fn pdn_text(text: &str) -> Res<[c_char; DTB_MOVE_TEXT]> {
    if text.len() >= DTB_MOVE_TEXT {
        return fail(DTB_ERR_INTERNAL, format!("move text {text:?} is too long"));
    }
    let mut pdn = [0; DTB_MOVE_TEXT];
    for (d, s) in pdn.iter_mut().zip(text.bytes()) {
        *d = s as c_char;
    }
    Ok(pdn)
}

/// Check every table file of the directory: header, block table, the payload checksum and
/// every block's checksum, length and codes (reads every byte; does not check values against
/// the rules: that is `dtb verify`).
///
/// Errors: [`DTB_ERR_NULL`], [`DTB_ERR_TABLE`] naming the first bad file.
///
/// # Safety
/// `tb` is NULL or an open handle.
#[no_mangle]
pub unsafe extern "C" fn dtb_verify(tb: *const dtb_tablebase) -> c_int {
    guard("dtb_verify", || {
        // SAFETY: NULL is checked; otherwise the caller promises an open handle.
        let tb = &unsafe { c_ref(tb, "tb") }?.tb;
        for kind in [ValueKind::Wld, ValueKind::Dtw, ValueKind::Dtc] {
            for m in tb.materials(kind) {
                let t = tb.table(m, kind).map_err(probe_failure)?;
                t.verify_payload()
                    .map_err(|e| Failure(DTB_ERR_TABLE, dtb_probe::report(&e)))?;
            }
        }
        Ok(DTB_OK)
    })
}

/// The block cache's counters and what it holds now.
///
/// # Safety
/// `tb` is NULL or an open handle; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn dtb_cache_stats(tb: *const dtb_tablebase, out: *mut dtb_stats) -> c_int {
    guard("dtb_cache_stats", || {
        // SAFETY: NULL is checked; otherwise the caller promises an open handle.
        let tb = &unsafe { c_ref(tb, "tb") }?.tb;
        // SAFETY: NULL is checked; otherwise the caller promises writable stats.
        let out = unsafe { c_out(out, "out") }?;
        let s = tb.cache_stats();
        *out = dtb_stats {
            hits: s.hits,
            misses: s.misses,
            not_cached: s.not_cached,
            bytes: s.bytes,
            capacity_bytes: s.capacity_bytes as u64,
            thread_bytes: s.thread_bytes,
        };
        Ok(DTB_OK)
    })
}

/// The largest number of pieces of any table in the directory (0 for NULL).
///
/// # Safety
/// `tb` is NULL or an open handle.
#[no_mangle]
pub unsafe extern "C" fn dtb_max_pieces(tb: *const dtb_tablebase) -> c_int {
    // SAFETY: `as_ref` handles NULL; otherwise the caller promises an open handle.
    match unsafe { tb.as_ref() } {
        Some(t) => t.tb.max_pieces() as c_int,
        None => 0,
    }
}

/// The message of the last failed call on the calling thread (`"dtb_open: unknown variant
/// ..."`), or an empty string if none has failed. Valid until the next failing call on this
/// thread; never NULL.
#[no_mangle]
pub extern "C" fn dtb_last_error() -> *const c_char {
    LAST_ERROR.with(|e| match e.try_borrow() {
        Ok(e) => e.as_ptr(),
        Err(_) => c"".as_ptr(),
    })
}

/// A short name for a status code (`"DTB_ERR_FEN"`), `"unknown status"` for others; never
/// NULL, static.
#[no_mangle]
pub extern "C" fn dtb_status_name(status: c_int) -> *const c_char {
    let s: &'static CStr = match status {
        DTB_OK => c"DTB_OK",
        DTB_ERR_NULL => c"DTB_ERR_NULL",
        DTB_ERR_UTF8 => c"DTB_ERR_UTF8",
        DTB_ERR_VARIANT => c"DTB_ERR_VARIANT",
        DTB_ERR_DIRECTORY => c"DTB_ERR_DIRECTORY",
        DTB_ERR_FEN => c"DTB_ERR_FEN",
        DTB_ERR_POSITION => c"DTB_ERR_POSITION",
        DTB_ERR_GAME_OVER => c"DTB_ERR_GAME_OVER",
        DTB_ERR_MISSING_TABLE => c"DTB_ERR_MISSING_TABLE",
        DTB_ERR_TABLE => c"DTB_ERR_TABLE",
        DTB_ERR_BUFFER => c"DTB_ERR_BUFFER",
        DTB_ERR_CAPTURE_POSITION => c"DTB_ERR_CAPTURE_POSITION",
        DTB_ERR_ARGUMENT => c"DTB_ERR_ARGUMENT",
        DTB_ERR_INTERNAL => c"DTB_ERR_INTERNAL",
        DTB_NOT_CACHED => c"DTB_NOT_CACHED",
        DTB_ERR_COUNTER => c"DTB_ERR_COUNTER",
        _ => c"unknown status",
    };
    s.as_ptr()
}

/// dtb's version (`"0.1.0"`), static.
#[no_mangle]
pub extern "C" fn dtb_version() -> *const c_char {
    static V: &CStr =
        match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
            Ok(v) => v,
            Err(_) => c"unknown",
        };
    V.as_ptr()
}
