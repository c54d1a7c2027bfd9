#!/usr/bin/env bash
# Build the control-plane binaries (kube-apiserver, kube-controller-manager,
# kube-scheduler, kubectl, etcd, kwok, helm) and the real node's (kubelet,
# kube-proxy, crictl, pause) from Go modules into a cache outside the repository, keyed by version.
# Reuses what is already there.
#
#   hack/build-tools.sh            build what is missing, print the bin dir
#   KRUISE_CACHE_DIR=/x hack/...   use another cache root (default ~/.cache/kruise)
#
# Each tool lives in its own Go module under hack/ so that the k8s.io/*
# replace lines of one never leak into another (kwok is built against an
# older client-go than kube-apiserver).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
CACHE="${KRUISE_CACHE_DIR:-$HOME/.cache/kruise}"
export GOWORK=off GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-trimpath
# A reused GOMODCACHE/GOCACHE makes rebuilds fast; go's defaults already live in $HOME.
JOBS="${KRUISE_GO_JOBS:-2}"

K8S_VERSION=v1.37.2
ETCD_VERSION=v3.6.16
KWOK_VERSION=v0.8.0
HELM_VERSION=v3.22.0
CRICTL_VERSION=v1.37.0
# our own pause program: keyed by its source, so an edit rebuilds it
PAUSE_VERSION="src-$(cat "$HERE/pause/go.mod" "$HERE/pause/main.go" | sha256sum | cut -c1-12)"

log() { printf '[build-tools] %s\n' "$*" >&2; }

k8s_ldflags() { # version stamps as Kubernetes' hack/lib/version.sh sets them
  local minor; minor="$(echo "$K8S_VERSION" | cut -d. -f2)"
  local ld="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld="$ld -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitVersion=$K8S_VERSION -X $p.gitTreeState=clean"
    ld="$ld -X $p.gitCommit=0000000000000000000000000000000000000000 -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  echo "$ld"
}

build_k8s() {
  local out="$CACHE/bin/k8s-$K8S_VERSION"
  if [[ -x "$out/kube-apiserver" && -x "$out/kube-controller-manager" && -x "$out/kube-scheduler" && -x "$out/kubectl" ]]; then
    return
  fi
  log "building kubernetes $K8S_VERSION (cold: ~15 min on 2 cores)"
  mkdir -p "$out.tmp"
  local ld; ld="$(k8s_ldflags)"
  (cd "$HERE/k8s-bins" && go build -p "$JOBS" -ldflags "$ld" -o "$out.tmp/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl)
  rm -rf "$out"; mv "$out.tmp" "$out"
}

build_simple() { # name version moddir pkg ldflags
  local name="$1" version="$2" moddir="$3" pkg="$4" ld="$5"
  local out="$CACHE/bin/$name-$version"
  [[ -x "$out/$name" ]] && return
  log "building $name $version"
  mkdir -p "$out.tmp"
  (cd "$HERE/$moddir" && go build -p "$JOBS" -ldflags "$ld" -o "$out.tmp/$name" "$pkg")
  rm -rf "$out"; mv "$out.tmp" "$out"
}

build_simple etcd "$ETCD_VERSION" etcd-bin go.etcd.io/etcd/server/v3 "-s -w"
build_simple kwok "$KWOK_VERSION" kwok-bin sigs.k8s.io/kwok/cmd/kwok "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=$KWOK_VERSION"
build_simple helm "$HELM_VERSION" helm-bin helm.sh/helm/v3/cmd/helm \
  "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
build_k8s
# the kubelet after the control plane: its packages are mostly in GOCACHE by then (~1 min, cold ~6 min)
build_simple kubelet "$K8S_VERSION" kubelet-bin k8s.io/kubernetes/cmd/kubelet "$(k8s_ldflags)"
# kube-proxy (iptables mode on the host when real nodes run): shares the kubelet's packages
build_simple kube-proxy "$K8S_VERSION" kube-proxy-bin k8s.io/kubernetes/cmd/kube-proxy "$(k8s_ldflags)"
build_simple crictl "$CRICTL_VERSION" crictl-bin sigs.k8s.io/cri-tools/cmd/crictl \
  "-s -w -X sigs.k8s.io/cri-tools/pkg/version.Version=$CRICTL_VERSION"
build_simple pause "$PAUSE_VERSION" pause . "-s -w"

# One directory of symlinks the Python harness puts first on PATH.
BIN="$CACHE/bin/current"
mkdir -p "$BIN"
for f in "$CACHE/bin/k8s-$K8S_VERSION"/* "$CACHE/bin/etcd-$ETCD_VERSION/etcd" \
         "$CACHE/bin/kwok-$KWOK_VERSION/kwok" "$CACHE/bin/helm-$HELM_VERSION/helm" \
         "$CACHE/bin/kubelet-$K8S_VERSION/kubelet" "$CACHE/bin/kube-proxy-$K8S_VERSION/kube-proxy" \
         "$CACHE/bin/crictl-$CRICTL_VERSION/crictl" \
         "$CACHE/bin/pause-$PAUSE_VERSION/pause"; do
  ln -sf "$f" "$BIN/$(basename "$f")"
done
echo "$BIN"
