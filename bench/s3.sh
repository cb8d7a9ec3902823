#!/usr/bin/env bash
# The S3 HTTP client choice: GETs of a 200 KB object from moto's S3 server (the one the tests use,
# authentication on) through our socket client and through URLSession (FoundationNetworking),
# one after another, reporting GET/s, MB/s and the client process's CPU time per GET.
# Usage: bench/s3.sh [count] — env CONFIG (debug|release, default release), ROUNDS (3).
# (Upload→ready and proxy vs redirect figures need storage = "s3" in the app: not measured yet.)
set -euo pipefail
cd "$(dirname "$0")/.."
count="${1:-200}"
config="${CONFIG:-release}"
rounds="${ROUNDS:-3}"

swift build -c "$config" --product galleryd-bench >&2
bench="$(swift build -c "$config" --show-bin-path)/galleryd-bench"

tmp="$(mktemp -d /tmp/galleryd-s3-bench.XXXXXX)"
trap 'scripts/s3-test-server.sh stop "$tmp"; rm -rf "$tmp"' EXIT INT TERM
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
