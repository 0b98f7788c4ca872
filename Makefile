# idemlab: `make run` starts the playground, `make test` runs every test.
SHELL := /bin/bash
GO ?= go
GOROOT := $(shell $(GO) env GOROOT)
WASM_EXEC := $(GOROOT)/lib/wasm/go_js_wasm_exec
ADDR ?= 127.0.0.1:8080
DB ?= ./idemlab.db
# npm's packages (package-lock.json), installed once: the formatter and the
# lab's code editor with its bundler.
NODE_MODULES := node_modules/.installed

.PHONY: run build test test-short test-js lint-js fmt-js vet bench clean wasm editor soak fuzz

# SQLite in the browser's module is compiled without Go's bounds checks
# (-B, for that one package: SQLite's C translated to Go). Its C runs
# without them everywhere else too; here they made a quarter of the
# module's code (16.3 → 12.6 MB raw, 3.12 → 2.48 MB brotli) and, measured
# in Chromium, the page's first SQLite work took 920 → 600 ms
# (docs/PERFORMANCE.md). The server and the command line keep every check:
# they take input from the network. In the browser SQLite only sees
# idemlab's own statements, with the learner's values bound. test-js
# tests the module built this way.
WASM_GCFLAGS := -gcflags=github.com/ncruces/go-sqlite3-wasm/v6=-B

# The engine for the browser: built small, Go's wasm_exec.js beside it, and
# precompressed (brotli and gzip) so that serving costs no CPU. The raw
# module stays in bin/; web/ embeds only the compressed copies.
wasm:
	GOOS=js GOARCH=wasm $(GO) build $(WASM_GCFLAGS) -trimpath -ldflags='-s -w' -o bin/idemlab.wasm ./wasm
	install -m 644 "$(GOROOT)/lib/wasm/wasm_exec.js" web/wasm_exec.js
	$(GO) run ./web/internal/compress -o web bin/idemlab.wasm

# The lab page's code editor: CodeMirror 6 from the packages that
# package-lock.json pins, bundled by esbuild into web/editor.js (ignored,
# like the module) and precompressed beside it. Nothing comes from a CDN.
EDITOR := web/editor.js
ESBUILD := node_modules/.bin/esbuild
editor: $(EDITOR)
$(EDITOR): web/src/editor.js web/lab-brace.js $(NODE_MODULES)
	$(ESBUILD) web/src/editor.js --bundle --format=esm --minify --target=es2020 --legal-comments=eof --log-level=warning --outfile=$@
	$(GO) run ./web/internal/compress -o web $@

build: wasm editor
	$(GO) build -o bin/idemlab ./cmd/idemlab

run: wasm editor build
	./bin/idemlab serve --addr $(ADDR) --db $(DB)

vet:
	$(GO) vet ./...
	GOOS=js GOARCH=wasm $(GO) vet ./engine/... ./store/... ./lab/ ./lab/scenario/ ./wasm/

# The engine and the store run again under GOOS=js GOARCH=wasm, in Node, as
# the browser will run them.
test-js:
	PATH="$(GOROOT)/lib/wasm:$$PATH" GOOS=js GOARCH=wasm $(GO) test $(WASM_GCFLAGS) -exec="$(WASM_EXEC)" ./engine/ ./store/sqlite/ ./store/sqlite/labdb/ ./lab/ ./lab/scenario/ ./wasm/

# axe-core checks the pages' accessibility in the browser tests. It comes
# from npm, once, into bin/axe; without npm or a network the step is
# skipped and those tests say why they skip.
AXE := bin/axe/node_modules/axe-core/axe.min.js
$(AXE):
	-npm install --no-save --no-package-lock --no-audit --no-fund --prefix bin/axe axe-core@4.14.1

# The page's JavaScript has one format, prettier's, with single quotes
# (.prettierrc.json; package.json pins prettier and package-lock.json locks
# it). make test checks it (lint-js); fmt-js writes it.
PRETTIER := node_modules/.bin/prettier
$(NODE_MODULES): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@
$(PRETTIER): $(NODE_MODULES)

lint-js: $(PRETTIER)
	$(PRETTIER) --check 'web/**/*.js'

