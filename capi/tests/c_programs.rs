//! The C ABI from real C and C++: `examples/*.c(pp)` compiled with the system compiler (`cc`,
//! `c++` from PATH, or `$CC`, `$CXX`) against `include/dtb.h` and `libdtb.so`, run on English
//! 2-4 tables built here, their answers compared with the Rust API's.

mod common;

use std::process::Command;

use common::{compile, dtc_tables, tables};
use dtb_probe::movegen::{legal_moves, pdn_in_for, Counting};
use dtb_probe::{fen, Rules, Tablebase, Wld};

const FENS: &[&str] = &[
    "W:WK32:BK26",
    "B:WK32:BK26",
    "W:W18,25:BK13",
    "B:WK32:B19,K26",
    "W:WK4,30:BK26,K29",
    "W:WK18:B24,K29",
    "B:WK1,19:BK7",
    "W:W22,30:B17,1",
    "B:W22:B18",
    "W:W22:B18",
    "W:W22,K1:B18,K3",
    "B:W22,K1:B18,K3",
    "W:WK1,K2,K3:BK30,K31",
    // Finished games (issue 36): blocked, no pieces, facing no pieces.
    "W:W29:B25,22",
    "W:W:B25,22",
    "W:W18:B",
    "W:not a fen",
];

fn wld_code(w: Wld) -> i32 {
    match w {
        Wld::Win => 1,
        Wld::Draw => 0,
        Wld::Loss => -1,
    }
}

fn dtw_code(d: dtb_probe::Dtw) -> i32 {
    match (d.wld, d.plies) {
        (Wld::Draw, _) | (_, None) => -1,
        (_, Some(p)) => i32::from(p),
    }
}

/// What the C program must print for `f`, from the Rust API: `FEN wld dtw best nmoves
/// move:wld:dtw...`, or `FEN error STATUS` (the C line then goes on with the message).
fn expected(tb: &Tablebase, f: &str) -> String {
    let rules = tb.rules();
    let pos = match fen::parse(f, rules) {
        Ok(p) => p,
        Err(_) => return format!("{f} error DTB_ERR_FEN"),
    };
    let d = match tb.probe_dtw(&pos) {
        Ok(d) => d,
        Err(dtb_probe::ProbeError::MissingTable { .. }) => {
            return format!("{f} error DTB_ERR_MISSING_TABLE")
        }
        Err(e) => panic!("{f}: {e}"),
    };
    let ranked = tb.probe_moves(&pos).unwrap();
    let mut all = Vec::new();
    legal_moves(rules, &pos, Counting::Unique, &mut all);
    let best = ranked
        .first()
        .map_or("-".to_string(), |r| pdn_in_for(rules, &r.mv, &all));
    let mut line = format!(
        "{f} {} {} {best} {}",
        wld_code(d.wld),
        dtw_code(d),
        ranked.len()
    );
    for r in &ranked {
        let v = r.for_mover();
        line.push_str(&format!(
            " {}:{}:{}",
            pdn_in_for(rules, &r.mv, &all),
            wld_code(v.wld),
            dtw_code(v)
        ));
    }
    line
}

#[test]
fn c_program_probes_from_8_threads_and_agrees_with_rust() {
    let exe = compile("probe_threads.c", "dtb-probe-threads-c");
    let out = Command::new(&exe)
        .arg(tables())
        .arg("english")
        .args(FENS)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tb = Tablebase::open(tables(), Rules::ENGLISH).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), FENS.len(), "{stdout}");
    for (f, line) in FENS.iter().zip(&lines) {
        let want = expected(&tb, f);
        if want.contains(" error ") {
            assert!(
                line.starts_with(&want),
                "C printed {line:?}, Rust says {want:?}"
            );
            // The message follows the status name.
            assert!(line.len() > want.len() + 5, "no message: {line:?}");
        } else {
            assert_eq!(*line, want, "C and Rust disagree on {f}");
        }
    }
    // Real values, not only agreement: the taking-the-move position.
    assert_eq!(lines[0], "W:WK32:BK26 1 9 32-27 2 32-27:1:9 32-28:0:-1");
    assert!(lines[1].starts_with("B:WK32:BK26 0 -1 "), "{}", lines[1]);
    // A finished game is answered as a value, alike whether the side to move is blocked or
    // has no pieces: lost in 0 plies, no best move, no moves; facing no pieces, won in 0.
    assert_eq!(lines[13], "W:W29:B25,22 -1 0 - 0");
    assert_eq!(lines[14], "W:W:B25,22 -1 0 - 0");
    assert_eq!(lines[15], "W:W18:B 1 0 - 0");
}

