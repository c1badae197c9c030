"""The Python package against real tables (English 2-4, built by run-tests.sh; the directory is
$DTB_TABLES) and against pydraughts, an independent implementation of the rules."""

import json
import os
import pathlib
import subprocess
import threading

import pytest

import dtb
from draughts import Board

TABLES = os.environ.get("DTB_TABLES", "tables")


@pytest.fixture(scope="module")
def tb():
    return dtb.Tablebase(TABLES, "english")


def test_taking_the_move(tb):
    p = tb.probe("W:WK32:BK26")
    assert (p.wld, p.dtw, p.best_move) == ("win", 9, "32-27")
    q = tb.probe("B:WK32:BK26")
    assert (q.wld, q.dtw, q.best_move) == ("draw", None, "26-22")
    assert "win" in repr(p) and "32-27" in repr(p)
    assert tb.probe_wld("W:WK32:BK26") == "win"
    assert tb.variant == "english" and tb.max_pieces == 4


def test_moves_are_ranked_best_first(tb):
    moves = tb.moves("W:WK32:BK26")
    assert [(m.move, m.wld, m.dtw, m.fen) for m in moves] == [
        ("32-27", "win", 9, "B:WK27:BK26"),
        ("32-28", "draw", None, "B:WK28:BK26"),
    ]


def test_a_position_from_pydraughts(tb):
    """pydraughts plays each legal move and writes the FEN; dtb's value of the position after
    it is the move's value in tb.moves(), reversed for the other side."""
    start = "W:W22,K1:B18,K3"
    ours = {m.move: m for m in tb.moves(start)}
    board = Board(variant="english", fen=start)
    legal = board.legal_moves()
    assert sorted(m.pdn_move for m in legal) == sorted(ours)
    flip = {"win": "loss", "loss": "win", "draw": "draw"}
    for m in legal:
        after = board.copy()
        after.push(m)
        fen = after.fen
        p = tb.probe(fen)
        mine = ours[m.pdn_move]
        assert p.wld == flip[mine.wld], (m.pdn_move, fen)
        assert (p.dtw + 1 if p.dtw is not None else None) == mine.dtw, (m.pdn_move, fen)
    # The capture 22x15 wins: the position after it, Black to move, is lost in 8 plies.
    after = board.copy()
    after.push([m for m in legal if m.pdn_move == "22x15"][0])
    p = tb.probe(after.fen)
    assert (p.wld, p.dtw) == ("loss", 8)


def test_pydraughts_start_fen_is_out_of_the_tables(tb):
    fen = Board(variant="english").fen
    with pytest.raises(dtb.MissingTableError, match="no wld table for slice"):
        tb.probe(fen)


def test_probe_many_equals_probe_and_releases_the_gil(tb):
    fens = ["W:WK32:BK26", "B:WK32:BK26", "W:W22,K1:B18,K3", "B:W22:B18"] * 250
    many = tb.probe_many(fens)
    assert len(many) == len(fens)
    for f, p in zip(fens[:4], many[:4]):
        q = tb.probe(f)
        assert (p.fen, p.wld, p.dtw, p.best_move) == (q.fen, q.wld, q.dtw, q.best_move)
    # Other Python threads run while probe_many works: each probes its own batch, and all
    # answers agree.
    results = {}

    def run(i):
        results[i] = tb.probe_many(fens)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results.values():
        assert [(p.wld, p.dtw) for p in r] == [(p.wld, p.dtw) for p in many]


def test_errors_are_exceptions_with_dtbs_message(tb):
    with pytest.raises(dtb.FenError, match='FEN "nonsense"'):
        tb.probe("nonsense")
    with pytest.raises(dtb.PositionError, match="crowning row"):
        tb.probe("W:W1:BK26")
    with pytest.raises(dtb.PositionError, match="board is empty"):
        tb.probe("W:W:B")
    with pytest.raises(dtb.MissingTableError, match="5 pieces"):
        tb.probe("W:WK1,K2,K3:BK30,K31")
    with pytest.raises(dtb.DtbError, match=r"fens\[1\]"):
        tb.probe_many(["W:WK32:BK26", "bad"])
    with pytest.raises(FileNotFoundError, match="does not exist"):
        dtb.Tablebase("/nonexistent/tables", "english")
    with pytest.raises(FileNotFoundError, match="no international tables"):
        dtb.Tablebase(TABLES, "international")
    with pytest.raises(ValueError, match="unknown variant"):
        dtb.Tablebase(TABLES, "chess")
    with pytest.raises(TypeError, match="expected str, not NoneType"):
        tb.probe(None)


