# ssebench-audit: `make demo` shows it, `make test` proves it.
GO      ?= go
BIN     := bin/ssebench-audit
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)

# The probe runs FROM scratch: the binary must be static.
export CGO_ENABLED = 0

.PHONY: build demo test unit race e2e bench fuzz docs cleanup clean cluster-build cluster cluster-down

# The tool, and beside it the probe alone: what audits put in probe
# containers and copy into live runs (the tool finds it there).
build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/ ./cmd/ssebench-audit ./cmd/ssebench-audit-probe

## demo: bring up a correct and a faulty deployment, audit both, remove everything
demo: build
	./$(BIN) demo

## test: vet, the audit's orchestration under the race detector, unit tests (with fuzz seed
## corpora), end-to-end tests on the engine, the ssebench extension
test: build race cluster-build
	$(GO) vet ./...
	$(GO) test -count=1 -parallel 4 -timeout 20m ./...
	SSEBENCH_AUDIT_REAL_BIN=$(BIN) bash extension/test.sh

unit:
	$(GO) test -count=1 ./probes/... ./checks/... ./backend/... ./report/... ./schema/... ./images/... ./fixtures/stub/...

# The race detector needs cgo; the binary itself stays static.
race:
	CGO_ENABLED=1 $(GO) test -race -count=1 ./bench/ ./checks/...

## docs: write docs/checks.md from the catalogue
docs:
	$(GO) test -count=1 -run TestDocsCurrent ./checks/ -update

e2e: build cluster-build
	$(GO) test -count=1 -parallel 4 -timeout 20m ./tests/...

## bench: wall time, peak memory and cost of the audit with 0, 2, 20 and 100 live runs
bench: build
	$(GO) test -count=1 -run '^$$' -bench Audit -benchtime 3x -timeout 60m ./tests/

## fuzz: longer runs of every fuzz target (seed corpora run in `make test`)
# Go 1.26's fuzz coordinator may end a -fuzztime run with a bare "context
# deadline exceeded" and no failing input (go.dev/issue/75804): that is not a
# finding. A target fails when it wrote a failing input, or failed otherwise.
FUZZTIME ?= 30s
fuzz:
	@for t in $$($(GO) test -list '^Fuzz' ./probes/ | grep ^Fuzz); do \
		before=$$(ls probes/testdata/fuzz/$$t 2>/dev/null | wc -l); \
		out=$$($(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) ./probes/ 2>&1); rc=$$?; \
		echo "$$out" | grep -v '^fuzz: elapsed'; \
		after=$$(ls probes/testdata/fuzz/$$t 2>/dev/null | wc -l); \
		if [ $$rc -ne 0 ]; then \
			if [ "$$after" = "$$before" ] && echo "$$out" | grep -q '^    context deadline exceeded$$' \
				&& [ $$(echo "$$out" | grep -c '^--- FAIL') = 1 ]; then \
				echo "$$t: ended by Go's fuzz deadline race (go.dev/issue/75804), no failing input: not a finding"; \
			else exit 1; fi; \
		fi; done

## cluster-build: the test cluster's binaries (etcd, the Kubernetes components, CoreDNS) from the
## Go module proxy and the CNI plugins from Debian's package, cached under
## ~/.cache/ssebench-audit/cluster (cold: about 10 minutes on 2 cores)
cluster-build:
	./cluster/build.sh

## cluster: start the test cluster (control plane on loopback, one node with its own containerd,
## CoreDNS); kubeconfig: bin/cluster/kubeconfig, kubectl: bin/kubectl. The end-to-end
## tests take one left running, and otherwise start and stop their own.
cluster: cluster-build
	./cluster/up.sh
	./cluster/node-up.sh

cluster-down:
	./cluster/down.sh

cleanup: build
	./$(BIN) cleanup

clean:
	rm -rf bin
