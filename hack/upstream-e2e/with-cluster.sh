#!/bin/bash
# Usage: with-cluster.sh COMMAND...  (run from the product checkout)
# Starts the embedded control plane (3 KWOK nodes, no real node) and `kruise manager`, runs
# COMMAND with KUBECONFIG set, then tears everything down. Prints COMMAND's output; exits with
# COMMAND's status (3 when the cluster or the manager could not start).
# Env: MANAGER_FLAGS (extra manager flags), KEEP_MANAGER_LOG (copy the manager's log there; the
# nodes, `kubectl get nodes -o wide`, are written next to it as nodes.txt).
set -u
K=$(command -v kruise 2>/dev/null || echo .venv/bin/kruise)
[ -x "$K" ] || { echo "no kruise CLI (PATH or .venv/bin)"; exit 3; }
d=$(mktemp -d)
trap '[ -n "${mgr:-}" ] && kill "$mgr" 2>/dev/null; "$K" cluster down --dir "$d" >/dev/null 2>&1; rm -rf "$d"' EXIT
"$K" cluster up --dir "$d" >"$d/up.log" 2>&1 || { tail -5 "$d/up.log"; echo "cluster up failed"; exit 3; }
export KUBECONFIG=$("$K" cluster env --dir "$d" 2>/dev/null | sed 's/^export KUBECONFIG=//' | tr -d "\"'" | grep -v '^#' | tail -1)
[ -f "${KUBECONFIG:-}" ] || { echo "no kubeconfig from 'kruise cluster env'"; exit 3; }
# CRDs (the product's and Gateway API), the manager's namespace, then the manager with its
# webhooks registered at a loopback URL.
KC=$(command -v kubectl || echo "$HOME/.cache/kruise/bin/current/kubectl")
crds=charts/kruise/files/crds; [ -d "$crds" ] || crds=charts/kruise/crds
"$KC" apply --server-side -f "$crds/" >"$d/crds.log" 2>&1 || { tail -5 "$d/crds.log"; echo "CRDs failed"; exit 3; }
gw=hack/crds/gateway-api-standard-install.yaml
[ -f "$gw" ] && "$KC" apply --server-side -f "$gw" >>"$d/crds.log" 2>&1
"$KC" create namespace kruise-system >/dev/null 2>&1
[ -n "${KEEP_MANAGER_LOG:-}" ] && "$KC" get nodes -o wide --show-labels >"$(dirname "$KEEP_MANAGER_LOG")/nodes.txt" 2>&1
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$K" manager --kubeconfig "$KUBECONFIG" --webhook-host=127.0.0.1 --webhook-port="$port" \
    --webhook-url-base="https://127.0.0.1:$port" --metrics-addr=:0 --health-probe-addr=:0 \
    ${MANAGER_FLAGS:-} >"$d/manager.log" 2>&1 &
mgr=$!
sleep 8
kill -0 "$mgr" 2>/dev/null || { tail -5 "$d/manager.log"; echo "manager died"; exit 3; }
"$@"
rc=$?
[ -n "${KEEP_MANAGER_LOG:-}" ] && cp "$d/manager.log" "$KEEP_MANAGER_LOG"
exit $rc