#[test]
fn cpp_program_probes_from_8_threads_and_agrees_with_rust() {
    let exe = compile("probe_threads.cpp", "dtb-probe-threads-cpp");
    let out = Command::new(&exe)
        .arg(tables())
        .arg("english")
        .args(FENS)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tb = Tablebase::open(tables(), Rules::ENGLISH).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), FENS.len(), "{stdout}");
    for (f, line) in FENS.iter().zip(&lines) {
        // The C++ program prints the first four fields of the C program's line.
        let want = expected(&tb, f);
        let want: Vec<&str> = want.split(' ').take(4).collect();
        let got: Vec<&str> = line.split(' ').take(4).collect();
        assert_eq!(got, want, "C++ and Rust disagree on {f}");
    }
    assert_eq!(lines[0], "W:WK32:BK26 1 9 32-27");
}

/// A copy of the table files with the 2-king slice broken: its WLD table truncated, its DTW
/// table with one payload byte changed.
fn corrupt_copy() -> tempfile::TempDir {
    let copy = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(tables()).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if p.is_file() && !name.starts_with('.') {
            std::fs::copy(&p, copy.path().join(&name)).unwrap();
        }
    }
    let wld = copy.path().join("english-0101.wld");
    let bytes = std::fs::read(&wld).unwrap();
    std::fs::write(&wld, &bytes[..bytes.len() / 2]).unwrap();
    let dtw = copy.path().join("english-0101.dtw");
    let mut bytes = std::fs::read(&dtw).unwrap();
    let at = dtb_probe::internal::format::HEADER_LEN
        + (bytes.len() - dtb_probe::internal::format::HEADER_LEN) / 2;
    bytes[at] ^= 0x5a;
    std::fs::write(&dtw, &bytes).unwrap();
    copy
}

#[test]
fn c_entry_points_answer_bad_arguments_with_a_status_and_a_message() {
    let exe = compile("bad_args.c", "dtb-bad-args-c");
    let empty = tempfile::tempdir().unwrap();
    std::fs::write(empty.path().join("README"), "no tables here").unwrap();
    let corrupt = corrupt_copy();
    let out = Command::new(&exe)
        .arg(tables())
        .arg(empty.path())
        .arg(corrupt.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "exit {:?}\n{}\n{stdout}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    let line = |case: &str| -> &str {
        stdout
            .lines()
            .find(|l| l.split(' ').next() == Some(case))
            .unwrap_or_else(|| panic!("case {case} not run:\n{stdout}"))
    };
    // The messages say what was wrong.
    for (case, words) in [
        ("open_null_dir", "dir is NULL"),
        ("open_unknown_variant", "unknown variant \"chess\""),
        ("open_variant_not_utf8", "not UTF-8"),
        ("open_missing_dir", "no such directory"),
        ("open_dir_without_tables", "no english tables"),
        ("probe_garbage_fen", "FEN \"hello\""),
        ("probe_missing_table", "no wld table for slice"),
        ("probe_game_over", "board is empty"),
        ("best_short_len", "6 needed"),
        ("moves_zero_cap", "2 legal moves"),
        ("bitboard_off_board", "bit 40"),
        ("corrupt_truncated_wld", "english-0101.wld"),
        ("corrupt_verify", "english-0101"),
        ("open_count_zero", "count limit 0"),
        ("dtc_negative_counter", "counter is -1"),
        ("dtc_missing_table", "no dtc table"),
    ] {
        assert!(line(case).contains(words), "{case}: {}", line(case));
    }
    assert!(stdout.ends_with("0 failed\n"), "{stdout}");
}

