//! `dtb serve` against a running server: the real binary on a free port over English 2-4
//! tables built here, asked over plain TCP (so that raw request targets reach it unchanged).
//! Values are checked against the library; every error status is provoked. The browser test
//! drives headless Chromium over WebDriver (chromedriver): it clicks a piece and its target
//! square on the board and checks that the move list becomes the new position's.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use base64::Engine;
use dtb_gen::build::{self, Plan, Quiet};
use dtb_probe::{fen, Rules, Tablebase, Wld};
use serde_json::{json, Value};

const DTB: &str = env!("CARGO_BIN_EXE_dtb");

fn build_tables(rules: Rules, pieces: u32, name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    let plan = Plan::new(rules, pieces, &dir).expect("plan");
    build::run(&plan, &Quiet).expect("build");
    dir
}

/// English 2-4 tables, built once per run.
fn english() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| build_tables(Rules::ENGLISH, 4, "dtb-serve-english-4"))
}

/// Russian 2-3 tables, built once per run (a second variant; its 5-piece capture positions
/// that take two pieces are answered from them too).
fn russian() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| build_tables(Rules::by_name("russian").unwrap(), 3, "dtb-serve-russian-3"))
}

/// International (10x10) 2-3 tables, built once per run.
fn international() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| build_tables(Rules::INTERNATIONAL, 3, "dtb-serve-international-3"))
}

fn two_variant_server() -> Server {
    Server::start(&[
        "--dir",
        english().to_str().unwrap(),
        "--variant",
        "english",
        "--dir",
        russian().to_str().unwrap(),
        "--variant",
        "russian",
    ])
}

/// A copy of the table files of `dir`.
fn copy_of(dir: &Path) -> tempfile::TempDir {
    let copy = tempfile::tempdir().unwrap();
    copy_tables(dir, copy.path());
    copy
}

/// Copy the table files of `from` into the directory `to`.
fn copy_tables(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        if p.is_file() && !p.file_name().unwrap().to_string_lossy().starts_with('.') {
            std::fs::copy(&p, to.join(p.file_name().unwrap())).unwrap();
        }
    }
}

/// `dtb serve ARGS` run to its end (it fails before listening): exit code and standard error.
fn serve_fails(args: &[&str], cwd: Option<&Path>) -> (Option<i32>, String) {
    let mut cmd = Command::new(DTB);
    cmd.arg("serve")
        .args(args)
        .args(["--listen", "127.0.0.1:0"]);
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    let out = cmd.stdin(Stdio::null()).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A `dtb serve` process; killed when dropped. Its standard error goes to `log`.
struct Server {
    child: Child,
    addr: String,
    log: PathBuf,
    _logdir: tempfile::TempDir,
}

impl Server {
    fn start(args: &[&str]) -> Server {
        let mut cmd = Command::new(DTB);
        cmd.arg("serve")
            .args(args)
            .args(["--listen", "127.0.0.1:0"]);
        Server::launch(cmd)
    }

    /// Run `cmd` (a `dtb serve` with its `--listen`) and read the address it prints.
    fn launch(mut cmd: Command) -> Server {
        let logdir = tempfile::tempdir().unwrap();
        let log = logdir.path().join("stderr.log");
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line
            .split("http://")
            .nth(1)
            .and_then(|r| r.split('/').next())
            .unwrap_or_else(|| {
                panic!(
                    "no address in {line:?}; stderr: {}",
                    std::fs::read_to_string(&log).unwrap_or_default()
                )
            })
            .to_string();
        Server {
            child,
            addr,
            log,
            _logdir: logdir,
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap()
    }

    fn get(&self, target: &str) -> Reply {
        http(&self.addr, "GET", target, &[], "")
    }

    fn api(&self, target: &str) -> (u16, Value) {
        let r = self.get(target);
        (r.status, r.json())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "status {} body not JSON ({e}): {}",
                self.status,
                String::from_utf8_lossy(&self.body)
            )
        })
    }
}

/// One HTTP/1.1 request on its own connection (`Connection: close`), the target sent as is.
fn http(addr: &str, method: &str, target: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    try_http(addr, method, target, headers, body)
        .unwrap_or_else(|e| panic!("{method} {target} on {addr}: {e}"))
}

/// `http`, with a failed connection, a reset or a cut reply as an error (a server that is still
/// starting, such as chromedriver, may accept a connection and reset it).
fn try_http(
    addr: &str,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> std::io::Result<Reply> {
    let cut = |what: String| std::io::Error::new(std::io::ErrorKind::UnexpectedEof, what);
    let mut s = TcpStream::connect(addr)?;
    s.set_read_timeout(Some(Duration::from_secs(60)))?;
    let mut req = format!("{method} {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    if !body.is_empty() || method == "POST" {
        req.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        ));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes())?;
    // Read up to the end of the header, then the body by its length (chromedriver keeps the
    // connection open), by chunks, or to the end of the stream.
    let mut raw = Vec::new();
    let mut buf = [0u8; 8192];
    let split = loop {
        if let Some(p) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            break p;
        }
        let n = s.read(&mut buf)?;
        if n == 0 {
            return Err(cut(format!(
                "no header end in {:?}",
                String::from_utf8_lossy(&raw)
            )));
        }
        raw.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let mut lines = head.lines();
    let status: u16 = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let find = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    let mut body = raw[split + 4..].to_vec();
    if let Some(len) = find("content-length") {
        let len: usize = len.parse().unwrap();
        while body.len() < len {
            let n = s.read(&mut buf)?;
            if n == 0 {
                return Err(cut(format!("body cut at {} of {len} bytes", body.len())));
            }
            body.extend_from_slice(&buf[..n]);
        }
        body.truncate(len);
    } else if find("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        while !body.ends_with(b"0\r\n\r\n") {
            let n = s.read(&mut buf)?;
            if n == 0 {
                return Err(cut("chunked body cut".to_string()));
            }
            body.extend_from_slice(&buf[..n]);
        }
        body = dechunk(&body);
    } else if method != "HEAD" && status != 204 && status != 304 {
        s.read_to_end(&mut body)?;
    }
    Ok(Reply {
        status,
        headers,
        body,
    })
}

fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let eol = raw.windows(2).position(|w| w == b"\r\n").unwrap();
        let size_text = String::from_utf8_lossy(&raw[..eol]).to_string();
        let size = usize::from_str_radix(size_text.split(';').next().unwrap().trim(), 16).unwrap();
        raw = &raw[eol + 2..];
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&raw[..size]);
        raw = &raw[size + 2..];
    }
}

/// A FEN as a query value (PDN FEN needs only `:` escaped, and `,` is kept as is).
fn q(fen: &str) -> String {
    fen.replace(':', "%3A")
}

fn english_server() -> Server {
    Server::start(&["--dir", english().to_str().unwrap(), "--variant", "english"])
}

/// The position's value and every move's value for its mover (lichess's `category`: the
/// position after it), as the library gives them.
#[test]
fn positions_and_moves_have_the_library_values() {
    let server = english_server();
    let rules = Rules::ENGLISH;
    let tb = Tablebase::open(english(), rules).unwrap();

    let (status, v) = server.api(&format!("/api/v1/english?fen={}", q("W:WK32:BK26")));
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["fen"], "W:WK32:BK26");
    assert_eq!(v["wld"], "win");
    assert_eq!(v["category"], "win");
    assert_eq!(v["dtw"], 9, "README: win in 9 plies");
    assert_eq!(v["side_to_move"], "white");
    let moves = v["moves"].as_array().unwrap();
    assert_eq!(moves[0]["move"], "32-27", "README: best 32-27");
    // The best move wins in 9 for White, the mover; lichess's category is the position
    // after it, for Black: a loss.
    assert_eq!(moves[0]["wld"], "win");
    assert_eq!(moves[0]["dtw"], 9);
    assert_eq!(moves[0]["category"], "loss");
    assert_eq!(moves[0]["fen_after"], "B:WK27:BK26");
    assert_eq!(moves[0]["from"], 32);
    assert_eq!(moves[0]["to"], 27);
    // Every legal move is there, each with the library's value of the position after it,
    // reversed and one ply longer for the mover.
    let pos = fen::parse("W:WK32:BK26", &rules).unwrap();
    let mut legal = Vec::new();
    dtb_probe::movegen::legal_moves(
        &rules,
        &pos,
        dtb_probe::movegen::Counting::Unique,
        &mut legal,
    );
    assert_eq!(moves.len(), legal.len());
    for m in moves {
        let after = fen::parse(m["fen_after"].as_str().unwrap(), &rules).unwrap();
        let d = tb.probe_dtw(&after).unwrap();
        assert_eq!(m["category"], d.wld.as_str(), "{m}");
        let mover = match d.wld {
            Wld::Win => "loss",
            Wld::Loss => "win",
            Wld::Draw => "draw",
        };
        assert_eq!(m["wld"], mover, "{m}");
        let plies = if d.wld == Wld::Draw {
            None
        } else {
            d.plies.map(|p| p + 1)
        };
        assert_eq!(m["dtw"], json!(plies), "{m}");
    }

    // The same position with Black to move: a draw, no distance.
    let (status, v) = server.api(&format!("/api/v1/english?fen={}", q("B:WK32:BK26")));
    assert_eq!(status, 200);
    assert_eq!((v["wld"].as_str(), &v["dtw"]), (Some("draw"), &Value::Null));
    assert!(v["moves"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m["wld"] == "draw"));

    // A capture position with men: the answer equals the library's for a sample of 3- and
    // 4-piece positions, including the order (best first: the first move's value for the
    // mover is the position's value).
    for f in [
        "W:W22:B18",
        "B:W22:B18",
        "W:W21,K30:B9,K5",
        "B:W23,24:B12,K3",
    ] {
        let (status, v) = server.api(&format!("/api/v1/english?fen={}", q(f)));
        assert_eq!(status, 200, "{f}: {v}");
        let pos = fen::parse(f, &rules).unwrap();
        let d = tb.probe_dtw(&pos).unwrap();
        assert_eq!(v["wld"], d.wld.as_str(), "{f}");
        let ranked = tb.probe_moves(&pos).unwrap();
        let names: Vec<&str> = v["moves"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["move"].as_str().unwrap())
            .collect();
        let want: Vec<String> = ranked
            .iter()
            .map(|r| r.mv.to_pdn_for(&rules, false))
            .collect();
        assert_eq!(names, want, "{f}");
    }

    // The mainline: 9 plies to the end, each step one ply nearer, White the winner; each
    // step's value is its mover's (win in 9, loss in 8, ...).
    let (status, v) = server.api(&format!(
        "/api/v1/english/mainline?fen={}",
        q("W:WK32:BK26")
    ));
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["winner"], "white");
    assert_eq!(v["cut"], false);
    let line = v["mainline"].as_array().unwrap();
    assert_eq!(line.len(), 9);
    assert_eq!(line[0]["move"], "32-27");
    for (i, step) in line.iter().enumerate() {
        assert_eq!(step["dtw"], json!(9 - i), "{step}");
        assert_eq!(step["wld"], if i % 2 == 0 { "win" } else { "loss" });
        assert_eq!(step["category"], if i % 2 == 0 { "loss" } else { "win" });
    }
    // A drawn mainline is cut after 40 plies.
    let (_, v) = server.api(&format!(
        "/api/v1/english/mainline?fen={}",
        q("B:WK32:BK26")
    ));
    assert_eq!(v["winner"], Value::Null);
    assert_eq!(v["cut"], true);
    assert_eq!(v["mainline"].as_array().unwrap().len(), 40);
}

