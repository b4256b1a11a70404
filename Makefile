# kubectl-maintenance. `make help` lists the targets.
SHELL := /usr/bin/env bash
GO ?= go
MODULE := github.com/kubectl-maintenance/kubectl-maintenance
# `make build` stamps the commit (-dirty when the tree has changes) and the commit's time,
# the values Go's build information gives a plain `go build` in a clone (vcs.revision,
# vcs.modified, vcs.time), and the version only when VERSION is set; otherwise the binary
# reports the module version Go records, as `go build` and `go install` do. `make release`
# needs VERSION.
VERSION ?=
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)$(shell [[ -z "$$(git status --porcelain 2>/dev/null)" ]] || echo -dirty)
DATE ?= $(shell TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ 2>/dev/null)
LDFLAGS := -X $(MODULE)/cmd/cli.commit=$(COMMIT) -X $(MODULE)/cmd/cli.date=$(DATE) $(if $(VERSION),-X $(MODULE)/cmd/cli.version=$(VERSION))
PKGS := ./...
# The release platforms; `make verify` cross-builds every one.
TARGETS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
# Modules besides the root one: the image builder, the Helm chart's SDK tests (Helm v3.22
# requires k8s.io/* v0.37, the plugin pins v0.36) and the pinned tools.
SUBMODULES := hack/image hack/chart hack/filedeps hack/tools/golangci-lint hack/tools/controller-gen hack/tools/kube hack/tools/etcd hack/tools/kwok
# make image: the name written into the tarball (default ghcr.io/kubectl-maintenance/kubectl-maintenance:<VERSION or dev>,
# the name config/manager/deployment.yaml runs) and the linux architecture.
IMAGE ?=
IMAGE_ARCH ?= $(shell $(GO) env GOARCH)
# go test timeout for the whole suite (the integration packages start a real cluster each).
TEST_TIMEOUT ?= 40m

.DEFAULT_GOAL := help

.PHONY: help
help: ## Show this help
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  \033[36m%-17s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## Build bin/kubectl-maintenance (put it on PATH to use it as `kubectl maintenance`)
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/kubectl-maintenance ./cmd/kubectl-maintenance

.PHONY: release
release: ## Build dist/: six archives, the Helm chart (version tied to VERSION), checksums.txt, plugins/maintenance.yaml (make release VERSION=vX.Y.Z)
	@if [[ -z "$(VERSION)" ]]; then echo "usage: make release VERSION=vX.Y.Z" >&2; exit 2; fi
	$(GO) run ./hack/release -version "$(VERSION)" -out dist
	cd hack/chart && $(GO) run ./helmchart package -version "$(VERSION)" -out "$(CURDIR)/dist"

.PHONY: image
image: ## Build the pool controller's image tarball dist/kubectl-maintenance-image.tar (no container runtime needed)
	cd hack/image && $(GO) run . -out "$(CURDIR)/dist/kubectl-maintenance-image.tar" -arch "$(IMAGE_ARCH)" \
	  $(if $(VERSION),-version "$(VERSION)") $(if $(IMAGE),-image "$(IMAGE)")

.PHONY: tools
tools: ## Build the pinned control-plane binaries once per machine (about 10 minutes cold on 2 cores)
	@./hack/build-tools.sh >/dev/null

.PHONY: test
test: tools ## Run every test: unit tests and the integration/e2e tests on a real local cluster
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) $(PKGS)
	cd hack/image && $(GO) test -count=1 ./...
	cd hack/chart && $(GO) test -count=1 ./...
	cd hack/filedeps && $(GO) test -count=1 ./...

.PHONY: test-unit
test-unit: ## Run the unit tests only (no cluster, no builds)
	$(GO) test -count=1 -short $(PKGS)
	cd hack/image && $(GO) test -count=1 -short ./...
	cd hack/chart && $(GO) test -count=1 -short ./...
	cd hack/filedeps && $(GO) test -count=1 -short ./...

.PHONY: verify
verify: verify-mod verify-fmt vet verify-deps verify-generated verify-docs lint cross-build ## Everything CI checks before the tests; changes no file

.PHONY: verify-mod
verify-mod: ## go.mod and go.sum of every module are tidy (go mod tidy -diff: nothing is rewritten)
	$(GO) mod tidy -diff
	@for m in $(SUBMODULES); do (cd $$m && $(GO) mod tidy -diff) || { echo "in $$m" >&2; exit 1; }; done

.PHONY: verify-fmt
verify-fmt: ## gofmt has nothing to change
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [[ -n "$$out" ]]; then echo "gofmt would change:" $$out >&2; exit 1; fi

