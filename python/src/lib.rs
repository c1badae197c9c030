//! `import dtb`: the Python face of dtb-probe (see `dtb.pyi` for the API with types).
//!
//! ```python
//! import dtb
//! tb = dtb.Tablebase("tables", "english")
//! p = tb.probe("W:WK32:BK26")      # Probe(wld='win', dtw=9, best_move='32-27')
//! tb.moves("W:WK32:BK26")          # [Move('32-27', 'win', 9, 'B:WK27:BK26'), Move('32-28', 'draw', ...)]
//! tb.probe_many(["W:WK32:BK26", "B:WK32:BK26"])   # the GIL released while probing
//! ```
//!
//! Errors are Python exceptions carrying dtb's message: `dtb.FenError`,
//! `dtb.PositionError`, `dtb.MissingTableError`, `dtb.TableError`, all subclasses of
//! `dtb.DtbError`; a missing directory (or one without tables of the variant) is
//! `FileNotFoundError`, an unknown variant `ValueError`.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use dtb_probe::fen::Notation;
use dtb_probe::internal::format::ValueKind;
use dtb_probe::movegen::{legal_moves, notation_in, Counting};
use dtb_probe::{fen, Dtw, Position, ProbeError, Rules, Wld};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyFileNotFoundError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;

create_exception!(dtb, DtbError, PyException, "Any error dtb reports.");
create_exception!(dtb, FenError, DtbError, "The FEN text could not be parsed.");
create_exception!(
    dtb,
    PositionError,
    DtbError,
    "The position is not legal under the variant's rules, or the game is over."
);
create_exception!(
    dtb,
    MissingTableError,
    DtbError,
    "A table the probe needs is not in the directory."
);
create_exception!(
    dtb,
    TableError,
    DtbError,
    "A table file could not be read, is corrupt, or holds another variant's values."
);

/// A failure before it becomes a Python exception (so that it can cross `allow_threads`).
enum Failure {
    Fen(String),
    Position(String),
    Missing(String),
    Table(String),
    Other(String),
}

impl Failure {
    fn of_probe(e: ProbeError) -> Failure {
        let m = dtb_probe::report(&e);
        match e {
            // A position of other rules cannot come from Python (every FEN is read with the
            // tablebase's rules); were one to, it is not a position of this tablebase.
            ProbeError::IllegalPosition(_)
            | ProbeError::GameOver
            | ProbeError::VariantMismatch { .. } => Failure::Position(m),
            ProbeError::MissingTable { .. } => Failure::Missing(m),
            ProbeError::Table(_) | ProbeError::Mismatch { .. } => Failure::Table(m),
            ProbeError::Directory { .. } | ProbeError::CapturePosition => Failure::Other(m),
        }
    }

    fn into_py(self) -> PyErr {
        match self {
            Failure::Fen(m) => FenError::new_err(m),
            Failure::Position(m) => PositionError::new_err(m),
            Failure::Missing(m) => MissingTableError::new_err(m),
            Failure::Table(m) => TableError::new_err(m),
            Failure::Other(m) => DtbError::new_err(m),
        }
    }

    fn with_context(self, what: &str) -> Failure {
        let w = |m: String| format!("{what}: {m}");
        match self {
            Failure::Fen(m) => Failure::Fen(w(m)),
            Failure::Position(m) => Failure::Position(w(m)),
            Failure::Missing(m) => Failure::Missing(w(m)),
            Failure::Table(m) => Failure::Table(w(m)),
            Failure::Other(m) => Failure::Other(w(m)),
        }
    }
}

/// The value of a position, for the side to move.
#[pyclass(name = "Probe", frozen, module = "dtb", get_all)]
#[derive(Clone)]
struct ProbeValue {
    /// The position probed, as given.
    fen: String,
    /// "win", "draw" or "loss" for the side to move.
    wld: &'static str,
    /// Plies to the end of the game under perfect play (odd: a win, even: a loss; 0: the
    /// game is over, lost by the side with no move or no pieces); None for a draw or in a
    /// directory without distance tables.
    dtw: Option<u16>,
    /// The best move in PDN ("32-27"); None when the side to move has no move or the game is
    /// over (or a distance table a move leads to is missing).
    best_move: Option<String>,
}