fmt-js: $(PRETTIER)
	$(PRETTIER) --write 'web/**/*.js'

# TEST_TIMEOUT bounds each package's tests: ./server under -race on two
# shared cores takes minutes, close to go test's default of 10.
TEST_TIMEOUT ?= 30m

test: vet lint-js wasm editor $(AXE)
	$(GO) test -race -count=1 -timeout=$(TEST_TIMEOUT) ./...
	$(MAKE) test-js

# The edit-test loop: every package's tests under -short, which starts no
# Chromium, no idemlab process, no PostgreSQL cluster and no endpoint in
# another language (each such test says so as it skips), and builds no
# module. Under a minute here (README).
test-short:
	$(GO) test -short -count=1 -timeout=5m ./...

# make bench runs every benchmark side by side in one run, one package at a
# time (-p 1: two benchmarks at once on this 2-core machine would measure
# each other), and writes the raw figures, with the machine and the
# command, into docs/PERFORMANCE.md (the
# "Latest make bench" section at its end); the sections above it explain them.
BENCH_OUT := bin/bench.txt
bench: wasm
	@mkdir -p bin
	@{ echo "machine: $$(nproc) cores, $$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $$($(GO) version | cut -d' ' -f3-)"; \
	  echo "date: $$(date -u +%Y-%m-%dT%H:%MZ), load average: $$(cut -d' ' -f1-3 /proc/loadavg)"; \
	  echo "command: make bench"; } > $(BENCH_OUT)
	set -o pipefail; $(GO) test -p 1 -run='^$$' -bench=. -benchmem -count=1 ./engine/... ./store/sqlite/ ./internal/stores/ ./classroom/ ./server/ ./lab/scenario/ 2>&1 | tee -a $(BENCH_OUT)
	# ./internal/stores/ is /bank/scoped on SQLite and on PostgreSQL, one server and three (a throwaway cluster; skipped without PostgreSQL).
	# ./classroom/ has a room of 100 phones reconnecting at once; ./server/ the classroom's load: 300 websocket clients, a 2,000-request storm (docs/PERFORMANCE.md).
	# A 100,000-attempt day at scoped: in-process on a SQLite file, then over HTTP (docs/PERFORMANCE.md).
	set -o pipefail; $(GO) test -p 1 -run='^$$' -bench=DayReplay -benchtime=1x -count=1 -timeout=30m ./lab/ ./lab/grade/ 2>&1 | tee -a $(BENCH_OUT)
	@awk -v raw=$(BENCH_OUT) 'BEGIN { while ((getline l < raw) > 0) body = body l "\n" } \
	  /^<!-- bench:begin -->/ { print; print "```"; printf "%s", body; print "```"; skip = 1; next } \
	  /^<!-- bench:end -->/ { skip = 0 } !skip { print }' docs/PERFORMANCE.md > $(BENCH_OUT).md && mv $(BENCH_OUT).md docs/PERFORMANCE.md
	@echo "docs/PERFORMANCE.md: the latest figures are in its last section"

clean:
	rm -rf bin dist

# The long form of the crash test: hundreds of SIGKILLs against a real process.
soak:
	$(GO) test -count=1 -run TestCrashRecovery -v -timeout 30m ./cmd/idemlab/ -args -soak

# Longer fuzzing than the seed-corpus runs in `make test`: FUZZTIME per target.
FUZZTIME ?= 60s
fuzz:
	$(GO) test -run='^$$' -fuzz=FuzzParseKey -fuzztime=$(FUZZTIME) ./engine/
	$(GO) test -run='^$$' -fuzz=FuzzTransferBody -fuzztime=$(FUZZTIME) ./engine/
	$(GO) test -run='^$$' -fuzz=FuzzTransferCanonical -fuzztime=$(FUZZTIME) ./engine/
	$(GO) test -run='^$$' -fuzz=FuzzParse -fuzztime=$(FUZZTIME) ./lab/scenario/
	$(GO) test -run='^$$' -fuzz=FuzzDecodeClientMessage -fuzztime=$(FUZZTIME) ./classroom/