/// A directory whose name is not UTF-8 opens (paths are bytes on Unix); the same through the
/// Rust-side entry points, called as C would.
#[cfg(target_os = "linux")]
#[test]
fn a_directory_named_in_bytes_that_are_not_utf8_opens() {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let parent = tempfile::tempdir().unwrap();
    let name = std::ffi::OsStr::from_bytes(b"tables-\xff\xfe");
    let dir = parent.path().join(name);
    std::fs::create_dir(&dir).unwrap();
    for m in ["0101", "0100", "0001"] {
        for ext in ["wld", "dtw"] {
            let f = format!("english-{m}.{ext}");
            if tables().join(&f).exists() {
                std::fs::copy(tables().join(&f), dir.join(&f)).unwrap();
            }
        }
    }
    let c_dir = CString::new(dir.as_os_str().as_bytes()).unwrap();
    let mut tb = std::ptr::null_mut();
    // SAFETY: valid NUL-terminated strings and a writable out pointer.
    let status = unsafe { dtb::dtb_open(c_dir.as_ptr(), c"english".as_ptr(), 1 << 20, &mut tb) };
    assert_eq!(status, dtb::DTB_OK);
    let mut v = dtb::dtb_value::default();
    // SAFETY: an open handle, a NUL-terminated FEN, a writable value.
    let status = unsafe { dtb::dtb_probe_fen(tb, c"W:WK32:BK26".as_ptr(), &mut v) };
    assert_eq!(status, dtb::DTB_OK);
    assert_eq!((v.wld, v.dtw), (1, 9));
    // SAFETY: the handle from dtb_open, closed once.
    unsafe { dtb::dtb_close(tb) };
}

/// A directory of WLD tables alone: the full probe answers the outcome with `dtw` -1, from
/// FEN, bitboards and KingsRow's layout alike; a best move still comes (from the WLD tables).
#[test]
fn a_wld_only_directory_answers_outcomes_with_no_distance() {
    let dir = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(tables()).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "wld") {
            std::fs::copy(&p, dir.path().join(p.file_name().unwrap())).unwrap();
        }
    }
    let c_dir = std::ffi::CString::new(dir.path().to_str().unwrap()).unwrap();
    let mut tb = std::ptr::null_mut();
    // SAFETY: valid NUL-terminated strings and a writable out pointer.
    let s = unsafe { dtb::dtb_open(c_dir.as_ptr(), c"english".as_ptr(), 1 << 20, &mut tb) };
    assert_eq!(s, dtb::DTB_OK);
    let mut v = dtb::dtb_value::default();
    // SAFETY: an open handle, a NUL-terminated FEN, a writable value.
    let s = unsafe { dtb::dtb_probe_fen(tb, c"W:WK32:BK26".as_ptr(), &mut v) };
    assert_eq!((s, v.wld, v.dtw), (dtb::DTB_OK, 1, -1));
    let pos = dtb::dtb_position {
        white: 1 << 31,
        black: 1 << 25,
        kings: 1 << 31 | 1 << 25,
        side_to_move: dtb::DTB_WHITE,
    };
    let mut v = dtb::dtb_value::default();
    // SAFETY: an open handle, a valid position, a writable value.
    let s = unsafe { dtb::dtb_probe(tb, &pos, 0, &mut v) };
    assert_eq!((s, v.wld, v.dtw), (dtb::DTB_OK, 1, -1));
    let mut v = dtb::dtb_value::default();
    // SAFETY: an open handle, a writable value. Black to move: EGDB_BLACK (0).
    let s =
        unsafe { dtb::dtb_probe_kingsrow(tb, 1 << 25, 1 << 31, 1 << 31 | 1 << 25, 0, 0, &mut v) };
    assert_eq!((s, v.wld, v.dtw), (dtb::DTB_OK, 0, -1));
    let mut buf = [0 as std::ffi::c_char; dtb::DTB_MOVE_TEXT];
    // SAFETY: an open handle, a NUL-terminated FEN, a buffer of its length.
    let s =
        unsafe { dtb::dtb_best_move_fen(tb, c"W:WK32:BK26".as_ptr(), buf.as_mut_ptr(), buf.len()) };
    assert_eq!(s, dtb::DTB_OK);
    // SAFETY: dtb_best_move_fen wrote a NUL-terminated string into buf.
    let best = unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) };
    assert_eq!(best.to_str().unwrap(), "32-27", "the only winning move");
    // SAFETY: the handle from dtb_open, closed once.
    unsafe { dtb::dtb_close(tb) };
}

