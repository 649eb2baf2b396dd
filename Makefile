# svc — see README.md. Two commands matter: `make run` and `make test`.
GO      ?= go
ARGS    ?=
PKGS    := ./...
BENCH   ?= .
FUZZTIME ?= 20s

.PHONY: run test fmt-check vet unit allocs bench fuzz generate

# Builds and starts the example server on the embedded store (./data).
run:
	$(GO) build -o bin/example-server ./example-plugin/cmd/example-server
	./bin/example-server $(ARGS)

test: fmt-check vet unit allocs

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

unit:
	$(GO) test -race -count=1 $(PKGS)

# The zero-allocation tests once more without the race detector, which
# allocates in generated validators (they skip under -race).
allocs:
	$(GO) test -count=1 -run 'Alloc' ./generator/validators/... ./runtime/validation ./runtime/object ./runtime/rbac

# Benchmarks of the runtime core at 100k objects (see README, Performance).
bench:
	SVC_BENCH_1M=1 $(GO) test -run '^$$' -bench '$(BENCH)' -benchmem -timeout 60m ./runtime/...

# Runs every fuzz target for FUZZTIME each.
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

# examples/bookshelf is a module of its own (a plugin author's), outside ./...
generate:
	$(GO) generate ./...
	cd examples/bookshelf && GOWORK=off $(GO) generate ./...
