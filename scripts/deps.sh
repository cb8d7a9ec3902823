#!/usr/bin/env bash
# Installs the Debian packages galleryd needs to build, test and run, when they are missing
# (systemd: the tests use its systemd-socket-activate).
# Safe to run again: it installs nothing when everything is there.
set -euo pipefail

# libcurl4-openssl-dev: `make release` links Swift's runtime and Foundation statically
# (--static-swift-stdlib, as the Docker image does), and static FoundationNetworking needs -lcurl.
# python3-venv: the tests' virtualenvs: moto and boto3 (scripts/s3-test-server.sh), the independent
# `websockets` client (LiveQuery tests).
# libheif-dev, libpng-dev, libwebp-dev: HEIC/AVIF, PNG and WebP originals (libheif 1.15 has its HEVC and
# AV1 decoders built in). libheif-examples (heif-enc) and webp (cwebp, img2webp): the Imaging tests make
# their HEIC, AVIF and WebP fixtures with them; libjpeg-turbo-progs (cjpeg) their 4:2:2 and restart-
# interval progressive JPEGs.
packages=(pkg-config libpq-dev libjpeg62-turbo-dev zlib1g-dev libheif-dev libpng-dev libwebp-dev libcurl4-openssl-dev
  postgresql procps systemd python3 python3-venv libheif-examples webp libjpeg-turbo-progs)
if [ "${1:-}" = "--demo" ]; then
  packages+=(curl python3)
fi
if [ "${1:-}" = "--bench" ]; then
  # libvips42 for pyvips (bench/imaging.sh's single-process anchor; PyPI's pyvips binds to it).
  # linux-perf, strace, heaptrack, valgrind: per-request counts (bench/counts.sh, docs/decisions/041).
  packages+=(wrk nginx-light hyperfine libvips-tools libvips42 postgresql-contrib time jq python3-pip
    linux-perf strace heaptrack valgrind)
fi

"$(dirname "$0")/apt-missing.sh" deps "${packages[@]}"

# The benches' virtualenv (ignored by git): pyvips and ssimulacra2 (with Pillow) from PyPI.
if [ "${1:-}" = "--bench" ]; then
  venv="$(cd "$(dirname "$0")/.." && pwd)/.build-venv-bench"
  if ! "$venv/bin/python" -c 'import pyvips, ssimulacra2, PIL' 2>/dev/null; then
    echo "deps: preparing $venv (pyvips, ssimulacra2)" >&2
    [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check pyvips ssimulacra2 >&2
  fi
fi

if ! command -v swift >/dev/null 2>&1; then
  echo "deps: no swift on PATH (need Swift 6.2 or later): install a toolchain from swift.org and add its usr/bin to PATH" >&2
  exit 1
fi
