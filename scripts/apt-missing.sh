#!/usr/bin/env bash
# apt-missing.sh NAME PACKAGE…: installs those of the Debian packages named that are missing
# (apt-get, through sudo unless root), saying so on stderr as NAME; deps.sh and browser-deps.sh
# use it. Writes nothing on stdout, which stays its caller's. Installs nothing when all are there.
set -euo pipefail
name=$1
shift
missing=()
for p in "$@"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "$name: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq >&2
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
