# make test is what CI runs (.ci/run calls it). Integration tests start their
# own Redis Cluster from redis-server processes: `make deps` installs it.

GO ?= go
FUZZTIME ?= 60s
# Fuzz targets parse outside input and need no server: -short keeps the
# packages' TestMain from starting a Redis Cluster in every fuzz worker.
FUZZFLAGS ?= -short
# The scripts need Redis 7.0.12 or newer (see DESIGN.md).
REDIS_MIN_VERSION := 7.0.12

.PHONY: all test test-faults test-short lint fuzz build deps run bench bench-go tidy-check clean

all: lint test build

# -timeout: an explicit, generous bound instead of go test's default of 10
# minutes per package: a slow package on a loaded machine is not cut short,
# and a hung test still ends, with every goroutine's stack.
TESTTIMEOUT ?= 45m

test:
	@$(MAKE) --no-print-directory deps TESTING=1
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout $(TESTTIMEOUT) ./...

# The fault tests (TestFaults_*: master failover, script cache loss, replica
# restart) start, kill and freeze Redis servers of their own; about a minute.
# make test skips them unless ATOMLEDGER_FAULTS=1.
test-faults:
	@$(MAKE) --no-print-directory deps TESTING=1
	ATOMLEDGER_FAULTS=1 $(GO) test -race -count=1 -timeout $(TESTTIMEOUT) -run TestFaults ./engine/

# Unit tests only: no Redis needed.
test-short:
	$(GO) test -short -count=1 -timeout $(TESTTIMEOUT) ./...

lint:
	@out="$$(gofmt -l .)"; \
	if [ -n "$$out" ]; then echo "gofmt -l: not formatted:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@if command -v staticcheck >/dev/null 2>&1; then \
		echo staticcheck ./...; staticcheck ./...; \
	else \
		echo "staticcheck not on PATH: skipped"; \
	fi

# Runs every fuzz target of every package for FUZZTIME each.
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
		for target in $$($(GO) test $(FUZZFLAGS) -list 'Fuzz.*' $$pkg | grep '^Fuzz' || true); do \
			echo "fuzz $$pkg $$target for $(FUZZTIME)"; \
			$(GO) test $(FUZZFLAGS) -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) $$pkg; \
		done; \
	done

build:
	$(GO) build -o bin/engined ./cmd/engined

# Installs what make run and the tests start (redis-server, redis-tools,
# redis-sentinel, postgresql, curl for the printed commands) with apt-get when
# any is missing, as root or through sudo; otherwise says what to install and
# fails. The tests also need promtool (Debian's prometheus package), which
# checks deploy/'s rules: TESTING=1 adds it (make test does).
PKGS = redis-server redis-tools redis-sentinel postgresql curl$(if $(TESTING), prometheus)
deps:
	@set -e; \
	if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-sentinel >/dev/null 2>&1 || \
		! command -v curl >/dev/null 2>&1 || { [ -n "$(TESTING)" ] && ! command -v promtool >/dev/null 2>&1; } || \
		{ ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; }; then \
		if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
			apt-get update; \
			DEBIAN_FRONTEND=noninteractive apt-get install -y $(PKGS); \
		elif command -v apt-get >/dev/null 2>&1 && command -v sudo >/dev/null 2>&1 && sudo -v; then \
			sudo apt-get update; \
			sudo DEBIAN_FRONTEND=noninteractive apt-get install -y $(PKGS); \
		else \
			echo "redis-server, PostgreSQL or promtool is missing. Install Redis $(REDIS_MIN_VERSION) or newer and PostgreSQL (and promtool for the tests):"; \
			echo "  Debian, Ubuntu: sudo apt-get install $(PKGS)"; \
			echo "  macOS:          brew install redis postgresql prometheus"; \
			exit 1; \
		fi; \
	fi; \
	v="$$(redis-server --version | sed -n 's/.* v=\([0-9][0-9.]*\).*/\1/p')"; \
	if [ "$$(printf '%s\n' "$(REDIS_MIN_VERSION)" "$$v" | sort -V | head -n 1)" != "$(REDIS_MIN_VERSION)" ]; then \
		echo "redis-server $$v is too old: atomledger needs $(REDIS_MIN_VERSION) or newer"; \
		exit 1; \
	fi; \
	echo "redis-server $$v" >&2

# A local Redis Cluster (3 masters, 3 replicas, under .run/) and the daemon on
# 127.0.0.1:8080, with example holders and curl commands to paste; Ctrl-C
# stops everything. ENGINED_FLAGS passes flags, e.g. ENGINED_FLAGS='--listen 127.0.0.1:9090'.
run: deps build
	./bin/engined dev $(ENGINED_FLAGS)

# engined bench: starts its own Redis Cluster (and a temporary PostgreSQL
# when initdb is installed, else the relay and system parts are skipped),
# runs every part side by side and prints the table; about six minutes,
# the system part (its own AOF cluster, PostgreSQL and daemon) about 80 s of
# them, the hot part about 40 s. docs/benchmarks.md explains the figures. Pass flags with BENCHFLAGS,
# e.g.
#   make bench BENCHFLAGS="--json --relay-duration 60s"
BENCHFLAGS ?=
# Only the bench writes to stdout, so that --json gives JSON alone there.
bench: deps
	@$(GO) run ./cmd/engined bench $(BENCHFLAGS)

# The Go benchmarks: the engine's client-side costs (Encode, Apply against
# raw EVALSHA) on a plain Redis they start themselves.
bench-go:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 2000x ./internal/bench/

tidy-check:
	$(GO) mod tidy
	git diff --exit-code go.mod go.sum

clean:
	rm -rf bin
