#!/usr/bin/env bash
# `make run`: serve galleryd on :8080 with a private PostgreSQL under ./.data unless DATABASE_URL is set,
# and the first admin account (password in .data/admin.password) while the database has none.
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
bin=${GALLERYD_BIN:-.build/release/galleryd}
# The app id alone reads nothing: while the database has no account, make the first admin (who also
# takes any rows a single-tenant install left without an owner), with a generated password printed
# once here and kept in .data/admin.password (mode 0600), so the web page and the README's curl
# examples work at once. Log in as `admin` with it.
accounts=$("$bin" users list | tail -n 1)
if [ "$accounts" = "users: 0 account(s)" ]; then
  if [ ! -s .data/admin.password ]; then
    (umask 077; head -c 15 /dev/urandom | od -An -tx1 | tr -d ' \n' > .data/admin.password)
  fi
  "$bin" users create admin --admin --password-file .data/admin.password >&2
  echo "run: first account: username admin, password $(cat .data/admin.password)  (kept in .data/admin.password)" >&2
fi
exec "$bin" serve "$@"
