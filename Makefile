# asofsql build and test entry points. `make test` is what CI runs.
GO      ?= go
PKGS    ?= ./...
FUZZTIME ?= 30s
# e.g. FUZZFLAGS=-parallel=1 on a shared machine
FUZZFLAGS ?=

.PHONY: all build test vet fmt-check lint bench bench-peers fuzz demo slt clean

all: build

build:
	CGO_ENABLED=0 $(GO) build $(PKGS)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet: fmt-check
	$(GO) vet $(PKGS)

# The whole suite, with the race detector. Benchmarks are never timed
# assertions; they run only under `make bench`. The timeout is a hang guard
# only: exec/asof takes ~2.5 min under -race on an idle 2-core machine and
# far longer on a loaded one, past go test's 10 min default.
test: vet
	$(GO) test -race -count=1 -timeout 30m $(PKGS)

lint: vet
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 $(PKGS)

bench:
	$(GO) test -run '^$$' -bench . -benchmem $(BENCHFLAGS) ./exec/asof/

# asofsql vs DuckDB (bench/ is its own module: DuckDB needs cgo). Full
# sizes take several minutes; run on an idle machine. PEERFLAGS="-scale 0.1"
# for a quick look.
bench-peers:
	$(MAKE) -C bench peers

# One logic-test file in every mode, e.g. make slt FILE=asof/ties.slt
# (make test runs them all).
slt:
	$(GO) test -count=1 -v -run TestSQLLogic ./tests/sqllogic/ -args -file '$(FILE)'

# Each fuzz target in turn (go test -fuzz takes one package and target).
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzJoin -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./exec/asof/
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./sql/parser/
	$(GO) test -run '^$$' -fuzz FuzzStatement -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./tests/limits/
	$(GO) test -run '^$$' -fuzz FuzzWire -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./pgwire/

# The main job: a generated trading day loaded into ordered tables and a
# tour of ASOF queries through SQL (DEMOFLAGS="--rows 1000000" for more).
demo:
	$(GO) run ./cmd/asofsql demo $(DEMOFLAGS)

clean:
	$(GO) clean -testcache