#[pymethods]
impl ProbeValue {
    fn __repr__(&self) -> String {
        format!(
            "Probe(fen={:?}, wld={:?}, dtw={}, best_move={})",
            self.fen,
            self.wld,
            self.dtw.map_or("None".into(), |d| d.to_string()),
            self.best_move
                .as_ref()
                .map_or("None".into(), |m| format!("{m:?}"))
        )
    }

    fn __eq__(&self, other: &ProbeValue) -> bool {
        (self.fen.as_str(), self.wld, self.dtw, &self.best_move)
            == (other.fen.as_str(), other.wld, other.dtw, &other.best_move)
    }
}

/// One legal move with its value for the side making it.
#[pyclass(name = "Move", frozen, module = "dtb", get_all)]
#[derive(Clone)]
struct RankedMove {
    /// The move in PDN ("32-27", "18x25").
    r#move: String,
    /// "win", "draw" or "loss" for the mover.
    wld: &'static str,
    /// Plies to the end of the game counted from before the move, best play after it (the
    /// position's own distance for the best move); None for a draw or without distance
    /// tables.
    dtw: Option<u16>,
    /// The position after the move, as FEN.
    fen: String,
}

#[pymethods]
impl RankedMove {
    fn __repr__(&self) -> String {
        format!(
            "Move(move={:?}, wld={:?}, dtw={}, fen={:?})",
            self.r#move,
            self.wld,
            self.dtw.map_or("None".into(), |d| d.to_string()),
            self.fen
        )
    }
}

/// One ply of a best line ([`Tablebase::line`]), valued as a [`RankedMove`] is: for the side
/// making it.
#[pyclass(name = "Step", frozen, module = "dtb", get_all)]
#[derive(Clone)]
struct LineStep {
    /// The move in PDN ("32-27").
    r#move: String,
    /// "win", "draw" or "loss" for the mover.
    wld: &'static str,
    /// Plies to the end of the game counted from before the move, as `moves()` gives the
    /// best move (9, 8, ... down to 1 along a win in 9); None for a draw.
    dtw: Option<u16>,
    /// The position after the move, as FEN.
    fen: String,
}

#[pymethods]
impl LineStep {
    fn __repr__(&self) -> String {
        format!(
            "Step(move={:?}, wld={:?}, dtw={}, fen={:?})",
            self.r#move,
            self.wld,
            self.dtw.map_or("None".into(), |d| d.to_string()),
            self.fen
        )
    }
}

/// Tables of one variant in a directory, probed from any number of threads. `close()` (or
/// the end of a `with` block) lets the tables go: `None` in `tb` then.
#[pyclass(frozen, module = "dtb")]
struct Tablebase {
    tb: RwLock<Option<Arc<dtb_probe::Tablebase>>>,
    rules: Rules,
    dir: PathBuf,
    /// How moves and the positions after them are written.
    notation: Notation,
}

/// A text argument (a FEN, a variant): a Python `str`, else a TypeError in Python's words
/// (pyo3's own message names its Rust type, `PyString`).
struct Text(String);

impl<'py> FromPyObject<'py> for Text {
    fn extract_bound(ob: &Bound<'py, PyAny>) -> PyResult<Self> {
        match ob.downcast::<PyString>() {
            Ok(s) => Ok(Text(s.to_cow()?.into_owned())),
            Err(_) => Err(PyTypeError::new_err(format!(
                "expected str, not {}",
                ob.get_type().name()?
            ))),
        }
    }
}

impl Tablebase {
    /// The open tables, or ValueError after `close()` (as a closed Python file does). A
    /// probe holds its own reference, so `close()` from another thread never cuts one short.
    fn open(&self) -> PyResult<Arc<dtb_probe::Tablebase>> {
        self.tb
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
            .ok_or_else(|| PyValueError::new_err("the tablebase is closed"))
    }
}

fn parse(tb: &dtb_probe::Tablebase, text: &str) -> Result<Position, Failure> {
    fen::parse(text, tb.rules()).map_err(|e| match e {
        fen::FenError::Position(p) => {
            Failure::Position(format!("FEN {}: {p}", dtb_probe::quote(text)))
        }
        e => Failure::Fen(format!("FEN {}: {e}", dtb_probe::quote(text))),
    })
}

