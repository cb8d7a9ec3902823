#!/usr/bin/env bash
# The web gallery's browser test (Tests/Browser/gallery_test.py): installs headless Chromium,
# chromedriver and selenium when missing (scripts/browser-deps.sh), then drives the page against
# .build/debug/galleryd and the PostgreSQL at DATABASE_URL. Screenshots go to bench/out/.
# `--docs` also refreshes docs/web-gallery.png, the README's screenshot.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${DATABASE_URL:?set DATABASE_URL (scripts/test.sh does)}"
python=$(scripts/browser-deps.sh)
bin=$(swift build --show-bin-path)/galleryd
[ -x "$bin" ] || swift build --product galleryd
docs=()
[ "${1:-}" = "--docs" ] && docs=(--docs docs)
exec "$python" Tests/Browser/gallery_test.py --binary "$bin" --database-url "$DATABASE_URL" --out bench/out "${docs[@]}"
