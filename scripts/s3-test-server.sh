#!/usr/bin/env bash
# Starts moto's S3-compatible server for the tests, with IAM authentication on (wrong signatures
# and unknown keys are refused), creates a test user, its access key and a bucket, and prints the
# environment the tests read (GALLERYD_TEST_S3_*). Usage: scripts/s3-test-server.sh start DIR | stop DIR
# moto and boto3 live in a virtualenv (GALLERYD_TEST_VENV, default .build/moto-venv), created here
# when missing; boto3 is the tests' independent client for checking what landed.
set -euo pipefail
cd "$(dirname "$0")/.."
command=${1:?start or stop}
dir=${2:?directory}
venv=${GALLERYD_TEST_VENV:-$PWD/.build/moto-venv}

case "$command" in
start)
  if ! "$venv/bin/python" -c 'import moto.server, boto3' >/dev/null 2>&1; then
    echo "test: installing moto[server] and boto3 into $venv" >&2
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install --quiet --disable-pip-version-check 'moto[server]>=5' boto3 >&2
  fi
  port=$("$venv/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  # The first 3 requests (create user, attach policy, create access key) go unauthenticated;
  # every later one must carry a valid SigV4 signature of that key.
  # Its own session and process group, whose id the shell writes before exec'ing into moto, so
  # `stop` ends exactly that server (setsid may fork, which would make $! the wrong pid).
  INITIAL_NO_AUTH_ACTION_COUNT=3 MOTO_ALLOW_NONEXISTENT_REGION=true \
    setsid sh -c 'echo $$ >"$1"; shift; exec "$@"' sh "$dir/moto.pid" \
    "$venv/bin/python" -m moto.server -H 127.0.0.1 -p "$port" >"$dir/moto.log" 2>&1 &
  for _ in $(seq 1 50); do [ -s "$dir/moto.pid" ] && break; sleep 0.1; done
  for _ in $(seq 1 100); do
    if "$venv/bin/python" -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$port/moto-api/')" >/dev/null 2>&1; then break; fi
    sleep 0.1
  done
  "$venv/bin/python" - "$port" <<'PY'
import json, sys, boto3
endpoint = f"http://127.0.0.1:{sys.argv[1]}"
iam = boto3.client("iam", endpoint_url=endpoint, region_name="us-east-1",
                   aws_access_key_id="bootstrap", aws_secret_access_key="bootstrap")
iam.create_user(UserName="galleryd-test")
iam.put_user_policy(UserName="galleryd-test", PolicyName="s3", PolicyDocument=json.dumps(
    {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}))
key = iam.create_access_key(UserName="galleryd-test")["AccessKey"]
s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                  aws_access_key_id=key["AccessKeyId"], aws_secret_access_key=key["SecretAccessKey"])
s3.create_bucket(Bucket="galleryd-test")
print(f"GALLERYD_TEST_S3_ENDPOINT={endpoint}")
print(f"GALLERYD_TEST_S3_ACCESS_KEY={key['AccessKeyId']}")
print(f"GALLERYD_TEST_S3_SECRET_KEY={key['SecretAccessKey']}")
print("GALLERYD_TEST_S3_BUCKET=galleryd-test")
print(f"GALLERYD_TEST_PYTHON={sys.executable}")
PY
  ;;
stop)
  if [ -f "$dir/moto.pid" ]; then
    pid=$(cat "$dir/moto.pid")
    kill -- "-$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true
    rm -f "$dir/moto.pid"
  fi
  ;;
*)
  echo "usage: $0 start|stop DIR" >&2
  exit 2
  ;;
esac