fn has_dtw(tb: &dtb_probe::Tablebase) -> bool {
    !tb.materials(ValueKind::Dtw).is_empty()
}

fn value(tb: &dtb_probe::Tablebase, pos: &Position) -> Result<Dtw, Failure> {
    match tb.probe_dtw(pos) {
        Err(ProbeError::MissingTable {
            kind: ValueKind::Dtw,
            ..
        }) => tb
            .probe_wld(pos)
            .map(|wld| Dtw { wld, plies: None })
            .map_err(Failure::of_probe),
        r => r.map_err(Failure::of_probe),
    }
}

fn probe_one(
    tb: &dtb_probe::Tablebase,
    text: &str,
    notation: Notation,
) -> Result<ProbeValue, Failure> {
    let pos = parse(tb, text)?;
    let v = value(tb, &pos)?;
    let ranked = if has_dtw(tb) {
        tb.probe_moves(&pos)
    } else {
        tb.probe_moves_wld(&pos)
    };
    let best_move = match ranked {
        Ok(r) => r.first().map(|r| {
            let mut all = Vec::new();
            legal_moves(tb.rules(), &pos, Counting::Unique, &mut all);
            notation_in(tb.rules(), notation, &r.mv, &all)
        }),
        Err(ProbeError::MissingTable { .. }) => None,
        Err(e) => return Err(Failure::of_probe(e)),
    };
    Ok(ProbeValue {
        fen: text.to_string(),
        wld: v.wld.as_str(),
        dtw: if v.wld == Wld::Draw { None } else { v.plies },
        best_move,
    })
}

/// Most plies `line()` plays from a drawn position (as `dtb probe --line` and the HTTP
/// mainline).
const DRAW_LINE_PLIES: usize = 40;

/// The best line from `text` to the end of the game, as `dtb probe --line` plays it.
fn play_line(
    tb: &dtb_probe::Tablebase,
    text: &str,
    notation: Notation,
) -> Result<Vec<LineStep>, Failure> {
    let mut pos = parse(tb, text)?;
    if !has_dtw(tb) {
        return Err(Failure::Missing(
            "line() plays the best moves, which needs DTW tables; the directory holds WLD \
             tables only (built with --wld-only)"
                .into(),
        ));
    }
    let start = tb.probe_dtw(&pos).map_err(Failure::of_probe)?;
    let limit = start.plies.map_or(DRAW_LINE_PLIES, usize::from);
    let mut steps = Vec::new();
    let mut all = Vec::new();
    while steps.len() < limit {
        // The move's value for the mover, as moves() gives it.
        let Some((m, v)) = tb.best_move(&pos).map_err(Failure::of_probe)? else {
            break;
        };
        all.clear();
        legal_moves(tb.rules(), &pos, Counting::Unique, &mut all);
        let name = notation_in(tb.rules(), notation, &m, &all);
        pos = m.apply_unchecked(&pos);
        steps.push(LineStep {
            r#move: name,
            wld: v.wld.as_str(),
            dtw: if v.wld == Wld::Draw { None } else { v.plies },
            fen: fen::write_in(&pos, tb.rules(), notation),
        });
    }
    Ok(steps)
}