/// Issue 36: a finished game is answered one way, a value with `"game_over": true` and no
/// moves, whether the side to move is blocked (`W:W29:B25,22`) or has no pieces
/// (`W:W:B25,22`): a loss in 0 plies; facing no pieces (`W:W18:B`), a win in 0 plies. The
/// mainline from each is empty.
#[test]
fn a_side_with_no_pieces_is_answered_as_a_blocked_side() {
    let server = english_server();
    for (f, wld) in [
        ("W:W29:B25,22", "loss"),
        ("W:W:B25,22", "loss"),
        ("W:W18:B", "win"),
        ("B:W:B25,22", "win"),
    ] {
        let (status, v) = server.api(&format!("/api/v1/english?fen={}", q(f)));
        assert_eq!(status, 200, "{f}: {v}");
        assert_eq!(v["wld"], wld, "{f}: {v}");
        assert_eq!(v["category"], wld, "{f}: {v}");
        assert_eq!(v["dtw"], 0, "{f}: {v}");
        assert_eq!(v["game_over"], true, "{f}: {v}");
        assert_eq!(v["moves"], json!([]), "{f}: {v}");
        let (status, v) = server.api(&format!("/api/v1/english/mainline?fen={}", q(f)));
        assert_eq!(status, 200, "{f}: {v}");
        assert_eq!((&v["wld"], &v["dtw"]), (&json!(wld), &json!(0)), "{f}: {v}");
        assert_eq!(v["mainline"], json!([]), "{f}: {v}");
    }
}

/// Issue 36: one convention for a move's value: the HTTP API's moves, `dtb probe --moves
/// --json` and the library's [`dtb_probe::RankedMove::for_mover`] give every move of a
/// position the same value, the mover's (the C and Python tests hold their surfaces to the
/// library's `for_mover` too).
#[test]
fn a_moves_value_is_the_movers_in_the_cli_and_the_api() {
    let server = english_server();
    let rules = Rules::ENGLISH;
    let tb = Tablebase::open(english(), rules).unwrap();
    let fens = [
        "W:WK32:BK26",
        "B:WK32:BK26",
        "W:W22,K1:B18,K3",
        "B:W22:B18",
        "W:W21,K30:B9,K5",
        "B:WK1,19:BK7",
    ];
    let out = Command::new(DTB)
        .args(["probe", "--json", "--moves", "--dir"])
        .arg(english())
        .args(fens)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let cli: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(cli.len(), fens.len());
    for (f, c) in fens.iter().zip(&cli) {
        let (status, v) = server.api(&format!("/api/v1/english?fen={}", q(f)));
        assert_eq!(status, 200, "{f}: {v}");
        let pos = fen::parse(f, &rules).unwrap();
        let mut all = Vec::new();
        dtb_probe::movegen::legal_moves(
            &rules,
            &pos,
            dtb_probe::movegen::Counting::Unique,
            &mut all,
        );
        let want: Vec<(String, String, Value)> = tb
            .probe_moves(&pos)
            .unwrap()
            .iter()
            .map(|r| {
                let m = r.for_mover();
                let plies = if m.wld == Wld::Draw { None } else { m.plies };
                (
                    dtb_probe::movegen::pdn_in_for(&rules, &r.mv, &all),
                    m.wld.as_str().to_string(),
                    json!(plies),
                )
            })
            .collect();
        let of = |moves: &Value| -> Vec<(String, String, Value)> {
            moves
                .as_array()
                .unwrap()
                .iter()
                .map(|m| {
                    (
                        m["move"].as_str().unwrap().to_string(),
                        m["wld"].as_str().unwrap().to_string(),
                        m["dtw"].clone(),
                    )
                })
                .collect()
        };
        assert!(!want.is_empty(), "{f}");
        assert_eq!(of(&v["moves"]), want, "HTTP, {f}");
        assert_eq!(of(&c["moves"]), want, "CLI, {f}");
    }
}

