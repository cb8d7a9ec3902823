#!/usr/bin/env bash
# The S3 HTTP client choice: GETs of a 200 KB object from moto's S3 server (the one the tests use,
# authentication on) through our socket client and through URLSession (FoundationNetworking),
# one after another, reporting GET/s, MB/s and the client process's CPU time per GET.
# Then the app: galleryd serve with local storage, S3 (moto) with asset_delivery = proxy, and S3
# with redirect, each on its own database: upload→ready per photo and bucket GETs of a thumbnail
# on one keep-alive connection (bench/s3_app.py).
# Usage: bench/s3.sh [count] — env CONFIG (debug|release, default release), ROUNDS (3), SECONDS_PER_MODE (5),
#        PHOTOS (photo files; default: flower, china, mate_Aqua and mate_Blinds from PHOTOS_DIR, else its
#        first four JPEGs; PHOTOS_DIR defaults to samples/photos, see bench/photos.sh), LARGE (a large
#        original streamed whole; default PHOTOS_DIR's elephants_5640x3172_progressive.jpg, 16 MB, else
#        its largest JPEG; empty: none),
#        PGPORT_PRIVATE (55613), APP_PORT (18093), MODES (default "local s3-proxy s3-redirect"),
#        GALLERYD (another galleryd binary for the app modes, e.g. a build of main to compare with).
set -euo pipefail
cd "$(dirname "$0")/.."
count="${1:-200}"
config="${CONFIG:-release}"
rounds="${ROUNDS:-3}"

swift build -c "$config" --product galleryd-bench >&2
swift build -c "$config" --product galleryd >&2
bench="$(swift build -c "$config" --show-bin-path)/galleryd-bench"
galleryd="${GALLERYD:-$(swift build -c "$config" --show-bin-path)/galleryd}"

tmp="$(mktemp -d /tmp/galleryd-s3-bench.XXXXXX)"
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  scripts/s3-test-server.sh stop "$tmp"
  scripts/pg.sh stop "$tmp/pg" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
env_lines=$(scripts/s3-test-server.sh start "$tmp")
while IFS= read -r line; do export "${line?}"; done <<<"$env_lines"
"$GALLERYD_TEST_PYTHON" - <<'PY'
import os, boto3
s3 = boto3.client("s3", endpoint_url=os.environ["GALLERYD_TEST_S3_ENDPOINT"], region_name="us-east-1",
                  aws_access_key_id=os.environ["GALLERYD_TEST_S3_ACCESS_KEY"],
                  aws_secret_access_key=os.environ["GALLERYD_TEST_S3_SECRET_KEY"])
s3.put_object(Bucket=os.environ["GALLERYD_TEST_S3_BUCKET"], Key="bench/200k.jpg", Body=os.urandom(200 * 1024))
PY
for round in $(seq 1 "$rounds"); do
  for transport in socket urlsession; do
    "$bench" s3-get --endpoint "$GALLERYD_TEST_S3_ENDPOINT" --bucket "$GALLERYD_TEST_S3_BUCKET" \
      --access-key "$GALLERYD_TEST_S3_ACCESS_KEY" --secret "$GALLERYD_TEST_S3_SECRET_KEY" \
      --key bench/200k.jpg --transport "$transport" --count "$count" | sed "s/^/round $round: /"
  done
done

# The app in three modes.
seconds="${SECONDS_PER_MODE:-5}"
app_port="${APP_PORT:-18093}"
. bench/photos.sh
default_photos=""
for p in flower.jpg china.jpg mate_Aqua.jpg mate_Blinds.jpg; do
  [ -f "$photos_dir/$p" ] && default_photos+="$photos_dir/$p "
done
[ -n "$default_photos" ] || default_photos="$(find "$photos_dir" -maxdepth 1 -iname '*.jpg' | sort | head -n4 | tr '\n' ' ')"
read -r -a photos <<<"${PHOTOS:-$default_photos}"
database_url=$(PGPORT_PRIVATE="${PGPORT_PRIVATE:-55613}" PG_FSYNC=off scripts/pg.sh start "$tmp/pg")
for mode in ${MODES:-local s3-proxy s3-redirect}; do
  db="bench_${mode//-/_}"
  psql -q "$database_url" -c "create database $db" >/dev/null
  url=$(python3 -c "import sys,urllib.parse as u; p=u.urlsplit(sys.argv[1]); print(u.urlunsplit(p._replace(path='/$db')))" "$database_url")
  storage=local; delivery=proxy
  case "$mode" in s3-proxy) storage=s3 ;; s3-redirect) storage=s3; delivery=redirect ;; esac
  DATABASE_URL="$url" GALLERYD_PORT="$app_port" GALLERYD_HOST=127.0.0.1 GALLERYD_STORAGE_DIR="$tmp/blobs-$mode" \
    GALLERYD_MASTER_KEY=bench-master-key-0123456789 GALLERYD_WORKERS=1 GALLERYD_LOG_LEVEL=warning GALLERYD_BUCKET_PUBLIC=true \
    GALLERYD_STORAGE="$storage" GALLERYD_ASSET_DELIVERY="$delivery" GALLERYD_S3_ENDPOINT="$GALLERYD_TEST_S3_ENDPOINT" \
    GALLERYD_S3_BUCKET="$GALLERYD_TEST_S3_BUCKET" GALLERYD_S3_ACCESS_KEY_ID="$GALLERYD_TEST_S3_ACCESS_KEY" \
    GALLERYD_S3_SECRET_ACCESS_KEY="$GALLERYD_TEST_S3_SECRET_KEY" GALLERYD_S3_PREFIX="$mode/" \
    "$galleryd" serve >"$tmp/serve-$mode.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 100); do curl -fs "http://127.0.0.1:$app_port/ready" >/dev/null 2>&1 && break; sleep 0.1; done
  LARGE="${LARGE-$(bench_photo elephants_5640x3172_progressive.jpg largest)}" "$GALLERYD_TEST_PYTHON" bench/s3_app.py "http://127.0.0.1:$app_port" "$seconds" "${photos[@]}" | sed "s/^/$mode: /"
  kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""
done