/// The message of the last failed call, as C reads it.
fn last_error() -> String {
    // SAFETY: dtb_last_error returns a NUL-terminated string, never NULL.
    unsafe { std::ffi::CStr::from_ptr(dtb::dtb_last_error()) }
        .to_string_lossy()
        .into_owned()
}

/// Opening a directory without tables of a rule set that is no preset hints at the build
/// command with `--variant` as `dtb gen` reads it (`english,blocked=majority`, not the
/// table-file name `english+blocked=majority`, which `dtb gen` refuses); and a 10 MB FEN is
/// quoted in the error by its first 40 characters and its length, never whole.
#[test]
fn errors_hint_a_working_command_and_never_echo_unbounded_input() {
    use std::ffi::CString;
    let empty = tempfile::tempdir().unwrap();
    let c_dir = CString::new(empty.path().to_str().unwrap()).unwrap();
    let mut tb = std::ptr::null_mut();
    // SAFETY: valid NUL-terminated strings and a writable out pointer.
    let status = unsafe {
        dtb::dtb_open(
            c_dir.as_ptr(),
            c"english,blocked=majority".as_ptr(),
            1 << 20,
            &mut tb,
        )
    };
    assert_eq!(status, dtb::DTB_ERR_DIRECTORY);
    let msg = last_error();
    assert!(
        msg.contains("no english+blocked=majority tables")
            && msg.contains("`dtb gen --variant english,blocked=majority --out DIR`"),
        "{msg}"
    );

    let c_dir = CString::new(tables().to_str().unwrap()).unwrap();
    // SAFETY: as above.
    let status = unsafe { dtb::dtb_open(c_dir.as_ptr(), c"english".as_ptr(), 1 << 20, &mut tb) };
    assert_eq!(status, dtb::DTB_OK);
    let big = format!("W:W{}:B2", "7".repeat(10 << 20));
    let c_fen = CString::new(big.as_str()).unwrap();
    let mut v = dtb::dtb_value::default();
    // SAFETY: an open handle, a NUL-terminated FEN, a writable value.
    let status = unsafe { dtb::dtb_probe_fen(tb, c_fen.as_ptr(), &mut v) };
    assert_eq!(status, dtb::DTB_ERR_FEN);
    let msg = last_error();
    assert!(msg.len() < 300, "{} bytes: {msg:.300}", msg.len());
    assert!(
        msg.contains(&format!("{:?}... ({} bytes)", &big[..40], big.len())),
        "{msg}"
    );
    let huge_variant = CString::new("x".repeat(10 << 20)).unwrap();
    let mut other = std::ptr::null_mut();
    // SAFETY: as above.
    let status =
        unsafe { dtb::dtb_open(c_dir.as_ptr(), huge_variant.as_ptr(), 1 << 20, &mut other) };
    assert_eq!(status, dtb::DTB_ERR_VARIANT);
    assert!(last_error().len() < 600, "{:.300}", last_error());
    // SAFETY: the handle from dtb_open, closed once.
    unsafe { dtb::dtb_close(tb) };
}

