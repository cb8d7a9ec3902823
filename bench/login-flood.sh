#!/usr/bin/env bash
# Login flood benchmark (issue #25, item 3): a galleryd over a private PostgreSQL with one account
# and some photos. Reports, as one JSON line (bench/login-flood.py), a logged-in find's p50/p90
# while FLOODERS clients flood logins with over-long usernames (goal: p90 < 200 ms), and how many of
# 30 parallel wrong passwords for one account, by username and email mixed, pass one throttle
# window (goal: at most 6, the 5 free failures and the one that blocks).
#
# Usage: bench/login-flood.sh   Env: FLOODERS (24), DURATION (20 s), ROUNDS (5), PORT (18093),
#        PGPORT_PRIVATE (55515), CONFIG (release; debug to skip the release build), KEEP=1.
# The clients run on the same 2 cores as the server: on this machine they are part of what is measured.
set -euo pipefail
cd "$(dirname "$0")/.."

port="${PORT:-18093}"
config="${CONFIG:-release}"
export PGPORT_PRIVATE="${PGPORT_PRIVATE:-55515}"

swift build -c "$config" --product galleryd >&2
bin="$(swift build -c "$config" --show-bin-path)/galleryd"

tmp="$(mktemp -d /tmp/galleryd-login-bench.XXXXXX)"
. bench/galleryd.sh
trap cleanup_run EXIT INT TERM

start_database "$bin"
seed_photos 200
"$bin" users create bench --email bench@example.org --admin --password-stdin <<<'bench passphrase' >&2

start_galleryd "$bin" "$port"

python3 bench/login-flood.py "$port" gallery bench bench@example.org 'bench passphrase' "$database_url"