/// Issue 36: a line's steps carry the mover's value on every surface, as its moves do:
/// `dtb probe --line --json` and the API's mainline give the same move, `wld`, `dtw` (9, 8,
/// ... for a win in 9; a draw without distance) and position after each ply.
#[test]
fn a_lines_values_are_the_movers_in_the_cli_and_the_api() {
    let server = english_server();
    let fens = [
        "W:WK32:BK26",
        "B:WK32:BK26",
        "W:W22,K1:B18,K3",
        "B:WK1,19:BK7",
    ];
    let out = Command::new(DTB)
        .args(["probe", "--json", "--line", "--dir"])
        .arg(english())
        .args(fens)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let cli: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(cli.len(), fens.len());
    let steps = |line: &Value, fen_key: &str| -> Vec<(String, String, Value, String)> {
        line.as_array()
            .unwrap()
            .iter()
            .map(|m| {
                (
                    m["move"].as_str().unwrap().to_string(),
                    m["wld"].as_str().unwrap().to_string(),
                    m["dtw"].clone(),
                    m[fen_key].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    for (f, c) in fens.iter().zip(&cli) {
        let (status, v) = server.api(&format!("/api/v1/english/mainline?fen={}", q(f)));
        assert_eq!(status, 200, "{f}: {v}");
        let http = steps(&v["mainline"], "fen_after");
        assert!(!http.is_empty(), "{f}");
        assert_eq!(steps(&c["line"], "fen"), http, "{f}");
        assert_eq!(c["cut"], v["cut"], "{f}");
    }
    let win: Vec<Value> = cli[0]["line"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["dtw"].clone())
        .collect();
    assert_eq!(win, (1..=9).rev().map(|d| json!(d)).collect::<Vec<_>>());
    assert_eq!(cli[0]["line"][0]["move"], "32-27");
    assert_eq!(cli[0]["line"][1]["wld"], "loss");
    assert!(cli[1]["line"]
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s["wld"] == "draw" && s["dtw"].is_null()));
}

#[test]
fn answers_are_cacheable_with_cors() {
    let server = english_server();
    let target = format!("/api/v1/english?fen={}", q("W:WK32:BK26"));
    let r = http(
        &server.addr,
        "GET",
        &target,
        &[("Origin", "http://example.invalid")],
        "",
    );
    assert_eq!(r.status, 200);
    assert_eq!(r.header("access-control-allow-origin"), Some("*"));
    assert!(r.header("cache-control").unwrap().contains("max-age=86400"));
    assert!(r
        .header("content-type")
        .unwrap()
        .starts_with("application/json"));
    // A CORS preflight is answered.
    let r = http(
        &server.addr,
        "OPTIONS",
        &target,
        &[
            ("Origin", "http://example.invalid"),
            ("Access-Control-Request-Method", "GET"),
        ],
        "",
    );
    assert!(r.status == 200 || r.status == 204, "{}", r.status);
    assert!(r
        .header("access-control-allow-methods")
        .unwrap()
        .contains("GET"));

    // The variants list draws the board: 32 squares, square 1 on the top row, column 1.
    let (status, v) = server.api("/api/v1/variants");
    assert_eq!(status, 200);
    let e = &v["variants"][0];
    assert_eq!(
        (e["name"].as_str(), e["board"].as_u64()),
        (Some("english"), Some(8))
    );
    assert_eq!(e["max_pieces"], 4);
    let squares = e["squares"].as_array().unwrap();
    assert_eq!(squares.len(), 32);
    assert_eq!(
        squares[0],
        json!({"number": 1, "name": "b8", "row": 0, "col": 1})
    );
    assert_eq!(
        squares[31],
        json!({"number": 32, "name": "g1", "row": 7, "col": 6})
    );
    assert_eq!(
        (&e["notation"], &e["start"]),
        (
            &json!("numeric"),
            &json!("B:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12")
        )
    );

    // The page and its assets come from the binary.
    let r = server.get("/");
    assert_eq!(r.status, 200);
    assert!(r.header("content-type").unwrap().starts_with("text/html"));
    let html = String::from_utf8(r.body).unwrap();
    assert!(html.contains("<script src=\"/app.js\"></script>"));
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "no CDN"
    );
    for (path, kind) in [("/app.js", "text/javascript"), ("/style.css", "text/css")] {
        let r = server.get(path);
        assert_eq!(r.status, 200, "{path}");
        assert!(
            r.header("content-type").unwrap().starts_with(kind),
            "{path}"
        );
    }
}

#[test]
fn every_error_status() {
    let copy = copy_of(english());
    // Damage the King v King distance table: its positions fail, others do not.
    let victim = copy.path().join("english-0101.dtw");
    let mut bytes = std::fs::read(&victim).unwrap();
    let n = bytes.len();
    for b in &mut bytes[n / 2..n / 2 + 16] {
        *b ^= 0x5a;
    }
    std::fs::write(&victim, &bytes).unwrap();
    let server = Server::start(&["--dir", copy.path().to_str().unwrap()]);
    let err = |target: &str, status: u16, words: &str| {
        let (s, v) = server.api(target);
        assert_eq!(s, status, "{target}: {v}");
        assert_eq!(v["status"], status, "{target}: {v}");
        let msg = v["error"].as_str().unwrap();
        assert!(msg.contains(words), "{target}: {msg:?} lacks {words:?}");
        msg.to_string()
    };
    // 400: no FEN, a malformed FEN, an illegal position, the empty board, too long a FEN.
    err("/api/v1/english", 400, "missing query parameter fen");
    err("/api/v1/english?fen=", 400, "missing query parameter fen");
    err(
        &format!("/api/v1/english?fen={}", q("W:W33:B1")),
        400,
        "square 33",
    );
    err(
        &format!("/api/v1/english?fen={}", q("X:W22:B1")),
        400,
        "side to move",
    );
    err("/api/v1/english?fen=W22B1", 400, "bad FEN");
    err(
        &format!("/api/v1/english?fen={}", q("W:W1:B20")),
        400,
        "illegal position",
    );
    err(
        &format!("/api/v1/english?fen={}", q("W:W:B")),
        400,
        "board is empty",
    );
    err(
        &format!("/api/v1/english?fen={}", "1".repeat(600)),
        400,
        "longer than 512",
    );
    err(
        &format!("/api/v1/english/mainline?fen={}", q("W:W33:B1")),
        400,
        "square 33",
    );
    // 404: a position with no table, an unknown variant or page, paths that try to leave.
    err(
        &format!("/api/v1/english?fen={}", q("W:W29,30,31:B1,2")),
        404,
        "no wld table for slice",
    );
    err(
        &format!("/api/v1/international?fen={}", q("W:WK32:BK26")),
        404,
        "no tables served for variant \"international\"",
    );
    err("/nothing-here", 404, "no such page");
    for target in [
        "/../../../../etc/passwd",
        "/api/v1/..%2F..%2F..%2Fetc%2Fpasswd?fen=W",
        "/api/v1/english/../../../etc/passwd",
        "/static/%2e%2e/%2e%2e/etc/passwd",
        "/english-0101.wld",
    ] {
        let r = server.get(target);
        assert_eq!(r.status, 404, "{target}");
        let body = String::from_utf8_lossy(&r.body);
        assert!(!body.contains("root:"), "{target}");
    }
    // 414: a request target past 2048 bytes.
    let r = server.get(&format!("/api/v1/english?fen={}", "1".repeat(3000)));
    assert_eq!(r.status, 414);
    // 500: a damaged table, for its positions only; the log names the file.
    let msg = err(
        &format!("/api/v1/english?fen={}", q("W:WK32:BK26")),
        500,
        "damaged",
    );
    assert!(!msg.contains('/'), "no server path in the answer: {msg}");
    err(
        &format!("/api/v1/english/mainline?fen={}", q("W:WK32:BK26")),
        500,
        "damaged",
    );
    assert!(
        server.log().contains("english-0101.dtw"),
        "log: {}",
        server.log()
    );
    // A man against a man needs no King v King table until a man crowns.
    let (s, v) = server.api(&format!("/api/v1/english?fen={}", q("W:W31:B2")));
    assert_eq!(s, 200, "{v}");
    let (s, v) = server.api(&format!("/api/v1/english?fen={}", q("W:W22,K31:B9")));
    assert_eq!(s, 200, "{v}");
}

#[test]
fn slow_and_many_clients() {
    let server = english_server();
    // Twenty clients that send half a request header and stall.
    let stalled: Vec<TcpStream> = (0..20)
        .map(|_| {
            let mut s = TcpStream::connect(&server.addr).unwrap();
            s.write_all(b"GET /api/v1/english?fen=W%3AWK32").unwrap();
            s
        })
        .collect();
    let t = Instant::now();
    let (s, _) = server.api(&format!("/api/v1/english?fen={}", q("W:WK32:BK26")));
    assert_eq!(s, 200);
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    // Sixteen clients at once, forty requests each, all answered alike.
    let fens = ["W:WK32:BK26", "B:WK32:BK26", "W:W22:B18", "W:W21,K30:B9,K5"];
    let want: Vec<Value> = fens
        .iter()
        .map(|f| server.api(&format!("/api/v1/english?fen={}", q(f))).1)
        .collect();
    std::thread::scope(|scope| {
        for t in 0..16 {
            let (server, want) = (&server, &want);
            scope.spawn(move || {
                for i in 0..40 {
                    let k = (t + i) % fens.len();
                    let (s, v) = server.api(&format!("/api/v1/english?fen={}", q(fens[k])));
                    assert_eq!(s, 200);
                    assert_eq!(&v, &want[k]);
                }
            });
        }
    });
    drop(stalled);
}

#[test]
fn two_variants_at_once() {
    let server = two_variant_server();
    let (_, v) = server.api("/api/v1/variants");
    let names: Vec<&str> = v["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["english", "russian"]);
    let rtb = Tablebase::open(russian(), Rules::by_name("russian").unwrap()).unwrap();
    for f in ["W:WK32:BK26", "W:W22,K31:BK3"] {
        let (s, v) = server.api(&format!("/api/v1/russian?fen={}", q(f)));
        assert_eq!(s, 200, "{v}");
        let pos = fen::parse(f, rtb.rules()).unwrap();
        assert_eq!(v["wld"], rtb.probe_wld(&pos).unwrap().as_str());
    }
    // A pair count mismatch is a usage error naming both counts.
    let out = Command::new(DTB)
        .args(["serve", "--dir", "a", "--dir", "b", "--variant", "english"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("2 --dir and 1 --variant"));
}

/// English 2-4 tables with DTW and with DTC under a 20-ply count limit (`english,count=20`,
/// where cursed wins occur), built once per run.
fn english_count_20() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = build_tables(Rules::ENGLISH, 4, "dtb-serve-english-4-count-20");
        let count = dtb_probe::Variant::parse("english,count=20").unwrap().count;
        let plan = Plan::new(Rules::ENGLISH, 4, &dir)
            .expect("plan")
            .with_values(build::Values::WLD_DTC)
            .with_count(count);
        build::run(&plan, &Quiet).expect("build DTC");
        dir
    })
}

/// `counter=` under the count profile the server was started with: a cursed win (won in 21
/// plies, drawn by the 20-ply rule), a win that the counter turns into a draw, each move's
/// value under the rule as the library gives it; bad counters (negative, not a number, at
/// the limit, huge, not UTF-8) are 400 with a message saying what a counter is; `count=` in
/// the URL names the served profile or nothing; a directory without DTC tables answers a
/// counter with 404; DTC tables of another profile stop the server at start.
#[test]
fn counter_gives_values_under_the_count_rule() {
    let dir = english_count_20();
    let server = Server::start(&[
        "--dir",
        dir.to_str().unwrap(),
        "--variant",
        "english,count=20",
    ]);
    let (_, v) = server.api("/api/v1/variants");
    let e = &v["variants"][0];
    assert_eq!(
        (e["dtc"].clone(), e["count"].clone()),
        (json!(true), json!("general:20"))
    );
    assert_eq!(e["spec"], "english,count=20");

    let cursed = "W:WK1,K19:BK27";
    let (s, v) = server.api(&format!("/api/v1/english?fen={}&counter=0", q(cursed)));
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["wld"], "win");
    assert_eq!(v["dtw"], 21);
    assert_eq!(v["category"], "cursed-win");
    assert_eq!(v["result"], "draw");
    assert_eq!(v["dtc"], 21);
    assert_eq!(
        (v["counter"].clone(), v["limit"].clone()),
        (json!(0), json!(20))
    );
    // Each move as the library ranks and values it under the rule.
    let variant = dtb_probe::Variant::parse("english,count=20").unwrap();
    let tb = Tablebase::open_variant(dir, &variant).unwrap();
    let pos = fen::parse(cursed, tb.rules()).unwrap();
    let ranked = tb.probe_moves_dtc(&pos, 0).unwrap();
    let moves = v["moves"].as_array().unwrap();
    assert_eq!(moves.len(), ranked.len());
    for (m, r) in moves.iter().zip(&ranked) {
        assert_eq!(m["category"], r.after.category.as_str(), "{m}");
        assert_eq!(m["result"], r.after.result.as_str(), "{m}");
        assert_eq!(m["dtc"], json!(r.after.plies), "{m}");
        assert_eq!(m["counter"], json!(r.after.counter), "{m}");
        assert_eq!(m["zeroing"], json!(r.zeroing), "{m}");
    }
    // After 1-6 Black would lose in 20 plies from a fresh count (category `loss`, at counter
    // 0), but the counter is 1 there: a draw, as the cursed win said.
    let m = &moves[0];
    assert_eq!(
        (&m["move"], &m["category"], &m["result"]),
        (&json!("1-6"), &json!("loss"), &json!("draw")),
        "{m}"
    );
    assert_eq!(
        (&m["dtc"], &m["counter"], &m["zeroing"]),
        (&json!(20), &json!(1), &json!(false)),
        "{m}"
    );
    assert_eq!(m["wld"], "win", "the game value for the mover stays");

    // A win in 19 plies to conversion: won at counter 1, drawn at 2.
    let win = "W:WK2,K6:BK1";
    let at = |c: &str| server.api(&format!("/api/v1/english?fen={}&counter={c}", q(win)));
    let (_, v) = at("1");
    assert_eq!(
        (v["category"].as_str(), v["result"].as_str()),
        (Some("win"), Some("win"))
    );
    let (_, v) = at("2");
    assert_eq!(
        (v["category"].as_str(), v["result"].as_str()),
        (Some("win"), Some("draw"))
    );
    assert_eq!(v["counter"], 2);
    // No counter is counter 0; the URL may name the served profile.
    let (_, plain) = server.api(&format!("/api/v1/english?fen={}", q(win)));
    let (_, zero) = at("0");
    assert_eq!(plain, zero);
    let (s, _) = server.api(&format!("/api/v1/english,count=20?fen={}", q(win)));
    assert_eq!(s, 200);
    let (s, v) = server.api(&format!("/api/v1/english,count=30?fen={}", q(win)));
    assert_eq!(s, 404, "{v}");
    assert!(
        v["error"].as_str().unwrap().contains("english,count=20"),
        "{v}"
    );

    let huge = "9".repeat(1500);
    for (counter, words) in [
        ("-1", "whole number"),
        ("abc", "whole number"),
        ("", "whole number"),
        ("1.5", "whole number"),
        ("%FF%FE", "whole number"),
        ("20", "at or over the limit of 20 plies"),
        ("65535", "at or over the limit of 20 plies"),
        ("99999999999999999999", "over every count limit"),
        (huge.as_str(), "over every count limit"),
    ] {
        let (s, v) = at(counter);
        assert_eq!(s, 400, "{counter:.40}: {v}");
        let msg = v["error"].as_str().unwrap();
        assert!(
            msg.contains(words) && msg.len() < 300,
            "{counter:.40}: {msg}"
        );
    }
    let (s, v) = server.api(&format!(
        "/api/v1/english/mainline?fen={}&counter=3",
        q(win)
    ));
    assert_eq!(s, 400, "{v}");
    assert!(
        v["error"].as_str().unwrap().contains("takes no counter"),
        "{v}"
    );
    drop(server);

    // Without DTC tables a counter is 404 (and answers carry no DTC fields).
    let plain = english_server();
    let (s, v) = plain.api(&format!("/api/v1/english?fen={}&counter=0", q(win)));
    assert_eq!(s, 404, "{v}");
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains("dtb gen --values dtc"),
        "{v}"
    );
    let (_, v) = plain.api(&format!("/api/v1/english?fen={}", q(win)));
    assert_eq!(v.get("result"), None, "{v}");
    drop(plain);

    // DTC tables of another profile than the one served: refused at start.
    let (code, err) = serve_fails(
        &["--dir", dir.to_str().unwrap(), "--variant", "english"],
        None,
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("another count profile (general:20)"), "{err}");
    assert!(err.contains("--variant"), "{err}");
}

