#!/usr/bin/env bash
# Fails when any Swift file differs from what `swift format` (the toolchain's, configured by
# .swift-format) would write, or breaks a lint rule. `make test` runs it first, so CI does.
# To fix: scripts/format.sh, then commit.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
swift format lint --strict --recursive --parallel Package.swift Sources Tests bench
