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

use dtb_probe::internal::format::ValueKind;
use dtb_probe::movegen::{legal_moves, pdn_in_for, Counting};
use dtb_probe::{fen, Dtw, Position, ProbeError, Rules, Wld};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyFileNotFoundError, PyValueError};
use pyo3::prelude::*;

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
    /// Plies to the end of the game under perfect play (odd: a win, even: a loss); None for
    /// a draw or in a directory without distance tables.
    dtw: Option<u16>,
    /// The best move in PDN ("32-27"); None when the side to move has no move (or a distance
    /// table a move leads to is missing).
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

/// Tables of one variant in a directory, probed from any number of threads.
#[pyclass(frozen, module = "dtb")]
struct Tablebase {
    tb: dtb_probe::Tablebase,
    dir: PathBuf,
}

fn parse(tb: &dtb_probe::Tablebase, text: &str) -> Result<Position, Failure> {
    fen::parse(text, tb.rules()).map_err(|e| match e {
        fen::FenError::Position(p) => Failure::Position(format!("FEN {text:?}: {p}")),
        e => Failure::Fen(format!("FEN {text:?}: {e}")),
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

fn probe_one(tb: &dtb_probe::Tablebase, text: &str) -> Result<ProbeValue, Failure> {
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
            pdn_in_for(tb.rules(), &r.mv, &all)
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

#[pymethods]
impl Tablebase {
    /// Open the tables of `variant` (a preset name, as `dtb variants` lists them) in `dir`,
    /// with a block cache of about `cache_bytes` bytes.
    #[new]
    #[pyo3(signature = (dir, variant = "english", cache_bytes = 64 << 20))]
    fn new(dir: PathBuf, variant: &str, cache_bytes: usize) -> PyResult<Tablebase> {
        // A preset's name, or a preset with FIELD=VALUE overrides (as `dtb --variant`).
        let rules = Rules::parse(variant)
            .map_err(|e| PyValueError::new_err(format!("variant {variant:?}: {e}")))?;
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
                rules.name
            )));
        }
        Ok(Tablebase { tb, dir })
    }

    /// The variant's name.
    #[getter]
    fn variant(&self) -> &'static str {
        self.tb.rules().name
    }

    /// The largest number of pieces of any table found.
    #[getter]
    fn max_pieces(&self) -> u32 {
        self.tb.max_pieces()
    }

    /// Win/loss/draw, distance in plies and best move of the position in PDN FEN.
    fn probe(&self, py: Python<'_>, fen: &str) -> PyResult<ProbeValue> {
        py.allow_threads(|| probe_one(&self.tb, fen))
            .map_err(Failure::into_py)
    }

    /// Every legal move with its value for the mover and the position after it, best first.
    fn moves(&self, py: Python<'_>, fen: &str) -> PyResult<Vec<RankedMove>> {
        py.allow_threads(|| -> Result<Vec<RankedMove>, Failure> {
            let tb = &self.tb;
            let pos = parse(tb, fen)?;
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
                        r#move: pdn_in_for(tb.rules(), &r.mv, &all),
                        wld: v.wld.as_str(),
                        dtw: if v.wld == Wld::Draw { None } else { v.plies },
                        fen: fen::write_for(&r.mv.apply_unchecked(&pos), tb.rules()),
                    }
                })
                .collect())
        })
        .map_err(Failure::into_py)
    }

    /// `probe` of every FEN, in order, with the GIL released for the whole batch. Raises the
    /// first failure (its message names the FEN's index).
    fn probe_many(&self, py: Python<'_>, fens: Vec<String>) -> PyResult<Vec<ProbeValue>> {
        py.allow_threads(|| {
            fens.iter()
                .enumerate()
                .map(|(i, f)| {
                    probe_one(&self.tb, f).map_err(|e| e.with_context(&format!("fens[{i}]")))
                })
                .collect::<Result<Vec<_>, _>>()
        })
        .map_err(Failure::into_py)
    }

    /// Win/loss/draw alone ("win", "draw", "loss"): the cheapest probe.
    fn probe_wld(&self, py: Python<'_>, fen: &str) -> PyResult<&'static str> {
        py.allow_threads(|| {
            let pos = parse(&self.tb, fen)?;
            self.tb
                .probe_wld(&pos)
                .map(Wld::as_str)
                .map_err(Failure::of_probe)
        })
        .map_err(Failure::into_py)
    }

    /// The block cache's counters: hits, misses, not_cached, bytes, blocks, thread_bytes (the
    /// probing threads' recent blocks; bytes + thread_bytes <= capacity_bytes), capacity_bytes.
    fn cache_stats(&self) -> std::collections::HashMap<&'static str, u64> {
        let s = self.tb.cache_stats();
        [
            ("hits", s.hits),
            ("misses", s.misses),
            ("not_cached", s.not_cached),
            ("bytes", s.bytes),
            ("blocks", s.blocks as u64),
            ("thread_bytes", s.thread_bytes),
            ("capacity_bytes", s.capacity_bytes as u64),
        ]
        .into_iter()
        .collect()
    }

    fn __repr__(&self) -> String {
        format!(
            "Tablebase({:?}, {:?})",
            self.dir.display().to_string(),
            self.tb.rules().name
        )
    }
}

#[pymodule]
fn dtb(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Tablebase>()?;
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