/// Brazilian 2-piece tables, built once per run.
fn brazilian() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        build_tables(
            Rules::by_name("brazilian").unwrap(),
            2,
            "dtb-serve-brazilian-2",
        )
    })
}

/// `dtb probe ARGS --json` for one position: its answer.
fn probe_json(args: &[&str]) -> Value {
    let out = Command::new(DTB)
        .arg("probe")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}: {out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Issue 36: each variant in its players' notation. Russian and Brazilian answer in
/// algebraic squares by default (`c3-b4`, `c3:e5`, FEN `W:Wc3:Bf6`) on the command line
/// (text and --json) and over HTTP, in numbers on request (`--notation numeric`,
/// `notation=numeric`); English answers in numbers, algebraic on request; a FEN in either
/// notation is read.
#[test]
fn each_variant_in_its_players_notation() {
    let server = Server::start(&[
        "--dir",
        english().to_str().unwrap(),
        "--variant",
        "english",
        "--dir",
        russian().to_str().unwrap(),
        "--variant",
        "russian",
        "--dir",
        brazilian().to_str().unwrap(),
        "--variant",
        "brazilian",
    ]);
    let (_, v) = server.api("/api/v1/variants");
    let notations: Vec<(&str, &str)> = v["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["name"].as_str().unwrap(), e["notation"].as_str().unwrap()))
        .collect();
    assert_eq!(
        notations,
        [
            ("brazilian", "algebraic"),
            ("english", "numeric"),
            ("russian", "algebraic")
        ]
    );
    assert_eq!(
        v["variants"][2]["squares"][21],
        json!({"number": 22, "name": "c3", "row": 5, "col": 2})
    );
    for (variant, dir) in [("russian", russian()), ("brazilian", brazilian())] {
        let dir = dir.to_str().unwrap();
        for f in ["W:Wc3:Bf6", "W:W22:B11"] {
            // The command line, text: `best c3-b4` (or c3-d4: both win or both draw alike).
            let out = Command::new(DTB)
                .args(["probe", "--variant", variant, "--dir", dir, f])
                .output()
                .unwrap();
            let text = String::from_utf8(out.stdout).unwrap();
            assert!(
                text.contains("  best c3-b4") || text.contains("  best c3-d4"),
                "{variant}: {text}"
            );
            let alg = probe_json(&["--variant", variant, "--dir", dir, "--moves", f]);
            let num = probe_json(&[
                "--variant",
                variant,
                "--dir",
                dir,
                "--moves",
                "--notation",
                "numeric",
                f,
            ]);
            let moves = |o: &Value, key: &str| -> Vec<String> {
                o["moves"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|m| m[key].as_str().unwrap().to_string())
                    .collect()
            };
            let mut a = moves(&alg, "move");
            a.sort();
            assert_eq!(a, ["c3-b4", "c3-d4"], "{variant}");
            let mut n = moves(&num, "move");
            n.sort();
            assert_eq!(n, ["22-17", "22-18"], "{variant}");
            assert!(
                moves(&alg, "fen").contains(&"B:Wb4:Bf6".to_string()),
                "{alg}"
            );
            assert!(
                moves(&num, "fen").contains(&"B:W17:B11".to_string()),
                "{num}"
            );
            // HTTP: the same, `notation=numeric` on request.
            let (s, h) = server.api(&format!("/api/v1/{variant}?fen={}", q(f)));
            assert_eq!(s, 200, "{h}");
            assert_eq!(
                (&h["fen"], &h["notation"]),
                (&json!("W:Wc3:Bf6"), &json!("algebraic"))
            );
            assert_eq!(
                h["moves"][0]["move"], alg["moves"][0]["move"],
                "{variant}: HTTP and CLI agree"
            );
            let (s, h) = server.api(&format!("/api/v1/{variant}?fen={}&notation=numeric", q(f)));
            assert_eq!(s, 200, "{h}");
            assert_eq!(h["fen"], "W:W22:B11");
            assert_eq!(h["moves"][0]["move"], num["moves"][0]["move"]);
            assert_eq!(h["moves"][0]["from"], 22, "squares stay numbers");
        }
        // A capture: c3:e5 (22x15).
        let f = "W:Wc3:Bd4";
        let alg = probe_json(&["--variant", variant, "--dir", dir, f]);
        assert_eq!(alg["best_move"], "c3:e5", "{variant}");
        let num = probe_json(&[
            "--variant",
            variant,
            "--dir",
            dir,
            "--notation",
            "numeric",
            f,
        ]);
        assert_eq!(num["best_move"], "22x15", "{variant}");
        let (_, h) = server.api(&format!("/api/v1/{variant}/mainline?fen={}", q(f)));
        assert_eq!(h["mainline"][0]["move"], "c3:e5");
        assert_eq!(h["mainline"][0]["fen_after"], "B:We5:B");
    }
    // English stays in numbers; algebraic on request (32 is g1, 27 f2, 26 d2).
    let e = english().to_str().unwrap();
    let num = probe_json(&["--dir", e, "--line", "W:WK32:BK26"]);
    assert_eq!(num["line"][0]["move"], "32-27");
    let alg = probe_json(&[
        "--dir",
        e,
        "--line",
        "--notation",
        "algebraic",
        "W:WKg1:BKd2",
    ]);
    assert_eq!(alg["line"][0]["move"], "g1-f2");
    assert_eq!(alg["line"][0]["fen"], "B:WKf2:BKd2");
    let (_, h) = server.api(&format!("/api/v1/english?fen={}", q("W:WK32:BK26")));
    assert_eq!(
        (&h["fen"], &h["moves"][0]["move"]),
        (&json!("W:WK32:BK26"), &json!("32-27"))
    );
    let (_, h) = server.api(&format!(
        "/api/v1/english?fen={}&notation=algebraic",
        q("W:WK32:BK26")
    ));
    assert_eq!(
        (&h["fen"], &h["moves"][0]["move"]),
        (&json!("W:WKg1:BKd2"), &json!("g1-f2"))
    );
    let (s, h) = server.api(&format!(
        "/api/v1/english?fen={}&notation=pdn",
        q("W:WK32:BK26")
    ));
    assert_eq!(
        (s, &h["error"]),
        (
            400,
            &json!("notation must be numeric or algebraic, not \"pdn\"")
        )
    );
    // A bad --notation is a usage error.
    let out = Command::new(DTB)
        .args(["probe", "--dir", e, "--notation", "pdn", "W:WK32:BK26"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// Issue 36: with no --dir, `dtb serve` reads `tables`, as every other command does; one
/// --variant goes with it.
#[test]
fn dir_defaults_to_tables() {
    let cwd = tempfile::tempdir().unwrap();
    let (code, err) = serve_fails(&[], Some(cwd.path()));
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(
        err.trim_end(),
        "dtb: error: table directory tables does not exist (build one with `dtb gen --out \
         tables`)"
    );
    std::fs::create_dir(cwd.path().join("tables")).unwrap();
    copy_tables(english(), &cwd.path().join("tables"));
    let mut cmd = Command::new(DTB);
    cmd.current_dir(cwd.path())
        .args(["serve", "--listen", "127.0.0.1:0"]);
    let server = Server::launch(cmd);
    let (s, v) = server.api(&format!("/api/v1/english?fen={}", q("W:WK32:BK26")));
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["variant"], "english");
    assert_eq!(v["dtw"], 9);
    drop(server);
    let mut cmd = Command::new(DTB);
    cmd.current_dir(cwd.path())
        .args(["serve", "--variant", "English", "--listen", "127.0.0.1:0"]);
    let server = Server::launch(cmd);
    let (s, v) = server.api("/api/v1/variants");
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["variants"][0]["name"], "english");
    assert_eq!(v["variants"].as_array().unwrap().len(), 1);
}

/// Issue 36: `--listen` takes a host name (resolved; localhost is 127.0.0.1) and `:PORT`
/// (127.0.0.1, never every interface), and says so in --help.
#[test]
fn listen_takes_a_host_name_or_a_port_alone() {
    let dir = english().to_str().unwrap();
    for listen in ["localhost:0", ":0", "127.0.0.1:0"] {
        let mut cmd = Command::new(DTB);
        cmd.args(["serve", "--dir", dir, "--listen", listen]);
        let server = Server::launch(cmd);
        let port = server.addr.strip_prefix("127.0.0.1:");
        assert!(
            port.is_some_and(|p| p.parse::<u16>().unwrap() > 0),
            "{listen}: {}",
            server.addr
        );
        let (s, v) = server.api(&format!("/api/v1/english?fen={}", q("W:WK32:BK26")));
        assert_eq!(s, 200, "{listen}: {v}");
        assert_eq!(v["dtw"], 9);
    }
    for (listen, why) in [
        (
            "8080",
            "\"8080\": give IP:PORT (127.0.0.1:8080), HOST:PORT (localhost:8080) or :PORT",
        ),
        (
            ":http",
            "\":http\": the port after ':' must be a number from 0 to 65535",
        ),
        (
            "localhost:99999",
            "\"localhost:99999\": the port after ':' must be a number from 0 to 65535",
        ),
    ] {
        let out = Command::new(DTB)
            .args(["serve", "--dir", dir, "--listen", listen])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{listen}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!(
                "invalid value '{listen}' for '--listen <ADDR>': {why}"
            )),
            "{err}"
        );
    }
    let out = Command::new(DTB)
        .args(["serve", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        help.contains(
            "or :PORT (127.0.0.1:PORT). Only this machine can connect unless an address says \
             otherwise: all interfaces are bound only when asked, with 0.0.0.0:PORT or \
             [::]:PORT."
        ),
        "{help}"
    );
    assert!(help.contains("[default: tables]"), "{help}");
}

/// Issue 36: variant names in the URL are read as on the command line: in any case, or a
/// preset with overrides naming a served rule set.
#[test]
fn variant_names_in_urls_as_on_the_command_line() {
    let server = two_variant_server();
    let (s, v) = server.api(&format!("/api/v1/English?fen={}", q("W:WK32:BK26")));
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["variant"], "english");
    assert_eq!(v["dtw"], 9);
    let (s, v) = server.api(&format!(
        "/api/v1/ENGLISH/mainline?fen={}",
        q("W:WK32:BK26")
    ));
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["mainline"].as_array().unwrap().len(), 9);
    let (s, v) = server.api(&format!("/api/v1/Russian?fen={}", q("W:WK32:BK26")));
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["variant"], "russian");
    // English's blocked side loses: `english,blocked=loss` is English.
    let (s, v) = server.api(&format!(
        "/api/v1/english,Blocked=loss?fen={}",
        q("W:WK32:BK26")
    ));
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["variant"], "english");
    let (s, v) = server.api(&format!(
        "/api/v1/english,blocked=draw?fen={}",
        q("W:WK32:BK26")
    ));
    assert_eq!(s, 404, "{v}");
    assert_eq!(
        v["error"],
        "no tables served for variant \"english,blocked=draw\"; served: english, russian"
    );
}

