#!/usr/bin/env bash
# Starts or resumes a build of many hours (English 2-8 WLD by default) outside the work tree,
# so that it survives the end of a session on the same machine: run it again and it resumes
# (finished slices are kept, a large slice resumes at its last record of finished rounds).
#
#   DTB_BIN=/var/tmp/dtb/dtb-COMMIT nohup tools/long-build.sh > /dev/null 2>&1 &
#
# Logs in $DTB_ROOT (default /var/tmp/dtb): NAME.jsonl gets `dtb gen --json`'s lines (one per
# slice, then the summary), NAME.err the progress text and one `/usr/bin/time -v` block per
# run (its "Maximum resident set size" is the run's max RSS in KB) between start/stop lines.
# Copy the binary out of target/ first (cp target/release/dtb /var/tmp/dtb/dtb-$(git rev-parse
# --short HEAD)), so that a rebuild of the work tree never changes the running build.
set -euo pipefail
root=${DTB_ROOT:-/var/tmp/dtb}
name=${DTB_NAME:-english8}
bin=${DTB_BIN:?set DTB_BIN to a dtb binary copied outside the work tree}
args=${DTB_ARGS:---variant english --pieces 8 --wld-only --memory 20G}
mkdir -p "$root"
cd "$root"
echo "=== start $(date -u +%FT%TZ) bin=$bin args=$args" >> "$name.err"
# shellcheck disable=SC2086 # $args is a list of flags
/usr/bin/time -v "$bin" gen $args --json --out "$root/$name" >> "$name.jsonl" 2>> "$name.err" \
    && status=0 || status=$?
echo "=== stop $(date -u +%FT%TZ) exit=$status" >> "$name.err"
exit "$status"
