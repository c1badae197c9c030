#!/usr/bin/env bash
# The Python package's tests (called by .ci/run after `cargo test --workspace`): a fresh venv
# under target/, `pip install ./python` (maturin builds the extension), pydraughts and pytest
# from PyPI, English 2-4 tables built with the dtb binary, then pytest and the probe_many
# measurement.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/pyvenv
if ! python3 -m venv "$venv"; then
    # Debian's python3 keeps venv in a package of its own.
    apt-get update -qq && apt-get install -y -qq python3-venv python3-pip
    python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --upgrade pip
"$venv/bin/pip" install --quiet ./python pydraughts pytest
tables=target/py-tables
if [ ! -f "$tables/english-0202.dtw" ]; then
    cargo run --quiet --bin dtb -- gen --variant english --pieces 4 --out "$tables" \
        >target/py-tables.log 2>&1 || { cat target/py-tables.log; exit 1; }
fi
cargo build --quiet --bin dtb
DTB_TABLES="$tables" DTB_BIN="$PWD/target/debug/dtb" "$venv/bin/python" -m pytest -q python/tests
"$venv/bin/python" python/bench_probe_many.py "$tables"
