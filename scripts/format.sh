#!/usr/bin/env bash
# Formats every Swift file in place with the toolchain's `swift format` (.swift-format).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
swift format format --in-place --recursive --parallel Package.swift Sources Tests bench
