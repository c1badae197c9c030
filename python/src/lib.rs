//! `import dtb`: the Python face of dtb-probe (see `dtb.pyi` for the API with types).
//!
//! ```python
//! import dtb
//! tb = dtb.Tablebase("tables", "english")
//! p = tb.probe("W:WK32:BK26")      # Probe(wld='win', dtw=9, best_move='32-27')
//! tb.moves("W:WK32:BK26")          # [Move('32-27', 'win', 9, 'B:WK27:BK26'), Move('32-28', 'draw', ...)]
//! tb.probe_many(["W:WK32:BK26", "B:WK32:BK26"])   # the GIL released while probing
//! dtb.Tablebase("tables", "english,count=20").probe_dtc("W:WK1,K19:BK27", counter=0)
//! # Dtc(category="cursed-win", result="draw", dtc=21, counter=0, limit=20): DTC tables
//! ```
//!
//! Errors are Python exceptions carrying dtb's message: `dtb.FenError`,
//! `dtb.PositionError`, `dtb.MissingTableError`, `dtb.TableError`, `dtb.CounterError`, all
//! subclasses of `dtb.DtbError`; a missing directory (or one without tables of the variant)
//! is `FileNotFoundError`, an unknown variant `ValueError`.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use dtb_probe::fen::Notation;
use dtb_probe::internal::format::ValueKind;
use dtb_probe::movegen::{legal_moves, notation_in, Counting};
use dtb_probe::{fen, Dtw, Position, ProbeError, Rules, Variant, Wld};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyFileNotFoundError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyInt, PyString};

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
create_exception!(
    dtb,
    CounterError,
    DtbError,
    "A counter that is negative, or at or over the limit of the position's count regime."
);

