# kubectl-maintenance. `make help` lists the targets.
SHELL := /usr/bin/env bash
GO ?= go
VERSION ?= v0.1.0
LDFLAGS := -X github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli.version=$(VERSION)
PKGS := ./...
# go test timeout for the whole suite (the integration packages start a real cluster each).
TEST_TIMEOUT ?= 40m

.DEFAULT_GOAL := help

.PHONY: help
help: ## Show this help
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  \033[36m%-12s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## Build bin/kubectl-maintenance (put it on PATH to use it as `kubectl maintenance`)
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/kubectl-maintenance ./cmd/kubectl-maintenance

.PHONY: tools
tools: ## Build the pinned control-plane binaries once per machine (about 10 minutes cold on 2 cores)
	@./hack/build-tools.sh >/dev/null

.PHONY: test
test: tools ## Run every test: unit tests and the integration/e2e tests on a real local cluster
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) $(PKGS)

.PHONY: test-unit
test-unit: ## Run the unit tests only (no cluster)
	$(GO) test -count=1 -short $(PKGS)

.PHONY: verify
verify: ## gofmt, go vet and go mod tidy must leave nothing to change
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change: $$out"; exit 1; fi
	$(GO) vet $(PKGS)
	@cp go.mod /tmp/km-go.mod.bak && cp go.sum /tmp/km-go.sum.bak && $(GO) mod tidy && \
	  if ! git diff --quiet -- go.mod go.sum; then echo "go mod tidy changes go.mod/go.sum"; git diff -- go.mod go.sum; exit 1; fi

.PHONY: demo
demo: build tools ## Start the local cluster, create demo workloads, run the plugin against them, stop
	$(GO) run ./hack/demo -plugin bin/kubectl-maintenance

.PHONY: cluster
cluster: build tools ## Like demo, then keep the cluster up until Ctrl-C (kubeconfig in .local/kubeconfig)
	$(GO) run ./hack/demo -plugin bin/kubectl-maintenance -keep

BENCH_PROFILE ?= realistic

.PHONY: bench
bench: tools ## Our drain vs kubectl drain on the local cluster (BENCH_PROFILE=realistic|fast|scale), then the Go benchmarks
	$(GO) run ./hack/bench -profile $(BENCH_PROFILE) -out .local/bench
	$(GO) test -run '^$$' -bench . -benchmem ./pdb/... ./drain/... ./tui/...

.PHONY: clean
clean: ## Remove build output (the tool cache stays: hack/build-tools.sh prints its path)
	rm -rf bin .local

.PHONY: generate
generate: ## Regenerate the NodePool deepcopy code and CRD with the pinned controller-gen
	./hack/generate.sh
