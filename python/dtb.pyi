"""Draughts endgame tablebases built by ``dtb gen``: win/loss/draw, exact distance to the end
of the game in plies, the best move and every move ranked.

>>> import dtb
>>> with dtb.Tablebase("tables", "english") as tb:
...     tb.probe("W:WK32:BK26")
Probe(fen="W:WK32:BK26", wld="win", dtw=9, best_move="32-27")
"""

import os
from types import TracebackType
from typing import Dict, Iterable, List, Literal, Optional, Type, Union

__version__: str

Wld = Literal["win", "draw", "loss"]
Category = Literal["win", "cursed-win", "draw", "blessed-loss", "loss"]
"""A value under a count rule at counter 0, with lichess's names: a cursed win is won
game-theoretically but drawn by the rule, a blessed loss lost but drawn by it."""

class DtbError(Exception):
    """Any error dtb reports (the message is dtb's)."""

class FenError(DtbError):
    """The FEN text could not be parsed."""

class PositionError(DtbError):
    """The position is not legal under the variant's rules, or the game is over."""

class MissingTableError(DtbError):
    """A table the probe needs is not in the directory (more pieces than were built)."""

class TableError(DtbError):
    """A table file could not be read, is corrupt, or holds another variant's values."""

class CounterError(DtbError):
    """A counter that is negative, or at or over the limit of the position's count regime
    (the game is then already drawn by the count rule)."""

class Probe:
    """The value of a position, for the side to move."""

    fen: str
    wld: Wld
    dtw: Optional[int]
    """Plies to the end of the game under perfect play (odd: win, even: loss; 0: the game
    is over, lost by the side with no move or no pieces); None for a draw or in a directory
    without distance tables."""
    best_move: Optional[str]
    """The best move in the Tablebase's notation ("32-27", or "c3-b4" for Russian and
    Brazilian); None when the side to move has no move or the game is over."""

class Move:
    """One legal move with its value for the side making it."""

    move: str
    """In the Tablebase's notation: "32-27", "22x15"; algebraic "c3-b4", "c3:e5"."""
    wld: Wld
    dtw: Optional[int]
    """Plies to the end counted from before the move, best play after it."""
    fen: str
    """The position after the move, in the Tablebase's notation."""

class Dtc:
    """The value of a position under the count rule (Tablebase.probe_dtc), for the side to
    move: the profile's (the variant's preset, or ``count=`` in the variant text)."""

    fen: str
    category: Category
    """The value at counter 0."""
    result: Wld
    """The result at ``counter``: a win (loss) only while ``dtc <= limit - counter``."""
    dtc: Optional[int]
    """Plies to conversion: to the next capture or man move that keeps the result under the
    rule, or to the end of the game (winner fastest, loser slowest); over ``limit`` for a
    cursed win or blessed loss; None for a draw."""
    counter: int
    """Plies since the counter was last reset (as given)."""
    limit: Optional[int]
    """The limit in plies of the position's count regime; None where no count rule applies."""

class DtcMove:
    """One legal move with the value under the count rule of the position after it, for its
    side to move (the mover's opponent) at its counter, as the HTTP API gives each move."""

    move: str
    category: Category
    result: Wld
    dtc: Optional[int]
    counter: int
    """The counter after the move: 0 if it resets the counter, else one more."""
    zeroing: bool
    """Whether the move resets the counter (a capture or a man move, as the profile says)."""
    fen: str
    """The position after the move."""

class Step:
    """One ply of a best line (Tablebase.line), valued as a Move is: for the side making it,
    the same numbers as ``dtb probe --line --json`` and the HTTP API's mainline give."""

    move: str
    wld: Wld
    """For the mover: "win", "loss" alternate along a decisive line."""
    dtw: Optional[int]
    """Plies to the end of the game counted from before the move (9, 8, ..., 1 along a win
    in 9), as moves() gives the best move; None for a draw."""
    fen: str
    """The position after the move."""

class Tablebase:
    """Tables of one variant in a directory; safe to share between threads. A context
    manager: ``with dtb.Tablebase(...) as tb:`` closes it at the end of the block."""

    def __init__(
        self,
        dir: Union[str, "os.PathLike[str]"],
        variant: str = "english",
        cache_bytes: int = 64 << 20,
        notation: Optional[Literal["numeric", "algebraic"]] = None,
    ) -> None:
        """``variant``: a preset's name, with ``FIELD=VALUE`` overrides and ``count=`` as ``dtb
        --variant`` takes them ("english,count=20": the count profile of probe_dtc).
        ``notation``: how moves and FEN are written; by default as the variant's players
        write them (algebraic squares for Russian and Brazilian, numbers for the others).
        FEN arguments may be in either. Raises FileNotFoundError (no such directory, or no
        tables of the variant in it; the message says how to build them) or ValueError
        (unknown variant or notation)."""
    @property
    def variant(self) -> str: ...
    @property
    def max_pieces(self) -> int: ...
    @property
    def notation(self) -> Literal["numeric", "algebraic"]:
        """How moves and FEN are written."""
    def probe(self, fen: str) -> Probe:
        """Raises FenError, PositionError, MissingTableError, TableError."""
    def moves(self, fen: str) -> List[Move]:
        """Every legal move, best first (wins fastest first, draws, losses slowest first)."""
    def line(self, fen: str) -> List[Step]:
        """The best line to the end of the game, as ``dtb probe --line`` plays it (a drawn
        position's stops after 40 plies). Needs the DTW tables (MissingTableError without)."""
    def probe_many(self, fens: Iterable[str]) -> List[Probe]:
        """probe() of each FEN of any iterable (a list, a generator) with the GIL released;
        raises the first failure. TypeError for a single str or an item that is not one."""
    def probe_wld(self, fen: str) -> Wld: ...
    def probe_dtc(self, fen: str, counter: int = 0) -> Dtc:
        """The value under the count rule ``counter`` plies after the counter was last reset.
        Needs DTC tables built under the Tablebase's profile (``dtb gen --values dtc``;
        MissingTableError without, TableError for another profile's); CounterError for a
        counter below 0 or at or over the limit."""
    def moves_dtc(self, fen: str, counter: int = 0) -> List[DtcMove]:
        """Every legal move at ``counter``, best first for the mover under the count rule:
        wins at this counter fastest first, then cursed wins, draws, blessed losses, losses
        slowest first."""
    def cache_stats(self) -> Dict[str, int]:
        """hits, misses, not_cached, bytes, blocks, thread_bytes, capacity_bytes (bytes + thread_bytes <= capacity_bytes)."""
    def close(self) -> None:
        """Let the tables go; every later call but close() raises ValueError."""
    def __enter__(self) -> "Tablebase": ...
    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> bool: ...