/// Issue 36: a directory of another variant's tables is refused naming which value of each
/// differing rule is which variant's (it read "short here, flying there").
#[test]
fn other_variants_tables_are_named_plainly() {
    let dir = russian().to_str().unwrap();
    let (code, err) = serve_fails(&["--dir", dir], None);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.starts_with(&format!(
            "dtb: error: no english tables in {dir}; it holds tables of other rules: russian ("
        )),
        "{err}"
    );
    assert!(
        err.contains("; kings: short for english, flying for russian;"),
        "{err}"
    );
    assert!(
        err.trim_end().ends_with("): pass --variant russian"),
        "{err}"
    );
    assert!(!err.contains(" here") && !err.contains(" there"), "{err}");
}

/// Issue 36: a square number off the board is said in words, not as `1..=32`.
#[test]
fn squares_off_the_board_in_words() {
    let server = english_server();
    for (path, fen, n) in [
        ("/api/v1/english", "W:W33:B1", 33),
        ("/api/v1/english/mainline", "W:W33:B1", 33),
        ("/api/v1/english", "W:W0:B1", 0),
    ] {
        let (s, v) = server.api(&format!("{path}?fen={}", q(fen)));
        assert_eq!(s, 400, "{v}");
        assert_eq!(
            v["error"],
            format!(
                "bad FEN: square {n} is not on the board: its squares are numbered from 1 to 32"
            ),
            "{path} {fen}"
        );
        assert_eq!(v["status"], 400);
    }
}

/// Issue 36: without JavaScript the page says it needs it and points to the JSON API.
#[test]
fn page_without_javascript_points_to_the_api() {
    let server = english_server();
    let r = server.get("/");
    assert_eq!(r.status, 200);
    let html = String::from_utf8(r.body).unwrap();
    let start = html.find("<noscript>").expect("a noscript element");
    let end = html[start..].find("</noscript>").unwrap() + start;
    let text = html[start..end]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        text.contains("This page needs JavaScript to draw the board and ask for positions."),
        "{text}"
    );
    assert!(
        text.contains("<a href=\"/api/v1/variants\">/api/v1/variants</a>"),
        "{text}"
    );
    assert!(
        text.contains("<code>/api/v1/{variant}?fen=FEN</code>"),
        "{text}"
    );
    // The link it gives answers.
    let (s, v) = server.api("/api/v1/variants");
    assert_eq!(s, 200);
    assert_eq!(v["variants"][0]["name"], "english");
}

// ---------------------------------------------------------------------------------------
// The browser test: headless Chromium over WebDriver.

