#!/usr/bin/env bash
# Runs every benchmark in turn (`make bench`). Each prints its own table; see the script headers.
set -uo pipefail
cd "$(dirname "$0")/.."
status=0
for b in http db bucket manifest imaging ingest faults; do
  if [ -x "bench/$b.sh" ]; then
    echo "=== bench/$b.sh"
    "bench/$b.sh" || { echo "bench/$b.sh failed" >&2; status=1; }
  fi
done
exit $status
