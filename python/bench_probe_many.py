"""Probes per second through Tablebase.probe_many: 10,000 probes (a batch of quiet and capture
positions of English 2-4, repeated), after one warm-up batch so the blocks are cached.
Usage: python bench_probe_many.py TABLES_DIR"""

import sys
import time

import dtb

tb = dtb.Tablebase(sys.argv[1] if len(sys.argv) > 1 else "tables", "english")
base = [
    "W:WK32:BK26", "B:WK32:BK26", "W:W18,25:BK13", "B:WK32:B19,K26", "W:WK4,30:BK26,K29",
    "W:WK18:B24,K29", "B:WK1,19:BK7", "W:W22,30:B17,1", "B:W22:B18", "W:W22,K1:B18,K3",
]
fens = (base * 1000)[:10000]
tb.probe_many(fens)
best = None
for _ in range(3):
    t = time.perf_counter()
    out = tb.probe_many(fens)
    dt = time.perf_counter() - t
    best = dt if best is None else min(best, dt)
assert len(out) == 10000
print(f"probe_many: 10000 probes (value, distance and best move each) in {best * 1000:.1f} ms: "
      f"{10000 / best:,.0f} probes/s (best of 3, cached)")
