#!/usr/bin/env bash
# `make test`: a throwaway PostgreSQL in a temporary directory, then `swift test` against it.
# Extra arguments go to `swift test` (e.g. scripts/test.sh --filter GalleryAppTests).
# The cluster is stopped and removed afterwards, whether the tests pass or not.
set -euo pipefail
cd "$(dirname "$0")/.."

swift build --build-tests

# One virtualenv beside the build (ignored by git), made once, with the independent clients and
# servers the tests drive: PyPI `websockets` (LiveQuery end to end), `moto[server]` and boto3 (the
# S3-compatible server and a second S3 client; scripts/s3-test-server.sh uses the same virtualenv),
# `flickrapi` (the Flickr API end to end), `qs-parse-rest` (parse_rest, ParsePy for Python 3: a
# custom class and a view end to end; PyPI's `parse_rest` is Python 2 only).
venv=${GALLERYD_TEST_VENV:-$PWD/.build-venv}
if ! "$venv/bin/python" -c 'import websockets, moto.server, boto3, flickrapi, parse_rest' 2>/dev/null; then
  echo "test: preparing $venv (websockets, moto[server], boto3, flickrapi, qs-parse-rest)" >&2
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check 'websockets>=12' 'moto[server]>=5' boto3 'flickrapi>=2.4' \
    'qs-parse-rest>=0.2.20240920'
fi
export GALLERYD_TEST_VENV="$venv"
export GALLERYD_TEST_PYTHON="$venv/bin/python"

tmp=$(mktemp -d /tmp/galleryd-test.XXXXXX)
cleanup() {
  scripts/s3-test-server.sh stop "$tmp" || true
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

# An S3-compatible server (moto, authentication on) for the object storage tests; always started,
# so CI runs them. It exports GALLERYD_TEST_S3_ENDPOINT, _ACCESS_KEY, _SECRET_KEY, _BUCKET and
# GALLERYD_TEST_PYTHON (the virtualenv's python, with boto3).
s3_env=$(scripts/s3-test-server.sh start "$tmp")
while IFS= read -r line; do export "${line?}"; done <<<"$s3_env"
echo "test: moto S3 server at $GALLERYD_TEST_S3_ENDPOINT" >&2

set +e
swift test --skip-build "$@" 2>&1 | tee "$tmp/swift-test.log"
status=${PIPESTATUS[0]}
set -e
[ "$status" -eq 0 ] || exit "$status"

# The web gallery in headless Chromium (scripts/browser-test.sh), with the whole suite or when asked;
# GALLERYD_BROWSER_TEST=0 skips it.
if [ "${GALLERYD_BROWSER_TEST:-}" = 1 ] || { [ $# -eq 0 ] && [ "${GALLERYD_BROWSER_TEST:-}" != 0 ]; }; then
  scripts/browser-test.sh
fi

# swift test's own closing lines last, so the summary is what a reader (or CI) sees at the end.
grep -E "Test run with [0-9]+ tests?" "$tmp/swift-test.log" | tail -1 || true