def test_corrupt_table_is_a_table_error(tmp_path):
    for f in pathlib.Path(TABLES).iterdir():
        if f.is_file() and not f.name.startswith("."):
            (tmp_path / f.name).write_bytes(f.read_bytes())
    for ext in ["wld", "dtw"]:
        f = tmp_path / f"english-0101.{ext}"
        f.write_bytes(f.read_bytes()[:100])
    broken = dtb.Tablebase(tmp_path, "english")
    with pytest.raises(dtb.TableError, match=r"english-0101\.dtw"):
        broken.probe("W:WK32:BK26")
    with pytest.raises(dtb.TableError, match=r"english-0101\.wld"):
        broken.probe_wld("W:WK32:BK26")


def test_cache_stats(tb):
    tb.probe("W:WK32:BK26")
    s = tb.cache_stats()
    assert s["hits"] + s["misses"] > 0 and s["bytes"] > 0 and s["capacity_bytes"] == 64 << 20
    assert s["bytes"] + s["thread_bytes"] <= s["capacity_bytes"]


def test_type_stubs_are_installed():
    pkg = pathlib.Path(dtb.__file__).parent
    stubs = list(pkg.glob("*.pyi"))
    assert stubs, f"no .pyi beside {dtb.__file__}"
    assert "def probe_many" in stubs[0].read_text()


def test_line_is_the_best_line_to_the_end(tb):
    steps = tb.line("W:WK32:BK26")
    assert len(steps) == 9
    # Each step is valued for its mover, as moves() values the best move (issue 36).
    assert (steps[0].move, steps[0].wld, steps[0].dtw, steps[0].fen) == (
        "32-27",
        "win",
        9,
        "B:WK27:BK26",
    )
    assert [s.dtw for s in steps] == [9, 8, 7, 6, 5, 4, 3, 2, 1]
    assert [s.wld for s in steps] == ["win", "loss"] * 4 + ["win"]
    assert steps[-1].fen.endswith(":B")
    # Each step is the best move of the position before it.
    before = "W:WK32:BK26"
    for s in steps:
        assert tb.probe(before).best_move == s.move
        before = s.fen
    assert "Step(move=" in repr(steps[0])
    draw = tb.line("B:WK32:BK26")
    assert len(draw) == 40 and all(s.dtw is None and s.wld == "draw" for s in draw)
    assert tb.line("W:WK32:B") == []


def test_context_manager_and_close():
    with dtb.Tablebase(TABLES, "english") as t:
        assert t.probe_wld("W:WK32:BK26") == "win"
    with pytest.raises(ValueError, match="closed"):
        t.probe("W:WK32:BK26")
    with pytest.raises(ValueError, match="closed"):
        t.probe_many(["W:WK32:BK26"])
    assert t.variant == "english"
    t.close()  # twice is allowed
    u = dtb.Tablebase(TABLES, "english")
    u.close()
    with pytest.raises(ValueError, match="closed"):
        u.moves("W:WK32:BK26")
    # An exception in the block still closes, and is not swallowed.
    with pytest.raises(dtb.FenError):
        with dtb.Tablebase(TABLES, "english") as v:
            v.probe("nonsense")
    with pytest.raises(ValueError, match="closed"):
        v.line("W:WK32:BK26")


def test_module_docstring():
    assert dtb.__doc__ and "dtb gen" in dtb.__doc__ and "Tablebase" in dtb.__doc__


def test_probe_many_takes_any_iterable(tb):
    fens = ["W:WK32:BK26", "B:WK32:BK26"]
    want = [(p.wld, p.dtw) for p in tb.probe_many(fens)]
    assert want == [("win", 9), ("draw", None)]
    assert [(p.wld, p.dtw) for p in tb.probe_many(f for f in fens)] == want
    assert [(p.wld, p.dtw) for p in tb.probe_many(tuple(fens))] == want
    assert [(p.wld, p.dtw) for p in tb.probe_many(iter(fens))] == want
    assert tb.probe_many(x for x in []) == []