/// `probe_dtc DIR VARIANT FEN COUNTER` run to its end: its standard output.
fn probe_dtc(exe: &std::path::Path, variant: &str, f: &str, counter: &str) -> String {
    let out = Command::new(exe)
        .arg(dtc_tables())
        .args([variant, f, counter])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

/// The C program of values under a count rule (README's): a cursed win, a win the counter
/// turns into a draw, each move under the rule as the Rust API gives it; a counter at the
/// limit or negative is `DTB_ERR_COUNTER`, DTC tables opened under another profile
/// `DTB_ERR_TABLE`, a bad `count=` `DTB_ERR_VARIANT`.
#[test]
fn c_program_probes_under_a_count_rule_and_agrees_with_rust() {
    let exe = compile("probe_dtc.c", "dtb-probe-dtc-c");
    let variant = dtb_probe::Variant::parse("english,count=20").unwrap();
    let tb = Tablebase::open_variant(dtc_tables(), &variant).unwrap();
    let counted = "english,count=20";
    let out = probe_dtc(&exe, counted, "W:WK1,K19:BK27", "0");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0], "cursed-win: dtc 21, limit 20; at counter 0: draw",
        "{out}"
    );
    assert_eq!(
        lines[1], "1-6 zeroing 0 after: loss dtc 20 counter 1: draw",
        "{out}"
    );
    for (f, c) in [
        ("W:WK1,K19:BK27", 0),
        ("W:WK2,K6:BK1", 1),
        ("W:WK2,K6:BK1", 2),
        ("B:W22,K1:B18,K3", 5),
    ] {
        let out = probe_dtc(&exe, counted, f, &c.to_string());
        let pos = fen::parse(f, tb.rules()).unwrap();
        let d = tb.probe_dtc(&pos, c).unwrap();
        let first = out.lines().next().unwrap();
        let want = format!(
            "{}: dtc {}, limit 20; at counter {c}: {}",
            d.category,
            d.plies.map_or(-1, i32::from),
            d.result
        );
        assert_eq!(first, want, "{f} at {c}");
        let ranked = tb.probe_moves_dtc(&pos, c).unwrap();
        let mut all = Vec::new();
        legal_moves(tb.rules(), &pos, Counting::Unique, &mut all);
        for (line, r) in out.lines().skip(1).zip(&ranked) {
            let a = &r.after;
            let want = format!(
                "{} zeroing {} after: {} dtc {} counter {}: {}",
                pdn_in_for(tb.rules(), &r.mv, &all),
                u8::from(r.zeroing),
                a.category,
                a.plies.map_or(-1, i32::from),
                a.counter,
                a.result
            );
            assert_eq!(line, want, "{f} at {c}");
        }
        assert_eq!(out.lines().count(), ranked.len() + 1, "{out}");
    }
    let out = probe_dtc(&exe, counted, "W:WK2,K6:BK1", "3");
    assert!(
        out.starts_with("cursed-win") || out.contains("at counter 3: draw"),
        "{out}"
    );
    for (variant, counter, words) in [
        (counted, "20", "error DTB_ERR_COUNTER dtb_probe_dtc_fen: counter 20 is at or over the limit of 20 plies"),
        (counted, "-1", "error DTB_ERR_COUNTER dtb_probe_dtc_fen: counter is -1"),
        (counted, "70000", "error DTB_ERR_COUNTER dtb_probe_dtc_fen: counter 70000 is over every count limit"),
        ("english", "0", "error DTB_ERR_TABLE dtb_probe_dtc_fen: "),
        ("english,count=0", "0", "error DTB_ERR_VARIANT dtb_open: variant \"english,count=0\": count limit 0"),
        ("english,count=ten", "0", "error DTB_ERR_VARIANT"),
    ] {
        let out = probe_dtc(&exe, variant, "W:WK2,K6:BK1", counter);
        assert!(out.starts_with(words), "{variant} {counter}: {out}");
    }
    let out = probe_dtc(&exe, "english", "W:WK2,K6:BK1", "0");
    assert!(out.contains("another count profile (general:20)"), "{out}");
    // Tables without DTC values: a missing table, named.
    let out = Command::new(&exe)
        .arg(tables())
        .args(["english", "W:WK2,K6:BK1", "0"])
        .output()
        .unwrap();
    let out = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.starts_with("error DTB_ERR_MISSING_TABLE") && out.contains("no dtc table"),
        "{out}"
    );
}