fn find_program(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for n in names {
            let p = dir.join(n);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

struct Driver {
    child: Child,
    addr: String,
    session: String,
    /// The browser's profile, removed after the browser ends.
    _profile: tempfile::TempDir,
}

impl Driver {
    fn call(&self, method: &str, path: &str, body: Value) -> Value {
        let body = if method == "POST" {
            body.to_string()
        } else {
            String::new()
        };
        let r = http(&self.addr, method, path, &[], &body);
        let v = r.json();
        assert!(
            r.status == 200,
            "WebDriver {method} {path}: {} {v}",
            r.status
        );
        v["value"].clone()
    }
    fn session(&self, method: &str, path: &str, body: Value) -> Value {
        self.call(method, &format!("/session/{}{path}", self.session), body)
    }
    fn script(&self, script: &str) -> Value {
        self.session(
            "POST",
            "/execute/sync",
            json!({"script": script, "args": []}),
        )
    }
    /// Click the element matching a CSS selector: WebDriver's Element Click, which moves the
    /// pointer to the element's centre and presses the mouse button there.
    fn click(&self, css: &str) {
        let e = self.session(
            "POST",
            "/element",
            json!({"using": "css selector", "value": css}),
        );
        let id = e["element-6066-11e4-a52e-4f735466cecf"]
            .as_str()
            .unwrap()
            .to_string();
        self.session("POST", &format!("/element/{id}/click"), json!({}));
    }
    /// Wait until `script` returns true (at most 20 s).
    fn wait_for(&self, script: &str) {
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(20) {
            if self.script(script) == json!(true) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!(
            "timed out waiting for {script}; page state {}",
            self.script("return document.body.dataset.state + ' ' + document.body.dataset.fen + ' ' + document.getElementById('status').textContent")
        );
    }
    fn moves_listed(&self) -> Vec<String> {
        let v = self.script(
            "return Array.from(document.querySelectorAll('#moves li')).map(li => li.dataset.move)",
        );
        v.as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                http(
                    &self.addr,
                    "DELETE",
                    &format!("/session/{}", self.session),
                    &[],
                    "",
                )
            }));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn api_moves(server: &Server, fen: &str) -> Vec<String> {
    let (s, v) = server.api(&format!("/api/v1/english?fen={}", q(fen)));
    assert_eq!(s, 200);
    v["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["move"].as_str().unwrap().to_string())
        .collect()
}

/// A WebDriver session in headless Chromium; `None` where they are not installed and
/// `DTB_SKIP_BROWSER` is set (a panic where it is not).
fn browser() -> Option<Driver> {
    let driver_bin = find_program(&["chromedriver"]);
    let chrome_bin = find_program(&["chromium", "chromium-browser", "google-chrome"]);
    let (Some(driver_bin), Some(chrome_bin)) = (driver_bin, chrome_bin) else {
        if std::env::var_os("DTB_SKIP_BROWSER").is_some() {
            eprintln!("browser test skipped (DTB_SKIP_BROWSER): no chromedriver or chromium");
            return None;
        }
        panic!(
            "chromedriver and chromium are needed: run .ci/install-test-deps (apt-get install \
             chromium chromium-driver), or set DTB_SKIP_BROWSER=1 to skip this test"
        );
    };
    let port = free_port();
    let profile = tempfile::tempdir().unwrap();
    let child = Command::new(&driver_bin)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut driver = Driver {
        child,
        addr: format!("127.0.0.1:{port}"),
        session: String::new(),
        _profile: profile,
    };
    let t = Instant::now();
    loop {
        // Chromedriver may accept a connection before it serves: a reset is "not yet".
        if let Ok(r) = try_http(&driver.addr, "GET", "/status", &[], "") {
            if r.status == 200 && r.json()["value"]["ready"] == json!(true) {
                break;
            }
        }
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "chromedriver did not start"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let caps = json!({"capabilities": {"alwaysMatch": {
        "browserName": "chrome",
        "goog:chromeOptions": {
            "binary": chrome_bin.to_str().unwrap(),
            "args": [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                format!("--user-data-dir={}", driver._profile.path().display()),
                "--window-size=1100,820",
            ]
        }
    }}});
    let v = driver.call("POST", "/session", caps);
    driver.session = v["sessionId"].as_str().unwrap().to_string();
    Some(driver)
}

/// Issue 36: a bad FEN shows the server's error and no board (the page drew the squares it
/// could read beside the error); the next good position draws the board again.
#[test]
fn browser_shows_no_board_for_a_bad_fen() {
    let Some(driver) = browser() else { return };
    let server = english_server();
    let open = |fen: &str| {
        let url = format!("http://{}/?variant=english&fen={}", server.addr, q(fen));
        driver.session("POST", "/url", json!({ "url": url }));
    };
    let counts = "return [document.querySelectorAll('#board svg').length, \
                  document.querySelectorAll('rect[data-square]').length, \
                  document.querySelectorAll('[data-piece]').length, \
                  document.querySelectorAll('#moves li').length]";
    open("W:W33,22:B1");
    driver.wait_for("return document.body.dataset.state === 'error'");
    assert_eq!(
        driver.script("return document.getElementById('status').textContent"),
        json!("400: bad FEN: square 33 is not on the board: its squares are numbered from 1 to 32")
    );
    assert_eq!(driver.script(counts), json!([0, 0, 0, 0]));
    let good = "W:WK32:BK26";
    open(good);
    driver.wait_for(&format!(
        "return document.body.dataset.state === 'ready' && document.body.dataset.fen === '{good}'"
    ));
    let moves = api_moves(&server, good).len();
    assert_eq!(moves, 2, "32-27 and 32-28");
    assert_eq!(driver.script(counts), json!([1, 32, 2, moves]));
    assert_eq!(
        driver.script("return document.getElementById('status').textContent"),
        json!("")
    );
}

/// Needs Debian's `chromium` and `chromium-driver` (.ci/install-test-deps installs them);
/// `DTB_SKIP_BROWSER=1` skips it where they cannot be installed.
#[test]
fn browser_plays_a_move_by_clicking() {
    let Some(driver) = browser() else { return };
    let server = Server::start(&[
        "--dir",
        english().to_str().unwrap(),
        "--variant",
        "english",
        "--dir",
        russian().to_str().unwrap(),
        "--variant",
        "russian",
        "--dir",
        international().to_str().unwrap(),
        "--variant",
        "international",
    ]);

    let start = "W:WK32:BK26";
    driver.session(
        "POST",
        "/url",
        json!({"url": format!("http://{}/?variant=english&fen={}", server.addr, q(start))}),
    );
    driver.wait_for(&format!(
        "return document.body.dataset.state === 'ready' && document.body.dataset.fen === '{start}'"
    ));
    let before = driver.moves_listed();
    assert_eq!(before, api_moves(&server, start));
    assert_eq!(before[0], "32-27");
    // Coloured and labelled with the mover's value, as the API's `wld` and `dtw` give it.
    assert_eq!(
        driver.script(
            "const li = document.querySelector('#moves li'); return [li.className, li.textContent]"
        ),
        json!(["win", "32-27win in 9"])
    );

    // Pick the white king up: its square is marked and its targets lit.
    driver.click("rect[data-square=\"32\"]");
    driver.wait_for(
        "return document.querySelector('rect[data-square=\"32\"]').classList.contains('selected') \
         && document.querySelector('rect[data-square=\"27\"]').classList.contains('target')",
    );
    // Put it down on 27: the page asks for the new position and lists its moves.
    driver.click("rect[data-square=\"27\"]");
    let after = "B:WK27:BK26";
    driver.wait_for(&format!(
        "return document.body.dataset.state === 'ready' && document.body.dataset.fen === '{after}'"
    ));
    let listed = driver.moves_listed();
    assert_eq!(listed, api_moves(&server, after));
    assert_ne!(listed, before);
    // The URL holds the new position; the king is drawn on 27 and no longer on 32.
    let url = driver.session("GET", "/url", json!({}));
    assert!(
        url.as_str().unwrap().contains("fen=B%3AWK27%3ABK26"),
        "{url}"
    );
    assert_eq!(
        driver.script(
            "return [!!document.querySelector('[data-piece=\"27\"].white.king'), \
             !!document.querySelector('[data-piece=\"32\"]')]"
        ),
        json!([true, false])
    );
    // Black's moves are coloured: every one loses here (value after it: a win for White).
    assert_eq!(
        driver.script("return Array.from(document.querySelectorAll('#moves li')).every(li => li.className === 'loss')"),
        json!(true)
    );
    // Show the best line from here: the 8 plies left.
    driver.click("#line-show");
    driver.wait_for("return document.querySelectorAll('#line li').length === 8");

    let shot = driver.session("GET", "/screenshot", json!({}));
    let png = base64::engine::general_purpose::STANDARD
        .decode(shot.as_str().unwrap())
        .unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("serve-browser.png");
    std::fs::write(&path, &png).unwrap();
    eprintln!("screenshot: {}", path.display());

    // A Russian king on 23 can take 12 and 3, or 16 and 7, to land on 21: clicking 23 then
    // 21 offers both captures; choosing the second plays it. The page writes Russian as its
    // players do (issue 36): algebraic squares, e3:g5:e7:a3 for 23x16x7x21.
    let capture = "W:WK23:B8,K11,17,K19";
    driver.session(
        "POST",
        "/url",
        json!({"url": format!("http://{}/?variant=russian&fen={}", server.addr, q(capture))}),
    );
    let (_, v) = server.api(&format!("/api/v1/russian?fen={}", q(capture)));
    assert_eq!(v["fen"], "W:WKe3:Bb4,Kf4,Kf6,g7");
    driver.wait_for(&format!(
        "return document.body.dataset.state === 'ready' && document.body.dataset.fen === '{}'",
        v["fen"].as_str().unwrap()
    ));
    // Files and ranks along the edges, no square numbers.
    assert_eq!(
        driver.script(
            "return [Array.from(document.querySelectorAll('#board .coord.file')).map(t => t.textContent).join(''), \
             Array.from(document.querySelectorAll('#board .coord.rank')).map(t => t.textContent).join(''), \
             document.querySelectorAll('#board .num').length]"
        ),
        json!(["abcdefgh", "87654321", 0])
    );
    let to21: Vec<&Value> = v["moves"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["from"] == 23 && m["to"] == 21)
        .collect();
    assert_eq!(to21.len(), 2, "{v}");
    driver.click("rect[data-square=\"23\"]");
    driver.wait_for(
        "return document.querySelector('rect[data-square=\"23\"]').classList.contains('selected')",
    );
    driver.click("rect[data-square=\"21\"]");
    driver.wait_for("return !document.getElementById('choice').hidden");
    let offered = driver.script(
        "return Array.from(document.querySelectorAll('#choice button')).map(b => b.dataset.move)",
    );
    let mut offered: Vec<String> = offered
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    offered.sort();
    let mut want: Vec<&str> = to21.iter().map(|m| m["move"].as_str().unwrap()).collect();
    want.sort();
    assert_eq!(offered, want);
    assert_eq!(want, ["e3:g5:e7:a3", "e3:h6:f8:a3"]);
    let chosen = to21.iter().find(|m| m["move"] == "e3:g5:e7:a3").unwrap();
    assert_eq!(chosen["path"], json!([16, 7, 21]));
    let after = chosen["fen_after"].as_str().unwrap();
    driver.click("#choice button[data-move=\"e3:g5:e7:a3\"]");
    driver.wait_for(&format!(
        "return document.body.dataset.state === 'ready' && document.body.dataset.fen === '{after}'"
    ));
    let listed = driver.moves_listed();
    let (_, v) = server.api(&format!("/api/v1/russian?fen={}", q(after)));
    let want: Vec<&str> = v["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["move"].as_str().unwrap())
        .collect();
    assert_eq!(listed, want);
    let shot = driver.session("GET", "/screenshot", json!({}));
    let png = base64::engine::general_purpose::STANDARD
        .decode(shot.as_str().unwrap())
        .unwrap();
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("serve-browser-capture.png");
    std::fs::write(&path, &png).unwrap();
    eprintln!("screenshot: {}", path.display());

    // The 10x10 board: International 33-28 by clicking.
    let start = "W:W33,K46:BK5";
    driver.session(
        "POST",
        "/url",
        json!({"url": format!("http://{}/?variant=international&fen={}", server.addr, q(start))}),
    );
    driver.wait_for(&format!(
        "return document.body.dataset.state === 'ready' && document.body.dataset.fen === '{start}'"
    ));
    assert_eq!(
        driver.script("return document.querySelectorAll('rect[data-square]').length"),
        json!(50)
    );
    let before = driver.moves_listed();
    driver.click("rect[data-square=\"33\"]");
    driver.wait_for(
        "return document.querySelector('rect[data-square=\"28\"]').classList.contains('target')",
    );
    driver.click("rect[data-square=\"28\"]");
    let after = "B:W28,K46:BK5";
    driver.wait_for(&format!(
        "return document.body.dataset.state === 'ready' && document.body.dataset.fen === '{after}'"
    ));
    let listed = driver.moves_listed();
    assert_ne!(listed, before);
    let (_, v) = server.api(&format!("/api/v1/international?fen={}", q(after)));
    let want: Vec<&str> = v["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["move"].as_str().unwrap())
        .collect();
    assert_eq!(listed, want);
    let shot = driver.session("GET", "/screenshot", json!({}));
    let png = base64::engine::general_purpose::STANDARD
        .decode(shot.as_str().unwrap())
        .unwrap();
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("serve-browser-10x10.png");
    std::fs::write(&path, &png).unwrap();
    eprintln!("screenshot: {}", path.display());
}

/// Issue 36: a position set up by clicks. "Set up a position" opens the palette; "Start
/// position" and "Clear board" fill and empty the board; the palette's white king on 32 and
/// black king on 26 give `W:WK32:BK26`, whose value the page shows (win in 9); Black to move
/// (a click on the side's option) makes it a draw; "empty" on 26 leaves a finished game;
/// "Done" plays on from the position set up. "Flip board" turns the board round (square 32,
/// bottom right, goes to the top left) and back. Screenshot: serve-browser-setup.png.
#[test]
fn browser_sets_a_position_up_by_clicking_and_flips_the_board() {
    let Some(driver) = browser() else { return };
    let server = english_server();
    let url = format!(
        "http://{}/?variant=english&fen={}",
        server.addr,
        q("W:W22:B9")
    );
    driver.session("POST", "/url", json!({ "url": url }));
    driver.wait_for("return document.body.dataset.state === 'ready'");
    let wait_fen = |fen: &str, state: &str| {
        driver.wait_for(&format!(
            "return document.body.dataset.state === '{state}' && document.body.dataset.fen === '{fen}'"
        ));
    };
    let value = || driver.script("return document.getElementById('value').textContent");
    let pieces = "return document.querySelectorAll('[data-piece]').length";

    driver.click("#setup");
    driver.wait_for("return !document.getElementById('setup-panel').hidden");
    // The start position: 24 men, beyond these 2-4 piece tables (the error is shown beside
    // the board being set up).
    driver.click("#setup-start");
    let start = fen::write(&dtb_probe::Position::start(&Rules::ENGLISH));
    wait_fen(&start, "error");
    assert_eq!(driver.script(pieces), json!(24));
    assert!(driver
        .script("return document.getElementById('status').textContent")
        .as_str()
        .unwrap()
        .starts_with("404: "));
    driver.click("#setup-clear");
    wait_fen("B:W:B", "error");
    assert_eq!(driver.script(pieces), json!(0));
    assert_eq!(
        driver.script("return document.querySelectorAll('rect[data-square]').length"),
        json!(32)
    );
    // White to move; a white king on 32, a black king on 26.
    driver.click("#setup-side option[value=\"white\"]");
    wait_fen("W:W:B", "error");
    driver.click("#palette button[data-put=\"wk\"]");
    driver.click("rect[data-square=\"32\"]");
    wait_fen("W:WK32:B", "ready");
    assert_eq!(value(), json!("game over: White to move, win"));
    driver.click("#palette button[data-put=\"bk\"]");
    driver.click("rect[data-square=\"26\"]");
    wait_fen("W:WK32:BK26", "ready");
    assert_eq!(value(), json!("White to move: win in 9 plies"));
    assert_eq!(driver.moves_listed(), api_moves(&server, "W:WK32:BK26"));
    assert_eq!(
        driver.script(
            "return [!!document.querySelector('[data-piece=\"32\"].white.king'), \
             !!document.querySelector('[data-piece=\"26\"].black.king')]"
        ),
        json!([true, true])
    );
    // Black to move: a draw.
    driver.click("#setup-side option[value=\"black\"]");
    wait_fen("B:WK32:BK26", "ready");
    assert_eq!(value(), json!("Black to move: draw"));
    // A man too: White's on 22, Black to move (3 pieces).
    driver.click("#palette button[data-put=\"wm\"]");
    driver.click("rect[data-square=\"22\"]");
    wait_fen("B:W22,K32:BK26", "ready");
    let tb = Tablebase::open(english(), Rules::ENGLISH).unwrap();
    let pos = fen::parse("B:W22,K32:BK26", &Rules::ENGLISH).unwrap();
    let d = tb.probe_dtw(&pos).unwrap();
    let want = match d.plies {
        Some(p) if d.wld != Wld::Draw => format!("Black to move: {} in {p} plies", d.wld),
        _ => format!("Black to move: {}", d.wld),
    };
    assert_eq!(value(), json!(want));
    // "empty" takes the black king off: Black has no pieces, the game is over.
    driver.click("#palette button[data-put=\"empty\"]");
    driver.click("rect[data-square=\"26\"]");
    wait_fen("B:W22,K32:B", "ready");
    assert_eq!(value(), json!("game over: Black to move, loss"));
    driver.click("#palette button[data-put=\"empty\"]");
    driver.click("rect[data-square=\"22\"]");
    driver.click("#palette button[data-put=\"bk\"]");
    driver.click("rect[data-square=\"26\"]");
    driver.click("#setup-side option[value=\"white\"]");
    wait_fen("W:WK32:BK26", "ready");

    // Flip: 32 (bottom right, row 7 col 6) is drawn at the top left (row 0 col 1); the
    // king on it follows.
    let rect = |n: u32| {
        driver.script(&format!(
            "const r = document.querySelector('rect[data-square=\"{n}\"]'); \
             return [r.getAttribute('x'), r.getAttribute('y')]"
        ))
    };
    assert_eq!(rect(32), json!(["360", "420"]));
    assert_eq!(rect(1), json!(["60", "0"]));
    driver.click("#flip");
    driver.wait_for("return document.body.dataset.flipped === 'true'");
    assert_eq!(rect(32), json!(["60", "0"]));
    assert_eq!(rect(1), json!(["360", "420"]));
    assert_eq!(
        driver.script(
            "const c = document.querySelector('[data-piece=\"32\"] circle'); \
             return [c.getAttribute('cx'), c.getAttribute('cy')]"
        ),
        json!(["90", "30"])
    );
    // Setting up works on the flipped board too: the click lands on the square drawn there.
    driver.click("#palette button[data-put=\"wm\"]");
    driver.click("rect[data-square=\"30\"]");
    wait_fen("W:W30,K32:BK26", "ready");
    let shot = driver.session("GET", "/screenshot", json!({}));
    let png = base64::engine::general_purpose::STANDARD
        .decode(shot.as_str().unwrap())
        .unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("serve-browser-setup.png");
    std::fs::write(&path, &png).unwrap();
    eprintln!("screenshot: {}", path.display());
    driver.click("#palette button[data-put=\"empty\"]");
    driver.click("rect[data-square=\"30\"]");
    wait_fen("W:WK32:BK26", "ready");

    // Done: the page plays from the position set up; a click on 32 then 27 plays 32-27.
    driver.click("#setup");
    driver.wait_for("return document.getElementById('setup-panel').hidden");
    driver.click("#flip");
    driver.wait_for("return document.body.dataset.flipped === 'false'");
    assert_eq!(rect(32), json!(["360", "420"]));
    driver.click("rect[data-square=\"32\"]");
    driver.wait_for(
        "return document.querySelector('rect[data-square=\"27\"]').classList.contains('target')",
    );
    driver.click("rect[data-square=\"27\"]");
    wait_fen("B:WK27:BK26", "ready");
    assert_eq!(value(), json!("Black to move: loss in 8 plies"));
}

/// The position's value as the page writes it (`White to move: win in 9 plies`).
fn value_text(v: &Value) -> String {
    let side = if v["side_to_move"] == "white" {
        "White"
    } else {
        "Black"
    };
    match (v["wld"].as_str().unwrap(), v["dtw"].as_u64()) {
        ("draw", _) => format!("{side} to move: draw"),
        (wld, Some(1)) => format!("{side} to move: {wld} in 1 ply"),
        (wld, Some(d)) => format!("{side} to move: {wld} in {d} plies"),
        (wld, None) => format!("{side} to move: {wld}"),
    }
}

/// Issue 36: `POST /api/v1/{variant}/analyze` answers a game's plies with the library's
/// values (`dtb_probe::analyze`), a game with an illegal move with its game and move number
/// and the legal moves (the other game analysed all the same), and an oversized body with
/// 413, whether its `Content-Length` says so or it comes in chunks; a GET is refused.
#[test]
fn pasted_games_are_analysed_over_http() {
    let server = english_server();
    let tb = Tablebase::open(english(), Rules::ENGLISH).unwrap();
    let post = |target: &str, body: &str| {
        let r = http(&server.addr, "POST", target, &[], body);
        (r.status, r.json())
    };
    let good = "[FEN \"W:W5,K6:B4,16\"]\n1. 6-1 16-19 2. 1-6 4-8 3. 6-10 19-23 4. 10-15 8-11 \
                5. 15x8 *\n";
    let bad = "[FEN \"W:WK32:BK26\"]\n1. 32-27 26-17 *\n";
    let (status, v) = post("/api/v1/english/analyze", &format!("{good}\n{bad}"));
    assert_eq!(status, 200, "{v}");
    let games = v["games"].as_array().unwrap();
    assert_eq!(games.len(), 2);
    let lib =
        dtb_probe::analyze::analyze(&tb, &dtb_probe::pdn::games(good).next().unwrap().unwrap());
    assert!(lib.error.is_none());
    let plies = games[0]["plies"].as_array().unwrap();
    assert_eq!(plies.len(), lib.plies.len());
    for (p, l) in plies.iter().zip(&lib.plies) {
        assert_eq!(p["pdn"], l.pdn.as_str());
        assert_eq!(p["move"], l.pdn.as_str());
        assert_eq!(p["fen_before"], l.fen.as_str());
        let b = l.before.unwrap();
        assert_eq!(p["value_before"]["wld"], b.wld.as_str());
        assert_eq!(p["value_before"]["dtw"].as_u64(), b.plies.map(u64::from));
        assert_eq!(p["value_after"]["wld"], l.after.unwrap().wld.as_str());
        assert_eq!(p["changed_result"], l.change.is_some());
        assert_eq!(
            p["best_move"].as_str(),
            l.best.as_ref().map(|b| b.pdn.as_str())
        );
    }
    // README's example: 6-1 throws the win away (best 5-1), 19-23 the draw (best 8-11).
    let changed: Vec<(u64, &str, &str)> = plies
        .iter()
        .filter(|p| p["changed_result"] == true)
        .map(|p| {
            (
                p["ply"].as_u64().unwrap(),
                p["change"].as_str().unwrap(),
                p["best_move"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        changed,
        [(1, "win to draw", "5-1"), (6, "draw to loss", "8-11")]
    );
    let e = &games[1]["error"];
    assert_eq!(games[1]["game"], 2);
    assert_eq!(e["kind"], "illegal_move");
    assert_eq!(e["move_number"], "1...");
    assert_eq!(e["move"], "26-17");
    assert!(!e["legal_moves"].as_array().unwrap().is_empty(), "{e}");
    assert_eq!(
        v["summary"],
        json!({"games": 2, "errors": 1, "plies": 10, "changed": 2})
    );

    // No game, an unknown variant, a bad notation, a GET.
    assert_eq!(post("/api/v1/english/analyze", "").0, 400);
    assert_eq!(post("/api/v1/nosuch/analyze", good).0, 404);
    assert_eq!(post("/api/v1/english/analyze?notation=x", good).0, 400);
    assert_eq!(server.get("/api/v1/english/analyze").status, 405);

    // Over 1 MiB: said by Content-Length (and no body sent), or sent in chunks.
    let raw = |head: &str, body: &[u8]| {
        let mut s = TcpStream::connect(&server.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        s.write_all(head.as_bytes()).unwrap();
        let _ = s.write_all(body);
        let mut answer = Vec::new();
        let _ = s.read_to_end(&mut answer);
        String::from_utf8_lossy(&answer).to_string()
    };
    let a = raw(
        "POST /api/v1/english/analyze HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\
         Content-Length: 99000000000\r\n\r\n",
        b"",
    );
    assert!(a.starts_with("HTTP/1.1 413"), "{a}");
    assert!(a.contains("\"status\":413"), "{a}");
    let chunk = format!("{:x}\r\n{}\r\n", 65536, "1. 9-13 ".repeat(8192));
    let body = chunk.repeat(17) + "0\r\n\r\n";
    let a = raw(
        "POST /api/v1/english/analyze HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\
         Transfer-Encoding: chunked\r\n\r\n",
        body.as_bytes(),
    );
    assert!(a.starts_with("HTTP/1.1 413"), "{a}");
    assert!(a.contains("longer than 1048576 bytes"), "{a}");
    // The server is still there.
    assert_eq!(post("/api/v1/english/analyze", bad).0, 200);
}

/// Issue 36: a pasted game stepped through on the page. README's game (English, 4 pieces):
/// 6-1 throws White's win away and 19-23 Black's draw; exactly those two moves are marked
/// `changed` with the best move beside them; the first, next, last and previous buttons
/// and a click on a move show each position with its value (the page's `#value` from the
/// position's API answer, `#game-value` from the analysis). An illegal move is reported
/// with the legal moves. Screenshot: serve-browser-paste.png (after 6-1, the mistake).
#[test]
fn browser_steps_through_a_pasted_game() {
    let Some(driver) = browser() else { return };
    let server = english_server();
    let tb = Tablebase::open(english(), Rules::ENGLISH).unwrap();
    let url = format!(
        "http://{}/?variant=english&fen={}",
        server.addr,
        q("W:WK32:BK26")
    );
    driver.session("POST", "/url", json!({ "url": url }));
    driver.wait_for("return document.body.dataset.state === 'ready'");
    let game = "[FEN \"W:W5,K6:B4,16\"]\n1. 6-1 16-19 2. 1-6 4-8 3. 6-10 19-23 4. 10-15 \
                8-11 5. 15x8 *";
    let paste = |text: &str| {
        let e = driver.session(
            "POST",
            "/element",
            json!({"using": "css selector", "value": "#pdn"}),
        );
        let id = e["element-6066-11e4-a52e-4f735466cecf"]
            .as_str()
            .unwrap()
            .to_string();
        driver.session("POST", &format!("/element/{id}/clear"), json!({}));
        driver.session(
            "POST",
            &format!("/element/{id}/value"),
            json!({ "text": text }),
        );
    };
    paste(game);
    driver.click("#analyze");
    let wait_fen = |fen: &str| {
        driver.wait_for(&format!(
            "return document.body.dataset.state === 'ready' && document.body.dataset.fen === '{fen}'"
        ));
    };
    wait_fen("W:W5,K6:B4,16");
    driver.wait_for("return document.querySelectorAll('#game li').length === 9");
    // The library's values, step by step: the start, then after each ply.
    let lib =
        dtb_probe::analyze::analyze(&tb, &dtb_probe::pdn::games(game).next().unwrap().unwrap());
    let pos = |i: usize| {
        let mut p = lib.start.unwrap();
        for ply in &lib.plies[..i] {
            p = ply.mv.apply_unchecked(&p);
        }
        p
    };
    let value_at = |i: usize| {
        let p = pos(i);
        let d = tb.probe_dtw(&p).unwrap();
        let side = if p.side_to_move() == dtb_probe::Color::White {
            "white"
        } else {
            "black"
        };
        let dtw = if d.wld == Wld::Draw { None } else { d.plies };
        value_text(&json!({"side_to_move": side, "wld": d.wld.as_str(), "dtw": dtw}))
    };
    let shown = || {
        driver.script(
            "return [document.getElementById('value').textContent, \
             document.getElementById('game-value').textContent, \
             Array.from(document.querySelectorAll('#game li.current')).map(li => li.dataset.ply)]",
        )
    };
    assert_eq!(value_at(0), "White to move: win in 87 plies");
    assert_eq!(shown(), json!([value_at(0), value_at(0), []]));
    // Exactly the moves that changed the result are marked, each with its best move.
    let marked = driver.script(
        "return Array.from(document.querySelectorAll('#game li.changed')).map(li => \
         [li.dataset.ply, li.dataset.move, li.querySelector('.best').textContent])",
    );
    assert_eq!(
        marked,
        json!([["1", "6-1", "best 5-1"], ["6", "19-23", "best 8-11"]])
    );
    let want: Vec<String> = lib
        .plies
        .iter()
        .enumerate()
        .filter(|(_, p)| p.change.is_some())
        .map(|(i, _)| (i + 1).to_string())
        .collect();
    assert_eq!(want, ["1", "6"]);
    assert_eq!(
        driver.script("return document.querySelectorAll('#game .best').length"),
        json!(2)
    );
    // Next: after 6-1, a draw; the move is the current one and marked on the board.
    driver.click("#game-next");
    let fen_at = |i: usize| fen::write(&pos(i));
    wait_fen(&fen_at(1));
    assert_eq!(value_at(1), "Black to move: draw");
    assert_eq!(shown(), json!([value_at(1), value_at(1), ["1"]]));
    assert_eq!(
        driver.script(
            "return ['6', '1'].map(n => document.querySelector(`rect[data-square=\"${n}\"]`).classList.contains('last'))"
        ),
        json!([true, true])
    );
    driver.script("window.scrollTo(0, 0); return true");
    let shot = driver.session("GET", "/screenshot", json!({}));
    let png = base64::engine::general_purpose::STANDARD
        .decode(shot.as_str().unwrap())
        .unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("serve-browser-paste.png");
    std::fs::write(&path, &png).unwrap();
    eprintln!("screenshot: {}", path.display());
    // A click on 19-23 (ply 6): Black's mistake, a win for White after it.
    driver.click("#game li[data-ply=\"6\"]");
    wait_fen(&fen_at(6));
    assert_eq!(shown(), json!([value_at(6), value_at(6), ["6"]]));
    assert!(value_at(6).starts_with("White to move: win in "));
    // Last, previous, first.
    driver.click("#game-last");
    wait_fen(&fen_at(9));
    assert_eq!(shown(), json!([value_at(9), value_at(9), ["9"]]));
    driver.click("#game-prev");
    wait_fen(&fen_at(8));
    assert_eq!(shown(), json!([value_at(8), value_at(8), ["8"]]));
    driver.click("#game-first");
    wait_fen(&fen_at(0));
    assert_eq!(shown(), json!([value_at(0), value_at(0), []]));
    // The board still turns round, and the game steps on on the flipped board.
    driver.click("#flip");
    driver.wait_for("return document.body.dataset.flipped === 'true'");
    driver.click("#game-next");
    wait_fen(&fen_at(1));
    driver.click("#flip");
    driver.wait_for("return document.body.dataset.flipped === 'false'");

    // An illegal move: the plies before it, and the error with the legal moves.
    paste("[FEN \"W:WK32:BK26\"]\n1. 32-27 26-17 *");
    driver.click("#analyze");
    wait_fen("W:WK32:BK26");
    driver.wait_for("return document.querySelectorAll('#game li').length === 1");
    let error = driver.script("return document.getElementById('game-error').textContent");
    let error = error.as_str().unwrap();
    assert!(
        error.starts_with("game 1: move 1... \"26-17\"") && error.contains("legal moves: "),
        "{error}"
    );
    assert_eq!(
        driver.script("return document.querySelectorAll('#game li.changed').length"),
        json!(0)
    );
}

/// The board page under a count rule (DTC tables of `english,count=20`): the counter shown
/// and set, a cursed win coloured apart from a win (the position and the move that keeps
/// it), a win turned into a cursed win by the counter, and playing a king move counting on.
#[test]
fn browser_shows_the_counter_and_colours_cursed_wins() {
    let Some(driver) = browser() else { return };
    let dir = english_count_20();
    let server = Server::start(&[
        "--dir",
        dir.to_str().unwrap(),
        "--variant",
        "english,count=20",
    ]);
    let ready = |fen: &str| {
        format!("return document.body.dataset.state === 'ready' && document.body.dataset.fen === '{fen}'")
    };
    let cursed = "W:WK1,K19:BK27";
    driver.session(
        "POST",
        "/url",
        json!({"url": format!("http://{}/?variant=english&fen={}", server.addr, q(cursed))}),
    );
    driver.wait_for(&ready(cursed));
    assert_eq!(
        driver.script(
            "const v = document.getElementById('value'); \
             const li = document.querySelector('#moves li'); \
             return [v.className, v.textContent, document.getElementById('counter-box').hidden, \
                     document.getElementById('counter').value, \
                     document.getElementById('counter-limit').textContent, \
                     li.dataset.move, li.className, li.textContent]"
        ),
        json!([
            "cursed-win",
            "White to move at counter 0: cursed win, 21 plies to conversion; without the rule win in 21 plies",
            false,
            "0",
            "drawn at 20",
            "1-6",
            "cursed-win",
            "1-6cursed win in 21"
        ])
    );

    // A win in 19 plies to conversion: a win at counter 0, a cursed win at counter 2.
    let win = "W:WK2,K6:BK1";
    driver.session(
        "POST",
        "/url",
        json!({"url": format!("http://{}/?variant=english&fen={}", server.addr, q(win))}),
    );
    driver.wait_for(&ready(win));
    assert_eq!(
        driver.script("return document.getElementById('value').className"),
        json!("win")
    );
    driver.script(
        "const c = document.getElementById('counter'); c.value = '2'; \
         document.body.dataset.state = 'loading'; \
         c.dispatchEvent(new Event('change'));",
    );
    driver.wait_for(&ready(win));
    assert_eq!(
        driver.script(
            "return [document.getElementById('value').className, \
                     document.querySelector('#moves li').className, location.search]"
        ),
        json!([
            "cursed-win",
            "cursed-win",
            "?variant=english&fen=W%3AWK2%2CK6%3ABK1&counter=2"
        ])
    );
    // Playing the first move (a king move) counts on: counter 3 for Black.
    let after = driver.script("return document.querySelector('#moves li').dataset.fenAfter");
    let after = after.as_str().unwrap().to_string();
    driver.click("#moves li");
    driver.wait_for(&ready(&after));
    assert_eq!(
        driver.script("return document.getElementById('counter').value"),
        json!("3")
    );
    let (_, v) = server.api(&format!("/api/v1/english?fen={}&counter=3", q(&after)));
    let shown = driver.script("return document.getElementById('value').className");
    let want = match (v["wld"].as_str(), v["result"].as_str()) {
        (Some("loss"), Some("draw")) => "blessed-loss",
        (Some(w), _) => w,
        _ => panic!("{v}"),
    };
    assert_eq!(shown, json!(want), "{v}");
}