#[pymethods]
impl Tablebase {
    /// Open the tables of `variant` (a preset name, as `dtb variants` lists them) in `dir`,
    /// with a block cache of about `cache_bytes` bytes. `notation` ("numeric" or "algebraic")
    /// is how moves and positions are written; by default as the variant's players write
    /// them (algebraic for Russian and Brazilian).
    #[new]
    #[pyo3(signature = (dir, variant = Text("english".into()), cache_bytes = 64 << 20, notation = None))]
    fn new(
        dir: PathBuf,
        variant: Text,
        cache_bytes: usize,
        notation: Option<Text>,
    ) -> PyResult<Tablebase> {
        let variant = variant.0.as_str();
        // A preset's name, or a preset with FIELD=VALUE overrides (as `dtb --variant`).
        let rules = Rules::parse(variant).map_err(|e| {
            PyValueError::new_err(format!("variant {}: {e}", dtb_probe::quote(variant)))
        })?;
        let notation = match notation {
            None => Notation::of(&rules),
            Some(Text(n)) => Notation::parse(&n).ok_or_else(|| {
                PyValueError::new_err(format!(
                    "notation {}: expected \"numeric\" or \"algebraic\"",
                    dtb_probe::quote(&n)
                ))
            })?,
        };
        if !dir.is_dir() {
            return Err(PyFileNotFoundError::new_err(format!(
                "table directory {} does not exist or is not a directory",
                dir.display()
            )));
        }
        let mut tb = dtb_probe::Tablebase::with_cache_bytes(rules, cache_bytes);
        tb.add_directory(&dir)
            .map_err(|e| Failure::of_probe(e).into_py())?;
        if tb.max_pieces() == 0 {
            return Err(PyFileNotFoundError::new_err(format!(
                "no {} tables in {} (build them with `dtb gen --variant {} --out DIR`)",
                rules.name,
                dir.display(),
                rules.spec()
            )));
        }
        Ok(Tablebase {
            rules: *tb.rules(),
            tb: RwLock::new(Some(Arc::new(tb))),
            dir,
            notation,
        })
    }

