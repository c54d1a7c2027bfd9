#!/bin/bash
# Usage: hack/upstream-e2e/run-rollouts-e2e.sh FOCUS_REGEX [SKIP_REGEX]   (or `make upstream-e2e`)
# Runs the UPSTREAM Kruise Rollouts e2e suite (openkruise/rollouts test/e2e, built by build.sh)
# against this checkout's `kruise manager`: with-cluster.sh starts the embedded control plane
# (3 KWOK nodes, no real node) and the manager, then e2e_driver.py does the setup upstream's CI
# does before `ginkgo test/e2e` (namespace kruise-rollout, Istio CRDs, the Lua ConfigMap for the
# custom-provider specs; the HTTPRoute CRD is created by the suite's BeforeSuite / already there)
# and runs every spec matching FOCUS_REGEX, one process per spec, printing
# `PASS|FAIL [secs] <spec> :: <first failure>` and finally `upstream-e2e: N passed, M failed`.
# Env: SPEC_TIMEOUT (s, default 1500), E2E_OUT (log dir; default $CACHE/runs/<time>),
#      MANAGER_FLAGS (appended to the manager's flags), LIST_ONLY=1 (just list specs),
#      CHECKOUT (the product checkout to run, default: the one holding this script; it needs its
#      own .venv from `make venv`), MIRRORS (to build the binary when it is absent).
# Upstream deploys kruise-rollout with `--leader-elect --feature-gates=AdvancedDeployment=true` in
# namespace kruise-rollout; the manager gets the equivalent flags below.
# Exit: 0 all matching specs passed, 1 some failed, 3 binary/sources/cluster missing.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
CHECKOUT=$(cd "${CHECKOUT:-$HERE/../..}" && pwd)
C=${KRUISE_UPSTREAM_CACHE:-$HOME/.cache/kruise-upstream}
BIN=$C/bin/rollouts-e2e.test
E2E_DIR=$C/src/rollouts/test/e2e
FOCUS=${1:?usage: run-rollouts-e2e.sh FOCUS_REGEX [SKIP_REGEX]}
SKIP=${2:-}
need="build it: MIRRORS=DIR $HERE/build.sh e2e (DIR holds bare mirrors of openkruise/rollouts, kruise-api, kruise-tools, kruise-rollout-api as owner+name/repo; see docs/conformance.md)"
if [ ! -x "$BIN" ] || [ ! -d "$E2E_DIR/test_data" ]; then
  if [ -z "${MIRRORS:-}" ] || [ ! -d "$MIRRORS/openkruise+rollouts/repo" ]; then
    echo "upstream-e2e: no $BIN (or its sources); $need" >&2; exit 3
  fi
  "$HERE/build.sh" e2e || exit 3
fi
OUT=${E2E_OUT:-$C/runs/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
cd "$CHECKOUT" || exit 3
[ -x .venv/bin/kruise ] || { echo "upstream-e2e: no $CHECKOUT/.venv/bin/kruise; run make venv there" >&2; exit 3; }
export PATH="$CHECKOUT/.venv/bin:$HOME/.cache/kruise/bin/current:$PATH"
driver=(python3 "$HERE/e2e_driver.py" --binary "$BIN" --e2e-dir "$E2E_DIR" --focus "$FOCUS" --out "$OUT")
[ -n "$SKIP" ] && driver+=(--skip "$SKIP")
if [ -n "${LIST_ONLY:-}" ]; then "${driver[@]}" --list-only; exit $?; fi
export MANAGER_FLAGS="--feature-gates=AdvancedDeployment=true --rollout-configuration-namespace=kruise-rollout ${MANAGER_FLAGS:-}"
export KEEP_MANAGER_LOG="$OUT/manager.log"
{ echo "checkout: $CHECKOUT $(git -C "$CHECKOUT" rev-parse --abbrev-ref HEAD 2>/dev/null) $(git -C "$CHECKOUT" rev-parse --short HEAD 2>/dev/null)$(git -C "$CHECKOUT" diff --quiet HEAD 2>/dev/null || echo ' (uncommitted changes)')"
  echo "upstream: openkruise/rollouts $(cat "$C/src/rollouts/.upstream-rev" 2>/dev/null)"
  echo "focus: $FOCUS"; echo "skip: $SKIP"; } >"$OUT/run.info"
echo "upstream-e2e: logs in $OUT"
"$HERE/with-cluster.sh" "${driver[@]}" 2>&1 | tee "$OUT/driver.out"
exit "${PIPESTATUS[0]}"
