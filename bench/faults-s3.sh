#!/usr/bin/env bash
# Fault harness for `storage = "s3"` (issue #13): `galleryd serve` on moto's S3 server (as the tests start it,
# scripts/s3-test-server.sh) with s3_multipart_bytes at its 5 MiB floor, killed -9 ROUNDS times at a random
# moment during COUNT concurrent uploads of PHOTO (larger than 5 MiB, so each goes up as a multipart upload;
# bench/faults.py uploads, photos created for 1 in PHOTO_EVERY). After the rounds: every acknowledged original
# in the bucket with its SHA-256, the multipart uploads left in progress (never completed nor aborted: their
# parts are stored, billed and invisible to object listings), objects under originals/ against `files` rows.
# Then the server started again with orphan_grace_hours = 0, whose worker runs the orphan collector at once:
# what it removed (/metrics) and what is left of both, and moto's peak RSS.
# Usage: bench/faults-s3.sh. Needs PostgreSQL, python3 and moto (scripts/s3-test-server.sh installs it).
# Env: PGPORT_PRIVATE (55663), PORT (18463), GALLERYD_BIN (else a release build), PHOTO (required: over
#      5 MiB), ROUNDS (10), COUNT (10), PHOTO_EVERY (5), MAX_DELAY (3).
set -euo pipefail
cd "$(dirname "$0")/.."
port="${PORT:-18463}"
photo="$(cd "$(dirname "${PHOTO:?PHOTO: a photo over 5 MiB}")" && pwd)/$(basename "$PHOTO")"
export PGPORT_PRIVATE="${PGPORT_PRIVATE:-55663}"
export GALLERYD_TEST_VENV="${GALLERYD_TEST_VENV:-$PWD/.build-venv}"  # scripts/test.sh's, which has moto and boto3
source bench/faults-lib.sh
faults_galleryd
faults_setup faults-s3
trap 'scripts/s3-test-server.sh stop "$tmp"; faults_cleanup' EXIT

export DATABASE_URL="$(scripts/pg.sh start "$tmp/pg")"
env_lines=$(scripts/s3-test-server.sh start "$tmp")
while IFS= read -r line; do export "${line?}"; done <<<"$env_lines"
export GALLERYD_STORAGE=s3 GALLERYD_S3_ENDPOINT="$GALLERYD_TEST_S3_ENDPOINT" GALLERYD_S3_BUCKET="$GALLERYD_TEST_S3_BUCKET" \
  GALLERYD_S3_ACCESS_KEY_ID="$GALLERYD_TEST_S3_ACCESS_KEY" GALLERYD_S3_SECRET_ACCESS_KEY="$GALLERYD_TEST_S3_SECRET_KEY" \
  GALLERYD_S3_PREFIX="faults/" GALLERYD_S3_MULTIPART_BYTES=5242880 GALLERYD_S3_MULTIPART_PART_BYTES=5242880 \
  GALLERYD_STORAGE_DIR="$tmp/spool" GALLERYD_MASTER_KEY="faults-master-key-$(date +%s%N)" \
  GALLERYD_URL_SIGNING_KEY="bench-url-signing-key-0123456789abcdef" GALLERYD_LOG_LEVEL=warning
PSQL="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n1)/psql"
sql() { "$PSQL" "$DATABASE_URL" -tAc "$1"; }

# The bucket as boto3 sees it: `uploads` (multipart uploads in progress), `originals` (objects), or
# `verify ACKED` (every acknowledged name's object with its SHA-256: lost, mismatches).
bucket() {
  "$GALLERYD_TEST_PYTHON" - "$@" <<'PY'
import hashlib, json, os, sys
import boto3
s3 = boto3.client("s3", endpoint_url=os.environ["GALLERYD_TEST_S3_ENDPOINT"], region_name="us-east-1",
                  aws_access_key_id=os.environ["GALLERYD_TEST_S3_ACCESS_KEY"],
                  aws_secret_access_key=os.environ["GALLERYD_TEST_S3_SECRET_KEY"])
bucket, prefix = os.environ["GALLERYD_TEST_S3_BUCKET"], os.environ["GALLERYD_S3_PREFIX"]
if sys.argv[1] == "uploads":
    pages = s3.get_paginator("list_multipart_uploads").paginate(Bucket=bucket, Prefix=prefix)
    print(sum(len(page.get("Uploads", [])) for page in pages))
elif sys.argv[1] == "originals":
    pages = s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix + "originals/")
    print(sum(len(page.get("Contents", [])) for page in pages))
else:
    entries = [json.loads(line) for line in open(sys.argv[2]) if line.strip()]
    acked = [e for e in entries if e["name"]]
    lost = mismatched = 0
    for e in acked:
        try:
            body = s3.get_object(Bucket=bucket, Key=prefix + "originals/" + e["name"])["Body"].read()
        except s3.exceptions.NoSuchKey:
            lost += 1
            continue
        mismatched += hashlib.sha256(body).hexdigest() != e["sha256"]
    print(f"acknowledged {len(acked)} of {len(entries)} uploads; lost {lost}; sha256 mismatches {mismatched}")
PY
}

start_serve() { faults_start_serve 1; }

echo "== kill -9 during ${COUNT:-10} concurrent multipart uploads of $(basename "$photo") ($(($(stat -c %s "$photo") / 1024)) KiB), ${ROUNDS:-10} rounds"
: >"$tmp/acked"
for round in $(seq "${ROUNDS:-10}"); do
  start_serve
  python3 bench/faults.py uploads --port "$port" --pid "$serve_pid" --photo "$photo" --acked "$tmp/acked" \
    --round "$round" --count "${COUNT:-10}" --photo-every "${PHOTO_EVERY:-5}" --max-delay "${MAX_DELAY:-3}" | sed 's/^/  /'
  wait "$serve_pid" 2>/dev/null || true
  echo "    multipart uploads in progress: $(bucket uploads)"
done
killed_at=$(date +%s)
echo "  $(bucket verify "$tmp/acked")"
echo "  left by the kills: multipart uploads in progress $(bucket uploads); objects under originals/ $(bucket originals), files rows $(sql "select count(*) from files")"
GALLERYD_ORPHAN_GRACE_HOURS=0 start_serve
sleep 5
echo "== restarted with orphan_grace_hours = 0 (its worker's first pass collects orphans), $(($(date +%s) - killed_at)) s after the last kill"
curl -s -H "Authorization: Bearer $GALLERYD_MASTER_KEY" "http://127.0.0.1:$port/metrics" | grep '^galleryd_orphans_removed_total' | sed 's/^/  /' || echo "  no orphans counted"
echo "  multipart uploads in progress $(bucket uploads); objects under originals/ $(bucket originals), files rows $(sql "select count(*) from files")"
# moto keeps what it stores in its own process: its peak RSS says how far this harness can go on one machine.
echo "  moto's peak RSS: $(awk '/VmHWM/ {print $2, $3}' "/proc/$(cat "$tmp/moto.pid")/status" 2>/dev/null || echo unknown)"
