#!/usr/bin/env bash
# Installs what the browser tests need when missing: Debian's headless `chromium` and
# `chromium-driver`, and `selenium` from PyPI in a virtualenv at .venv-browser/ (ignored by git).
# Prints the virtualenv's python on stdout. Safe to run again: installs nothing when all is there.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/apt-missing.sh browser-deps chromium chromium-driver python3-venv

venv=.venv-browser
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import selenium' 2>/dev/null; then
  echo "browser-deps: creating $venv with selenium" >&2
  /usr/bin/python3 -m venv "$venv" >&2
  "$venv/bin/pip" install -q 'selenium>=4.15,<5' >&2
fi
echo "$PWD/$venv/bin/python"
