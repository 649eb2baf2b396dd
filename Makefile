# svc — see README.md. Two commands matter: `make run` and `make test`.
GO      ?= go
ARGS    ?=
PKGS    := ./...
BENCH   ?= .
FUZZTIME ?= 10s
FUZZFLAGS ?=
CRASH_ROUNDS  ?= 20
CRASH_SIZES   ?= 100,102400
CRASH_OBJECTS ?= 32
SOAK          ?= 10m

.PHONY: console console-test run test fmt-check vet unit unit-etcd allocs loadgen-test loadgen bench fuzz crash soak generate etcd cluster bench-etcd

# Builds and starts the example server on the embedded store (./data).
run:
	$(GO) build -o bin/example-server ./example-plugin/cmd/example-server
	./bin/example-server $(ARGS)

test: fmt-check vet etcd unit allocs loadgen-test console-test unit-etcd

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

unit:
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

# The backend matrix: the API's, server's and plugins' end-to-end tests
# again on etcd (tools/etcd-matrix.sh; docs/deployment.md).
unit-etcd: etcd
	GO=$(GO) sh tools/etcd-matrix.sh

# The zero-allocation tests once more without the race detector, which
# allocates in generated validators (they skip under -race).
allocs:
	$(GO) test -count=1 -run 'Alloc' ./generator/validators/... ./runtime/validation ./runtime/object ./runtime/rbac

# The load tool (tools/loadgen) is a module of its own, outside ./..., so
# that its HTTP client's dependencies (fasthttp and what it pulls in) stay
# out of the root go.mod every plugin module reads. Its tests start the
# example server in-process through the replace to this checkout.
LOADGEN := tools/loadgen

loadgen-test:
	cd $(LOADGEN) && GOWORK=off $(GO) vet ./...
	cd $(LOADGEN) && GOWORK=off $(GO) test -race -count=1 ./...

# Builds the load tool as bin/loadgen (see docs/performance.md).
loadgen:
	cd $(LOADGEN) && GOWORK=off $(GO) build -o $(CURDIR)/bin/loadgen .

# Benchmarks of the runtime core at 100k objects (see README, Performance).
bench:
	SVC_BENCH_1M=1 $(GO) test -run '^$$' -bench '$(BENCH)' -benchmem -timeout 60m ./runtime/...

# Runs every fuzz target for FUZZTIME each (FUZZTIME=10m for a long
# campaign), going on after a failure, and prints a table at the end; it
# fails if any target failed. FUZZFLAGS: e.g. -parallel 1 -run Selector.
fuzz:
	$(GO) run ./tools/fuzzall -fuzztime $(FUZZTIME) $(FUZZFLAGS)

# The SIGKILL crash test (runtime/store, TestCrashRecovery) for
# CRASH_ROUNDS rounds, writers alternating objects of CRASH_SIZES bytes
# (a padding annotation) over CRASH_OBJECTS names each, with a 192 KiB snapshot
# threshold; each round logs objects acknowledged and present.
crash:
	SVC_STORE_CRASH_ROUNDS=$(CRASH_ROUNDS) SVC_STORE_CRASH_SIZES=$(CRASH_SIZES) SVC_STORE_CRASH_OBJECTS=$(CRASH_OBJECTS) \
	  $(GO) test -count=1 -v -timeout 2h -run '^TestCrashRecovery$$' ./runtime/store

# A soak: the example server on a new data directory (admin password from
# SVC_ADMIN_PASSWORD), preloaded, under the load tool's mixed scenario for
# SOAK; see tools/soak.sh for SOAK_RATE, SOAK_OBJECTS and the rest.
soak:
	GO=$(GO) SOAK=$(SOAK) sh tools/soak.sh

# bin/etcd: the standard etcd server, built from tools/etcd, a module of its
# own so that etcd's server stays out of the root module's graph. Tests
# that start etcd (runtime/store/etcdtest) use it, or build it themselves.
etcd:
	cd tools/etcd && $(GO) build -o ../../bin/etcd .

# A 3-member etcd cluster and three example-server replicas sharing it, on
# loopback (127.0.0.1:8091-8093); Ctrl-C stops everything. See
# tools/cluster.sh for CLUSTER_DIR and the ports.
cluster:
	GO=$(GO) bash tools/cluster.sh

# examples/bookshelf is a module of its own (a plugin author's), outside ./...
# The console's vendored browser libraries (runtime/console/web/static/
# vendor), re-copied from the npm versions pinned in tools/console; the
# copies are committed, so building and testing need no Node.
CONSOLE_VENDOR := runtime/console/web/static/vendor
console:
	cd tools/console && npm ci --ignore-scripts --no-audit --no-fund
	rm -rf $(CONSOLE_VENDOR) && mkdir -p $(CONSOLE_VENDOR)
	v=$$(node -p "require('./tools/console/node_modules/preact/package.json').version"); \
	  cp tools/console/node_modules/preact/dist/preact.module.js $(CONSOLE_VENDOR)/preact-$$v.module.js; \
	  cp tools/console/node_modules/preact/hooks/dist/hooks.module.js $(CONSOLE_VENDOR)/preact-hooks-$$v.module.js; \
	  cp tools/console/node_modules/preact/LICENSE $(CONSOLE_VENDOR)/preact-LICENSE.txt
	v=$$(node -p "require('./tools/console/node_modules/htm/package.json').version"); \
	  cp tools/console/node_modules/htm/dist/htm.module.js $(CONSOLE_VENDOR)/htm-$$v.module.js; \
	  cp tools/console/node_modules/htm/LICENSE $(CONSOLE_VENDOR)/htm-LICENSE.txt
	@echo "vendored into $(CONSOLE_VENDOR); update the import map in runtime/console/web/static/index.html if a version changed"

# The console in headless Chromium (tools/console, a module of its own so
# chromedp stays out of the root go.mod); skipped, saying so, without it.
console-test:
	@command -v chromium >/dev/null || command -v chromium-browser >/dev/null || command -v google-chrome >/dev/null || \
	  echo "console browser tests skipped: chromium not found (apt-get install chromium)"
	cd tools/console && GOWORK=off $(GO) vet ./...
	cd tools/console && GOWORK=off $(GO) test -count=1 -v ./...

generate:
	$(GO) generate ./...
	cd examples/bookshelf && GOWORK=off $(GO) generate ./...

# Replicas on etcd measured (docs/performance.md, "Replicas on etcd").
bench-etcd: etcd loadgen
	$(GO) build -o bin/example-server ./example-plugin/cmd/example-server
	$(GO) build -o bin/freeport ./tools/freeport
	bash tools/etcd-bench.sh