def test_type_errors_name_python_types_not_rust_ones(tb):
    cases = [
        (lambda: tb.probe_many("W:WK32:BK26"), "not one str"),
        (lambda: tb.probe_many(5), "not int"),
        (lambda: tb.probe_many(["W:WK32:BK26", 7]), r"fens\[1\]: expected str, not int"),
        (lambda: tb.probe(b"W:WK32:BK26"), "expected str, not bytes"),
        (lambda: tb.moves(1), "expected str, not int"),
        (lambda: tb.line(None), "expected str, not NoneType"),
        (lambda: dtb.Tablebase(TABLES, None), "expected str, not NoneType"),
    ]
    for call, words in cases:
        with pytest.raises(TypeError, match=words) as e:
            call()
        for rust in ["Vec", "Sequence", "PyString", "PyAny", "String"]:
            assert rust not in str(e.value), str(e.value)


def test_missing_tables_hint_is_a_command_dtb_gen_takes(tmp_path):
    with pytest.raises(FileNotFoundError) as e:
        dtb.Tablebase(tmp_path, "english,blocked=majority")
    assert "no english+blocked=majority tables" in str(e.value)
    assert "`dtb gen --variant english,blocked=majority --out DIR`" in str(e.value)


def test_a_10_mb_fen_is_not_echoed_whole(tb):
    fen = "W:W" + "7" * (10 << 20) + ":B2"
    with pytest.raises(dtb.FenError) as e:
        tb.probe(fen)
    msg = str(e.value)
    assert len(msg) < 300, len(msg)
    assert msg.startswith('FEN "%s"... (10485766 bytes): ' % fen[:40]), msg[:200]
    with pytest.raises(ValueError) as e:
        dtb.Tablebase(TABLES, "x" * (10 << 20))
    assert len(str(e.value)) < 600


def test_a_side_with_no_pieces_is_answered_as_a_blocked_side(tb):
    """Issue 36: a finished game is a value, whether the side to move is blocked or has no
    pieces: lost in 0 plies, no best move, no moves; facing no pieces, won in 0 plies."""
    for fen, wld in [
        ("W:W29:B25,22", "loss"),  # blocked: 25 taken, the jump to 22 blocked
        ("W:W:B25,22", "loss"),  # no pieces
        ("W:W18:B", "win"),  # the opponent has no pieces
        ("B:W:B25,22", "win"),
    ]:
        p = tb.probe(fen)
        assert (p.wld, p.dtw, p.best_move) == (wld, 0, None), fen
        assert tb.probe_wld(fen) == wld, fen
        assert tb.moves(fen) == [], fen
        assert tb.line(fen) == [], fen


