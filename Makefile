# kruise: the two commands a newcomer needs are `make demo` and `make test`.
SHELL := /bin/bash
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CRI_STUBS := daemon/kruise/daemon/cri/_generated/VERSION
export KRUISE_CACHE_DIR ?= $(HOME)/.cache/kruise
# pytest-xdist workers for `make test`, each with its own embedded control plane (0: one process).
# 3 on 2 cores: the tests mostly wait (CPU 58% busy with 2 workers, 76% with 3; 29.4 -> 22.7 min)
TEST_WORKERS ?= 3

.PHONY: all venv tools sysdeps crds demo test test-unit test-integration lint typecheck clean image upstream-e2e upstream-e2e-build argo-rollouts

all: test

# the runtime dependencies at the image's pins (hack/image/requirements.txt): tests run what ships
$(STAMP): pyproject.toml hack/image/requirements.txt
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -c hack/image/requirements.txt -e '.[dev]'
	@touch $(STAMP)

# CRI stubs for kruise-daemon, generated from k8s.io/cri-api (Go module proxy) by grpcio-tools
$(CRI_STUBS): $(STAMP) hack/gen-cri.sh hack/kubelet-bin/go.mod
	hack/gen-cri.sh $(BIN)/python
	@touch $@

venv: $(STAMP) $(CRI_STUBS)

## tools: build kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, etcd, kwok, helm and
## the real node's kubelet, crictl and pause from Go modules into $(KRUISE_CACHE_DIR)/bin (reused when present).
tools:
	@hack/build-tools.sh >/dev/null

## argo-rollouts: Argo Rollouts' controller and CRDs (the benchmark anchor of bench/, from the Go
## module proxy) into $(KRUISE_CACHE_DIR)/bin/argo-rollouts-<version>; make test never needs it.
argo-rollouts:
	@hack/build-argo-rollouts.sh

## sysdeps: Debian packages the demo and the tests need (prometheus; containerd, runc, CNI plugins,
## docker-registry, skopeo, busybox-static, iptables, conntrack for the real node); skipped when present.
sysdeps:
	@hack/install-system-deps.sh

crds: venv
	$(BIN)/kruise crds --out charts/kruise/files/crds

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

typecheck: venv
	$(BIN)/mypy

## image: the kruise image from the Dockerfile, built by buildah on a Debian base made by mmdebstrap
## (no Docker daemon); PUSH=REGISTRY/REPO also pushes it. See hack/build-image.sh.
image: venv sysdeps
	hack/build-image.sh $(if $(PUSH),--push $(PUSH))

## demo: the main job on the embedded control plane (DEMO_ARGS: flags of `kruise demo`, e.g. --real-nodes 0).
demo: venv tools sysdeps
	$(BIN)/kruise demo $(DEMO_ARGS)

## test: the whole suite (unit, lint, import layers, integration against the real control plane);
## the 25 slowest steps are listed at the end (the suite's time budget is kept by them).
test: venv tools sysdeps
	$(BIN)/pytest -q -n $(TEST_WORKERS) --dist loadgroup --durations=25 $(PYTEST_ARGS)

## test-unit: the pure-logic tests only (no control plane; about two minutes).
test-unit: venv
	$(BIN)/pytest -q tests/unit $(PYTEST_ARGS)

## test-integration: the tests against the real control plane only (tests/integration).
test-integration: venv tools sysdeps
	$(BIN)/pytest -q -n $(TEST_WORKERS) --dist loadgroup --durations=25 tests/integration $(PYTEST_ARGS)

## upstream-e2e: upstream Kruise Rollouts' own e2e suite (openkruise/rollouts test/e2e, built from
## source) against this checkout's manager on the embedded cluster, one process per spec:
##   make upstream-e2e FOCUS='regex' [SKIP='regex'] [SPEC_TIMEOUT=s] [LIST_ONLY=1]
## Needs $(UPSTREAM_E2E_BIN), built by `make upstream-e2e-build MIRRORS=DIR`. Not part of `make test`
## (CI cannot fetch the sources). docs/conformance.md has the recipe and the results.
UPSTREAM_E2E_BIN := $(HOME)/.cache/kruise-upstream/bin/rollouts-e2e.test
upstream-e2e: venv
	@test -n "$$FOCUS" || { echo "upstream-e2e: set FOCUS='regex' (FOCUS=. for all 76 specs; LIST_ONLY=1 lists them)" >&2; exit 2; }
	@test -x $(UPSTREAM_E2E_BIN) -o -n "$$MIRRORS" || { echo "upstream-e2e: no $(UPSTREAM_E2E_BIN); build it with make upstream-e2e-build MIRRORS=DIR (bare mirrors of openkruise/rollouts, kruise-api, kruise-tools, kruise-rollout-api as DIR/owner+name/repo; docs/conformance.md)" >&2; exit 3; }
	@hack/upstream-e2e/run-rollouts-e2e.sh "$$FOCUS" "$$SKIP"

## upstream-e2e-build: rollouts-e2e.test and kubectl-kruise from the mirrors in MIRRORS (into ~/.cache/kruise-upstream/bin).
upstream-e2e-build:
	@test -n "$$MIRRORS" -a -d "$$MIRRORS/openkruise+rollouts/repo" || { echo "upstream-e2e-build: set MIRRORS=DIR holding bare mirrors of openkruise/rollouts, kruise-api, kruise-tools, kruise-rollout-api as DIR/owner+name/repo" >&2; exit 3; }
	@hack/upstream-e2e/build.sh

clean:
	rm -rf $(VENV) build dist