    /// The variant's name.
    #[getter]
    fn variant(&self) -> &'static str {
        self.rules.name
    }

    /// How moves and positions are written: "numeric" or "algebraic".
    #[getter]
    fn notation(&self) -> &'static str {
        self.notation.name()
    }

    /// The largest number of pieces of any table found.
    #[getter]
    fn max_pieces(&self) -> PyResult<u32> {
        Ok(self.open()?.max_pieces())
    }

    /// Win/loss/draw, distance in plies and best move of the position in PDN FEN.
    fn probe(&self, py: Python<'_>, fen: Text) -> PyResult<ProbeValue> {
        let tb = self.open()?;
        let notation = self.notation;
        py.allow_threads(|| probe_one(&tb, &fen.0, notation))
            .map_err(Failure::into_py)
    }

    /// The best line from the position to the end of the game, as `dtb probe --line` plays
    /// it: one Step a ply (the move, its value for the mover as `moves()` gives it, the FEN
    /// after it); a drawn position's line stops after 40 plies. Needs the DTW tables.
    fn line(&self, py: Python<'_>, fen: Text) -> PyResult<Vec<LineStep>> {
        let tb = self.open()?;
        let notation = self.notation;
        py.allow_threads(|| play_line(&tb, &fen.0, notation))
            .map_err(Failure::into_py)
    }

    /// Every legal move with its value for the mover and the position after it, best first.
    fn moves(&self, py: Python<'_>, fen: Text) -> PyResult<Vec<RankedMove>> {
        let tb = self.open()?;
        let notation = self.notation;
        py.allow_threads(|| -> Result<Vec<RankedMove>, Failure> {
            let tb = &*tb;
            let pos = parse(tb, &fen.0)?;
            let ranked = if has_dtw(tb) {
                tb.probe_moves(&pos)
            } else {
                tb.probe_moves_wld(&pos)
            }
            .map_err(Failure::of_probe)?;
            let mut all = Vec::new();
            legal_moves(tb.rules(), &pos, Counting::Unique, &mut all);
            Ok(ranked
                .iter()
                .map(|r| {
                    let v = r.for_mover();
                    RankedMove {
                        r#move: notation_in(tb.rules(), notation, &r.mv, &all),
                        wld: v.wld.as_str(),
                        dtw: if v.wld == Wld::Draw { None } else { v.plies },
                        fen: fen::write_in(&r.mv.apply_unchecked(&pos), tb.rules(), notation),
                    }
                })
                .collect())
        })
        .map_err(Failure::into_py)
    }

    /// `probe` of every FEN of an iterable (a list, a generator, ...), in order, with the GIL
    /// released for the whole batch. Raises the first failure (its message names the FEN's
    /// index).
    fn probe_many(&self, py: Python<'_>, fens: &Bound<'_, PyAny>) -> PyResult<Vec<ProbeValue>> {
        let tb = self.open()?;
        if fens.is_instance_of::<PyString>() {
            return Err(PyTypeError::new_err(
                "probe_many takes an iterable of FEN strings, not one str: use probe()",
            ));
        }
        let iter = fens.try_iter().map_err(|_| {
            let kind = fens.get_type().name().map_or("?".into(), |n| n.to_string());
            PyTypeError::new_err(format!(
                "probe_many takes an iterable of FEN strings, not {kind}"
            ))
        })?;
        let mut texts = Vec::new();
        for (i, f) in iter.enumerate() {
            let f = f?;
            let text = f
                .extract::<Text>()
                .map_err(|e| PyTypeError::new_err(format!("fens[{i}]: {}", e.value(py))))?;
            texts.push(text.0);
        }
        let notation = self.notation;
        py.allow_threads(|| {
            texts
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    probe_one(&tb, f, notation).map_err(|e| e.with_context(&format!("fens[{i}]")))
                })
                .collect::<Result<Vec<_>, _>>()
        })
        .map_err(Failure::into_py)
    }

    /// Win/loss/draw alone ("win", "draw", "loss"): the cheapest probe.
    fn probe_wld(&self, py: Python<'_>, fen: Text) -> PyResult<&'static str> {
        let tb = self.open()?;
        py.allow_threads(|| {
            let pos = parse(&tb, &fen.0)?;
            tb.probe_wld(&pos)
                .map(Wld::as_str)
                .map_err(Failure::of_probe)
        })
        .map_err(Failure::into_py)
    }

    /// The block cache's counters: hits, misses, not_cached, bytes, blocks, thread_bytes (the
    /// probing threads' recent blocks; bytes + thread_bytes <= capacity_bytes), capacity_bytes.
    fn cache_stats(&self) -> PyResult<std::collections::HashMap<&'static str, u64>> {
        let s = self.open()?.cache_stats();
        Ok([
            ("hits", s.hits),
            ("misses", s.misses),
            ("not_cached", s.not_cached),
            ("bytes", s.bytes),
            ("blocks", s.blocks as u64),
            ("thread_bytes", s.thread_bytes),
            ("capacity_bytes", s.capacity_bytes as u64),
        ]
        .into_iter()
        .collect())
    }

    /// Let the tables go (their files and block cache): every later call but `close()` raises
    /// ValueError. Probes running in other threads finish first. Closing twice is allowed.
    fn close(&self) {
        let tables = self
            .tb
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        drop(tables);
    }

    /// `with dtb.Tablebase(...) as tb:` closes the tables at the end of the block.
    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, _exc: &Bound<'_, pyo3::types::PyTuple>) -> bool {
        self.close();
        false
    }

    fn __repr__(&self) -> String {
        format!(
            "Tablebase({:?}, {:?})",
            self.dir.display().to_string(),
            self.rules.name
        )
    }
}

/// Draughts endgame tablebases built by `dtb gen`: win/loss/draw, exact distance to the end
/// of the game in plies, the best move, every move ranked and the best line.
///
///     import dtb
///     with dtb.Tablebase("tables", "english") as tb:
///         tb.probe("W:WK32:BK26")   # Probe(fen="W:WK32:BK26", wld="win", dtw=9, best_move="32-27")
///         tb.moves("W:WK32:BK26")   # every legal move, best first
///         tb.line("W:WK32:BK26")    # the best line to the end of the game
///
/// Errors are dtb.FenError, dtb.PositionError, dtb.MissingTableError, dtb.TableError (all
/// dtb.DtbError); FileNotFoundError for a directory without tables of the variant.
#[pymodule]
fn dtb(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Tablebase>()?;
    m.add_class::<LineStep>()?;
    m.add_class::<ProbeValue>()?;
    m.add_class::<RankedMove>()?;
    let py = m.py();
    m.add("DtbError", py.get_type::<DtbError>())?;
    m.add("FenError", py.get_type::<FenError>())?;
    m.add("PositionError", py.get_type::<PositionError>())?;
    m.add("MissingTableError", py.get_type::<MissingTableError>())?;
    m.add("TableError", py.get_type::<TableError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
