# ssebench-audit: `make demo` shows it, `make test` proves it.
GO      ?= go
BIN     := bin/ssebench-audit
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)

# The probe runs FROM scratch: the binary must be static.
export CGO_ENABLED = 0

.PHONY: build demo test unit e2e bench fuzz cleanup clean

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/ssebench-audit

## demo: bring up a correct and a faulty deployment, audit both, remove everything
demo: build
	./$(BIN) demo

## test: vet, unit tests (with fuzz seed corpora), end-to-end tests on the engine, the ssebench extension
test: build
	$(GO) vet ./...
	$(GO) test -count=1 -parallel 4 -timeout 20m ./...
	SSEBENCH_AUDIT_REAL_BIN=$(BIN) bash extension/test.sh

unit:
	$(GO) test -count=1 ./probes/... ./checks/... ./report/... ./images/... ./fixtures/stub/...

e2e: build
	$(GO) test -count=1 -parallel 4 -timeout 20m ./tests/...

## bench: wall time and peak memory of the audit with 0, 2 and 20 live runs
bench: build
	$(GO) test -count=1 -run '^$$' -bench Audit -benchtime 3x -timeout 30m ./tests/

## fuzz: longer runs of every fuzz target (seed corpora run in `make test`)
FUZZTIME ?= 30s
fuzz:
	@for t in $$($(GO) test -list '^Fuzz' ./probes/ | grep ^Fuzz); do \
		$(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) ./probes/ || exit 1; done

cleanup: build
	./$(BIN) cleanup

clean:
	rm -rf bin
