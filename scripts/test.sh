#!/usr/bin/env bash
# `make test`: a throwaway PostgreSQL in a temporary directory, then `swift test` against it.
# Extra arguments go to `swift test` (e.g. scripts/test.sh --filter GalleryAppTests).
# The cluster is stopped and removed afterwards, whether the tests pass or not.
set -euo pipefail
cd "$(dirname "$0")/.."

swift build --build-tests

# The independent WebSocket client the LiveQuery end-to-end test drives (PyPI `websockets`), in a
# virtualenv beside the build (ignored by git), made once.
venv=${GALLERYD_TEST_VENV:-$PWD/.build-venv}
if ! "$venv/bin/python" -c 'import websockets' 2>/dev/null; then
  echo "test: creating $venv with websockets" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q 'websockets>=12'
fi
export GALLERYD_TEST_PYTHON="$venv/bin/python"

tmp=$(mktemp -d /tmp/galleryd-test.XXXXXX)
cleanup() {
  scripts/pg.sh stop "$tmp" || true
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

# fsync off: a throwaway cluster needs no durability, and tests run much faster without it.
DATABASE_URL=$(PGPORT_PRIVATE=${GALLERYD_TEST_PGPORT:-55432} PG_FSYNC=off scripts/pg.sh start "$tmp")
export DATABASE_URL
# Tests that restart the server (reconnect tests) run this with `restart`, `stop` or `start`.
export GALLERYD_TEST_PGCTL="$PWD/scripts/pg.sh ctl $tmp"
echo "test: throwaway PostgreSQL at $DATABASE_URL" >&2

swift test --skip-build "$@"