def test_a_moves_value_is_the_movers_as_in_the_cli(tb):
    """Issue 36: one convention for a move's value: moves() gives each move its value for the
    mover, the same values (and order) as `dtb probe --moves --json`, the HTTP API's moves
    and C's dtb_moves_fen (their tests hold them to the library's RankedMove::for_mover)."""
    import json
    import subprocess

    fens = ["W:WK32:BK26", "B:WK32:BK26", "W:W22,K1:B18,K3", "B:W22:B18", "B:WK1,19:BK7"]
    binary = os.environ.get("DTB_BIN")
    if not binary:
        pytest.skip("DTB_BIN (the dtb binary, set by python/run-tests.sh) is not set")
    out = subprocess.run(
        [binary, "probe", "--json", "--moves", "--dir", TABLES, *fens],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert len(out.splitlines()) == len(fens)
    for fen, line in zip(fens, out.splitlines()):
        cli = [(m["move"], m["wld"], m["dtw"]) for m in json.loads(line)["moves"]]
        ours = [(m.move, m.wld, m.dtw) for m in tb.moves(fen)]
        assert ours == cli and ours, fen


def test_a_lines_values_are_the_movers_as_in_the_cli(tb):
    """Issue 36: line() gives the same moves, values and positions as `dtb probe --line
    --json` (whose test holds it to the HTTP mainline), each step's value the mover's, the
    value moves() gives the best move of the position before it."""
    import json
    import subprocess

    fens = ["W:WK32:BK26", "B:WK32:BK26", "W:W22,K1:B18,K3", "B:WK1,19:BK7"]
    binary = os.environ.get("DTB_BIN")
    if not binary:
        pytest.skip("DTB_BIN (the dtb binary, set by python/run-tests.sh) is not set")
    out = subprocess.run(
        [binary, "probe", "--json", "--line", "--dir", TABLES, *fens],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert len(out.splitlines()) == len(fens)
    for fen, line in zip(fens, out.splitlines()):
        cli = [(m["move"], m["wld"], m["dtw"], m["fen"]) for m in json.loads(line)["line"]]
        ours = [(s.move, s.wld, s.dtw, s.fen) for s in tb.line(fen)]
        assert ours == cli and ours, fen
        before = fen
        for s in tb.line(fen):
            best = tb.moves(before)[0]
            assert (best.move, best.wld, best.dtw) == (s.move, s.wld, s.dtw), before
            before = s.fen


def test_notation_is_the_players_unless_asked(tb, tmp_path):
    """Issue 36: moves and positions in the notation the variant's players write: numbers
    for English unless notation="algebraic" is asked; algebraic for Russian (c3-b4) unless
    notation="numeric" is; FEN input in either."""
    import subprocess

    assert tb.notation == "numeric"
    with dtb.Tablebase(TABLES, "english", notation="algebraic") as alg:
        assert alg.notation == "algebraic"
        # 32 is g1, 27 f2, 26 d2 on the standard board.
        assert alg.probe("W:WK32:BK26").best_move == "g1-f2"
        assert alg.probe("W:WKg1:BKd2").best_move == "g1-f2"
        assert (alg.moves("W:WK32:BK26")[0].move, alg.moves("W:WK32:BK26")[0].fen) == (
            "g1-f2",
            "B:WKf2:BKd2",
        )
        assert alg.line("W:WK32:BK26")[0].move == "g1-f2"
    with pytest.raises(ValueError, match="numeric"):
        dtb.Tablebase(TABLES, "english", notation="pdn")
    binary = os.environ.get("DTB_BIN")
    if not binary:
        pytest.skip("DTB_BIN (the dtb binary, set by python/run-tests.sh) is not set")
    for variant in ["russian", "brazilian"]:
        d = tmp_path / variant
        subprocess.run(
            [binary, "gen", "--variant", variant, "--pieces", "2", "--out", str(d)],
            check=True,
            capture_output=True,
        )
        with dtb.Tablebase(d, variant) as ru:
            assert ru.notation == "algebraic"
            p = ru.probe("W:Wc3:Bf6")
            assert p.best_move in ("c3-b4", "c3-d4"), p
            assert ru.probe("W:W22:B11") == dtb.Tablebase(d, variant).probe("W:W22:B11")
            m = ru.moves("W:W22:B11")
            assert all("-" in x.move and x.move[0].isalpha() for x in m), m
            assert all(x.fen.startswith("B:W") and x.fen[3].isalpha() for x in m), m
        with dtb.Tablebase(d, variant, notation="numeric") as num:
            assert num.notation == "numeric"
            assert num.probe("W:Wc3:Bf6").best_move in ("22-17", "22-18")
            assert all(x.move[0].isdigit() for x in num.moves("W:Wc3:Bf6"))


@pytest.fixture(scope="module")
def counted_dir(tmp_path_factory):
    """English 2-4 with DTC tables under a 20-ply count limit (where cursed wins occur), built
    with the dtb binary."""
    binary = os.environ.get("DTB_BIN")
    if not binary:
        pytest.skip("DTB_BIN (the dtb binary, set by python/run-tests.sh) is not set")
    d = tmp_path_factory.mktemp("english-count-20")
    subprocess.run(
        [binary, "gen", "--variant", "english,count=20", "--values", "dtc", "--pieces", "4",
         "--out", str(d)],
        check=True,
        capture_output=True,
    )
    return str(d)


@pytest.fixture(scope="module")
def counted(counted_dir):
    """The DTC tables of counted_dir, opened under their profile."""
    return dtb.Tablebase(counted_dir, "english,count=20")


def test_a_cursed_win_under_the_count_rule(counted):
    v = counted.probe_dtc("W:WK1,K19:BK27")
    assert (v.category, v.result, v.dtc, v.counter, v.limit) == ("cursed-win", "draw", 21, 0, 20)
    assert "cursed-win" in repr(v)
    assert counted.probe_wld("W:WK1,K19:BK27") == "win", "the game-theoretic value stays"
    # A win in 19 plies to conversion: won while the counter leaves room, drawn after.
    assert counted.probe_dtc("W:WK2,K6:BK1", counter=1).result == "win"
    w = counted.probe_dtc("W:WK2,K6:BK1", counter=2)
    assert (w.category, w.result, w.counter) == ("win", "draw", 2)
    assert counted.probe_dtc("W:WK2,K6:BK1") == counted.probe_dtc("W:WK2,K6:BK1", 0)
    # Moves: the position after each, for its side to move at its counter.
    m = counted.moves_dtc("W:WK1,K19:BK27")[0]
    assert (m.move, m.category, m.result, m.dtc, m.counter, m.zeroing) == (
        "1-6", "loss", "draw", 20, 1, False)
    assert m.fen == "B:WK6,K19:BK27"
    assert "DtcMove" in repr(m)


def test_dtc_values_are_the_clis(counted, counted_dir):
    binary = os.environ["DTB_BIN"]
    d = counted_dir
    for fen, counter in [("W:WK1,K19:BK27", 0), ("W:WK2,K6:BK1", 2), ("B:W22,K1:B18,K3", 7)]:
        out = subprocess.run(
            [binary, "probe", "--json", "--moves", "--dir", d, "--variant", "english,count=20",
             "--counter", str(counter), fen],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        cli = json.loads(out)
        v = counted.probe_dtc(fen, counter)
        assert (v.category, v.result, v.dtc, v.counter) == (
            cli["category"], cli["result"], cli["dtc"], cli["counter"])
        moves = counted.moves_dtc(fen, counter)
        assert [(m.move, m.category, m.result, m.dtc, m.counter, m.zeroing) for m in moves] == [
            (c["move"], c["category"], c["result"], c["dtc"], c["counter"], c["zeroing"])
            for c in cli["moves"]
        ]


def test_bad_counters_and_profiles(counted, counted_dir, tb):
    with pytest.raises(dtb.CounterError, match="at or over the limit of 20 plies"):
        counted.probe_dtc("W:WK2,K6:BK1", 20)
    with pytest.raises(dtb.CounterError, match="counter is -1"):
        counted.probe_dtc("W:WK2,K6:BK1", -1)
    with pytest.raises(dtb.CounterError, match="over every count limit"):
        counted.moves_dtc("W:WK2,K6:BK1", 70000)
    # However large, and without echoing its digits.
    with pytest.raises(dtb.CounterError, match=r"^counter is over every count limit"):
        counted.probe_dtc("W:WK2,K6:BK1", 10**30)
    with pytest.raises(dtb.CounterError, match=r"^counter is below 0"):
        counted.moves_dtc("W:WK2,K6:BK1", -(10**30))
    with pytest.raises(TypeError):
        counted.probe_dtc("W:WK2,K6:BK1", "3")
    assert issubclass(dtb.CounterError, dtb.DtbError)
    with pytest.raises(ValueError, match="count limit 0"):
        dtb.Tablebase(TABLES, "english,count=0")
    # The same DTC tables under another profile are refused; tables without DTC values
    # have none to give.
    d = counted_dir
    with pytest.raises(dtb.TableError, match=r"another count profile \(general:20\)"):
        dtb.Tablebase(d, "english").probe_dtc("W:WK2,K6:BK1")
    with pytest.raises(dtb.MissingTableError, match="no dtc table"):
        tb.probe_dtc("W:WK2,K6:BK1")


def test_the_installed_package_carries_its_licence_texts():
    # The wheel's .dist-info holds both licence files whole (MIT OR Apache-2.0), as the
    # licences ask of a binary distribution.
    from importlib.metadata import distribution

    files = {f.name: f for f in distribution("dtb").files or []}
    for name, says in [("LICENSE-MIT", "MIT License"), ("LICENSE-APACHE", "Apache License")]:
        assert name in files, sorted(files)
        text = files[name].read_text()
        assert says in text and len(text) > 500
