# galleryd — `make run` serves on :8080, `make demo` also imports sample photos, `make test` runs the whole test suite.
# Both install the Debian packages they need when missing (scripts/deps.sh).

.PHONY: all deps build release run demo test lint format bench bench-thumbnail clean stop-db

all: build

deps:
	@scripts/deps.sh

build: deps
	swift build

# Swift's runtime and Foundation linked in, as in the Docker image: `galleryd process` starts in
# 9 ms instead of 14 (docs/decisions/018-imaging-time-against-vips.md).
release: deps
	swift build -c release --static-swift-stdlib

run: release
	scripts/run.sh

# `make run` plus the sample photos (samples/photos) imported and processed, and the URLs to open.
demo: release
	@scripts/deps.sh --demo
	scripts/demo.sh

# Lint first: a tree that `swift format` would change fails here, before the suite runs.
test: deps
	scripts/lint.sh
	scripts/test.sh

lint:
	scripts/lint.sh

format:
	scripts/format.sh

bench: release
	@scripts/deps.sh --bench
	bench/all.sh

# Issue #30's comparison: the signed thumbnail GET and /health against nginx, both I/O backends,
# p99 at 64 and 1,000 connections (docs/decisions/041-thumbnail-path-at-nginx-cost.md).
# COUNTS=1 make bench-thumbnail: system calls, allocations and context switches per request instead.
# CLIENT=loadgen make bench-thumbnail: bench/loadgen.c, a load generator lighter than wrk, so the server's core
# saturates first (decision 041, round 10); CONNECTIONS=1000 HIGH_CONNECTIONS=0 ROUNDS=5 for the crowd.
bench-thumbnail: release
	@scripts/deps.sh --bench
	GALLERYD=.build/release/galleryd bench/thumbnail-path.sh

stop-db:
	scripts/pg.sh stop .data

clean:
	rm -rf .build
