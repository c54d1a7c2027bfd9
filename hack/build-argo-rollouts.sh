#!/usr/bin/env bash
# Build the benchmark anchor of issue 28: Argo Rollouts' controller (rollouts-controller) from the
# Go module proxy, with its CRDs, into the tool cache. Only bench/ uses it; `make test` never does.
#
#   hack/build-argo-rollouts.sh     build when missing, print the directory holding
#                                   rollouts-controller and crds/*.yaml
#
# hack/argo-rollouts-bin/go.mod carries argo-rollouts' own replace lines (k8s.io/* at its
# v0.34.x), as hack/kubelet-bin does for the kubelet. Cold: ~6 min on 2 cores, 178 MB binary.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
CACHE="${KRUISE_CACHE_DIR:-$HOME/.cache/kruise}"
export GOWORK=off GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-trimpath
ARGO_VERSION="$(cd "$HERE/argo-rollouts-bin" && go list -m -f '{{.Version}}' github.com/argoproj/argo-rollouts)"
out="$CACHE/bin/argo-rollouts-$ARGO_VERSION"
if [[ ! -x "$out/rollouts-controller" || ! -d "$out/crds" ]]; then
  printf '[build-argo-rollouts] building argo-rollouts %s\n' "$ARGO_VERSION" >&2
  rm -rf "$out.tmp"; mkdir -p "$out.tmp/crds"
  (cd "$HERE/argo-rollouts-bin" && go build -p "${KRUISE_GO_JOBS:-2}" -ldflags "-s -w" \
    -o "$out.tmp/rollouts-controller" github.com/argoproj/argo-rollouts/cmd/rollouts-controller)
  src="$(cd "$HERE/argo-rollouts-bin" && go list -m -f '{{.Dir}}' github.com/argoproj/argo-rollouts)"
  cp "$src"/manifests/crds/*-crd.yaml "$out.tmp/crds/"
  chmod -R u+w "$out.tmp"
  rm -rf "$out"; mv "$out.tmp" "$out"
fi
echo "$out"