.PHONY: vet
vet: ## go vet
	$(GO) vet $(PKGS)
	cd hack/image && $(GO) vet ./...
	cd hack/chart && $(GO) vet ./...
	cd hack/filedeps && $(GO) vet ./...

.PHONY: verify-deps
verify-deps: ## No engine (drain, pdb, nodepool) depends on bubbletea, even indirectly (depguard checks direct imports)
	@bad=$$($(GO) list -deps ./drain/... ./pdb/... ./nodepool/... | grep -E '^(charm.land|github.com/charmbracelet)/bubbletea' || true); \
	  if [[ -n "$$bad" ]]; then echo "an engine depends on bubbletea: $$bad" >&2; exit 1; fi

.PHONY: lint
lint: ## golangci-lint (pinned v2, built from the module proxy once per machine) with .golangci.yml
	./hack/lint.sh

.PHONY: verify-generated
verify-generated: ## The committed deepcopy code and CRD are what controller-gen makes from the API
	./hack/verify-generated.sh

.PHONY: cross-build
# Every package but the local-cluster harness (e2e/cluster, Linux-only by design: process
# groups and Pdeathsig) and the programs built on it (the e2e helpers, hack/bench, hack/demo).
CROSS_PKGS = $(shell $(GO) list -f '{{if .GoFiles}}{{.ImportPath}} {{join .Deps " "}}{{end}}' $(PKGS) | grep -v '/e2e/cluster' | cut -d' ' -f1)

cross-build: ## Build the plugin's packages for each release platform (CGO_ENABLED=0 -trimpath, as the release does)
	@pkgs="$(CROSS_PKGS)"; for t in $(TARGETS); do echo "go build for $$t: $$(wc -w <<<"$$pkgs") packages"; \
	  CGO_ENABLED=0 GOOS=$${t%/*} GOARCH=$${t#*/} $(GO) build -trimpath -o /dev/null $$pkgs || exit 1; done

.PHONY: demo
demo: build tools ## Start the local cluster, create demo workloads, run the plugin against them, then our drain beside kubectl drain on twin workloads, stop
	$(GO) run ./hack/demo -plugin bin/kubectl-maintenance

.PHONY: cluster
cluster: build tools ## Like demo, then keep the cluster up until Ctrl-C (kubeconfig in .local/kubeconfig)
	$(GO) run ./hack/demo -plugin bin/kubectl-maintenance -keep

BENCH_PROFILE ?= realistic

.PHONY: bench
bench: tools ## Our drain vs kubectl drain on the local cluster (BENCH_PROFILE=realistic|fast|scale|fleet; BENCH_FLEET_NODES=100 scales fleet down; BENCH_KCM_DEFAULT_CLIENT=1 runs its phases at kube-controller-manager's default client), then the Go benchmarks (not after fleet: its 30 minutes)
	$(GO) run ./hack/bench -profile $(BENCH_PROFILE) -out .local/bench
	@if [ "$(BENCH_PROFILE)" = fleet ]; then \
		echo "Go benchmarks not run after the fleet profile: make bench-go (or make bench with another profile) runs them"; \
	else \
		$(MAKE) --no-print-directory bench-go; \
	fi

.PHONY: bench-go
bench-go: ## The Go benchmarks alone (engine, budgets, TUI)
	$(GO) test -run '^$$' -bench . -benchmem ./pdb/... ./drain/... ./tui/...

.PHONY: bench-docs
bench-docs: tools ## Run the realistic bench and write its report and timelines to docs/bench/ (the README's figures)
	rm -rf .local/bench-docs
	$(GO) run ./hack/bench -profile realistic -out .local/bench-docs
	cp .local/bench-docs/report.json .local/bench-docs/timeline-*.png docs/bench/
	@echo "docs/bench/ updated: update the README's Performance table from docs/bench/report.json"

.PHONY: clean
clean: ## Remove build output (the tool cache stays: hack/build-tools.sh prints its path)
	rm -rf bin dist .local

.PHONY: docs
docs: ## Regenerate docs/reference (command pages, exit codes, NDJSON events) from the code
	$(GO) run ./hack/gendocs -out docs/reference

.PHONY: verify-docs
verify-docs: ## The committed docs/reference is what hack/gendocs makes from the code
	./hack/verify-docs.sh

.PHONY: generate
generate: ## Regenerate the NodePool deepcopy code and CRD with the pinned controller-gen
	./hack/generate.sh
