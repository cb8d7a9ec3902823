#!/usr/bin/env bash
# `make run`: serve galleryd on :8080 with a private PostgreSQL under ./.data unless DATABASE_URL is set.
# GALLERYD_BIN runs another build (default .build/release/galleryd).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .data
if [ -z "${DATABASE_URL:-}" ]; then
  DATABASE_URL=$(scripts/pg.sh start .data)
  export DATABASE_URL
  echo "run: private PostgreSQL at $DATABASE_URL (stop it with: scripts/pg.sh stop .data)" >&2
fi
if [ -z "${GALLERYD_MASTER_KEY:-}" ]; then
  if [ ! -s .data/master.key ]; then
    (umask 077; head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > .data/master.key)
  fi
  GALLERYD_MASTER_KEY=$(cat .data/master.key)
  export GALLERYD_MASTER_KEY
  echo "run: master key (X-Parse-Master-Key): $GALLERYD_MASTER_KEY  (kept in .data/master.key)" >&2
fi
if [ -z "${GALLERYD_URL_SIGNING_KEY:-}" ]; then
  # Signs asset URLs (bucket_public = false, the default); kept so URLs stay valid across restarts.
  if [ ! -s .data/url-signing.key ]; then
    (umask 077; head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > .data/url-signing.key)
  fi
  GALLERYD_URL_SIGNING_KEY=$(cat .data/url-signing.key)
  export GALLERYD_URL_SIGNING_KEY
  echo "run: asset URL signing key kept in .data/url-signing.key" >&2
fi
export GALLERYD_STORAGE_DIR=${GALLERYD_STORAGE_DIR:-$PWD/.data/blobs}
export GALLERYD_PORT=${GALLERYD_PORT:-8080}
exec "${GALLERYD_BIN:-.build/release/galleryd}" serve "$@"