/// A failure before it becomes a Python exception (so that it can cross `allow_threads`).
enum Failure {
    Fen(String),
    Position(String),
    Missing(String),
    Table(String),
    Counter(String),
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
            ProbeError::CounterOutOfRange { .. } => Failure::Counter(m),
            ProbeError::Directory { .. } | ProbeError::CapturePosition => Failure::Other(m),
        }
    }

    fn into_py(self) -> PyErr {
        match self {
            Failure::Fen(m) => FenError::new_err(m),
            Failure::Position(m) => PositionError::new_err(m),
            Failure::Missing(m) => MissingTableError::new_err(m),
            Failure::Table(m) => TableError::new_err(m),
            Failure::Counter(m) => CounterError::new_err(m),
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
            Failure::Counter(m) => Failure::Counter(w(m)),
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

/// The value of a position under the count rule at a counter ([`Tablebase::probe_dtc`]).
#[pyclass(name = "Dtc", frozen, module = "dtb", get_all)]
#[derive(Clone)]
struct DtcValue {
    /// The position probed, as given.
    fen: String,
    /// Its value at counter 0 (lichess's names): "win", "cursed-win", "draw",
    /// "blessed-loss" or "loss".
    category: &'static str,
    /// "win", "draw" or "loss" for the side to move at `counter`.
    result: &'static str,
    /// Plies to conversion (the next capture or man move that keeps the result under the
    /// rule, or the end of the game); None for a draw.
    dtc: Option<u16>,
    /// Plies since the counter was last reset.
    counter: u16,
    /// The limit in plies of the position's count regime; None where no count rule applies.
    limit: Option<u16>,
}

#[pymethods]
impl DtcValue {
    fn __repr__(&self) -> String {
        format!(
            "Dtc(fen={:?}, category={:?}, result={:?}, dtc={}, counter={}, limit={})",
            self.fen,
            self.category,
            self.result,
            opt(self.dtc),
            self.counter,
            opt(self.limit)
        )
    }

    fn __eq__(&self, other: &DtcValue) -> bool {
        (
            &self.fen,
            self.category,
            self.result,
            self.dtc,
            self.counter,
            self.limit,
        ) == (
            &other.fen,
            other.category,
            other.result,
            other.dtc,
            other.counter,
            other.limit,
        )
    }
}

fn opt(v: Option<u16>) -> String {
    v.map_or("None".into(), |d| d.to_string())
}

/// One legal move with the value under the count rule of the position after it, for its
/// side to move (the mover's opponent) at its counter ([`Tablebase::moves_dtc`]).
#[pyclass(name = "DtcMove", frozen, module = "dtb", get_all)]
#[derive(Clone)]
struct DtcMove {
    /// The move ("32-27", "18x25").
    r#move: String,
    /// The position after the move at counter 0, for its side to move.
    category: &'static str,
    /// The position after the move at its counter, for its side to move.
    result: &'static str,
    /// Plies to conversion after the move; None for a draw.
    dtc: Option<u16>,
    /// The counter after the move: 0 if it resets the counter, else one more.
    counter: u16,
    /// Whether the move resets the counter (a capture or a man move, as the profile says).
    zeroing: bool,
    /// The position after the move, as FEN.
    fen: String,
}

#[pymethods]
impl DtcMove {
    fn __repr__(&self) -> String {
        format!(
            "DtcMove(move={:?}, category={:?}, result={:?}, dtc={}, counter={}, zeroing={}, fen={:?})",
            self.r#move,
            self.category,
            self.result,
            opt(self.dtc),
            self.counter,
            if self.zeroing { "True" } else { "False" },
            self.fen
        )
    }
}

/// A counter from Python: any int, a whole number from 0 to 65535 (the probe then checks it
/// against the position's limit), else CounterError, however large; not an int, TypeError.
struct Counter(u16);

impl<'py> FromPyObject<'py> for Counter {
    fn extract_bound(ob: &Bound<'py, PyAny>) -> PyResult<Self> {
        match ob.extract::<i64>() {
            Ok(n) => counter_of(n).map(Counter),
            // An int beyond 64 bits: said without echoing its digits.
            Err(_) if ob.is_instance_of::<PyInt>() => Err(CounterError::new_err(if ob.lt(0)? {
                "counter is below 0: plies since the last capture or man move, 0 or more"
            } else {
                "counter is over every count limit (at most 65535 plies)"
            })),
            Err(e) => Err(e),
        }
    }
}

fn counter_of(counter: i64) -> PyResult<u16> {
    u16::try_from(counter).map_err(|_| {
        CounterError::new_err(if counter < 0 {
            format!("counter is {counter}: plies since the last capture or man move, 0 or more")
        } else {
            format!("counter {counter} is over every count limit (at most 65535 plies)")
        })
    })
}

fn dtc_value(text: &str, d: &dtb_probe::Dtc) -> DtcValue {
    DtcValue {
        fen: text.to_string(),
        category: d.category.as_str(),
        result: d.result.as_str(),
        dtc: d.plies,
        counter: d.counter,
        limit: d.limit,
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
        // A preset's name, or a preset with FIELD=VALUE overrides and count= (as `dtb
        // --variant`).
        let parsed = Variant::parse(variant).map_err(|e| {
            PyValueError::new_err(format!("variant {}: {e}", dtb_probe::quote(variant)))
        })?;
        let rules = parsed.rules;
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
        tb.set_count_profile(parsed.count);
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

    /// The value under the count rule of the variant (its preset's, or `count=` in the
    /// variant text: "english,count=20") when `counter` plies have passed since the counter
    /// was last reset: category at counter 0, result at `counter`, plies to conversion.
    /// Needs DTC tables built under that profile (`dtb gen --values dtc`).
    #[pyo3(signature = (fen, counter = Counter(0)), text_signature = "($self, fen, counter=0)")]
    fn probe_dtc(&self, py: Python<'_>, fen: Text, counter: Counter) -> PyResult<DtcValue> {
        let tb = self.open()?;
        let counter = counter.0;
        py.allow_threads(|| {
            let pos = parse(&tb, &fen.0)?;
            tb.probe_dtc(&pos, counter)
                .map(|d| dtc_value(&fen.0, &d))
                .map_err(Failure::of_probe)
        })
        .map_err(Failure::into_py)
    }

    /// Every legal move at `counter`, best first for the mover under the count rule, each
    /// with the value of the position after it for its side to move at its counter.
    #[pyo3(signature = (fen, counter = Counter(0)), text_signature = "($self, fen, counter=0)")]
    fn moves_dtc(&self, py: Python<'_>, fen: Text, counter: Counter) -> PyResult<Vec<DtcMove>> {
        let tb = self.open()?;
        let counter = counter.0;
        let notation = self.notation;
        py.allow_threads(|| -> Result<Vec<DtcMove>, Failure> {
            let tb = &*tb;
            let pos = parse(tb, &fen.0)?;
            let ranked = tb
                .probe_moves_dtc(&pos, counter)
                .map_err(Failure::of_probe)?;
            let mut all = Vec::new();
            legal_moves(tb.rules(), &pos, Counting::Unique, &mut all);
            Ok(ranked
                .iter()
                .map(|r| DtcMove {
                    r#move: notation_in(tb.rules(), notation, &r.mv, &all),
                    category: r.after.category.as_str(),
                    result: r.after.result.as_str(),
                    dtc: r.after.plies,
                    counter: r.after.counter,
                    zeroing: r.zeroing,
                    fen: fen::write_in(&r.mv.apply_unchecked(&pos), tb.rules(), notation),
                })
                .collect())
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
    m.add_class::<DtcValue>()?;
    m.add_class::<DtcMove>()?;
    let py = m.py();
    m.add("DtbError", py.get_type::<DtbError>())?;
    m.add("FenError", py.get_type::<FenError>())?;
    m.add("PositionError", py.get_type::<PositionError>())?;
    m.add("MissingTableError", py.get_type::<MissingTableError>())?;
    m.add("TableError", py.get_type::<TableError>())?;
    m.add("CounterError", py.get_type::<CounterError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
