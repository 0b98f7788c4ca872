# idemlab: `make run` starts the playground, `make test` runs every test.
SHELL := /bin/bash
GO ?= go
GOROOT := $(shell $(GO) env GOROOT)
WASM_EXEC := $(GOROOT)/lib/wasm/go_js_wasm_exec
ADDR ?= 127.0.0.1:8080
DB ?= ./idemlab.db

.PHONY: run build test test-js vet bench clean soak

build:
	$(GO) build -o bin/idemlab ./cmd/idemlab

run: build
	./bin/idemlab serve --addr $(ADDR) --db $(DB)

vet:
	$(GO) vet ./...
	GOOS=js GOARCH=wasm $(GO) vet ./engine/... ./store/...

# The engine and the store run again under GOOS=js GOARCH=wasm, in Node, as
# the browser will run them.
test-js:
	PATH="$(GOROOT)/lib/wasm:$$PATH" GOOS=js GOARCH=wasm $(GO) test -exec="$(WASM_EXEC)" ./engine/ ./store/ ./lab/scenario/

test: vet
	$(GO) test -race -count=1 ./...
	$(MAKE) test-js

bench:
	$(GO) test -run='^$$' -bench=. -benchmem -count=1 ./engine/... ./store/ ./server/

clean:
	rm -rf bin dist

# The long form of the crash test: hundreds of SIGKILLs against a real process.
soak:
	$(GO) test -count=1 -run TestCrashRecovery -v -timeout 30m ./cmd/idemlab/ -args -soak
