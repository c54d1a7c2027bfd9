#!/bin/bash
# Builds REAL upstream OpenKruise software (not written by the product team) from the local bare
# git mirrors, for running against the product:
#   (a) the Kruise Rollouts e2e test binary  (openkruise/rollouts, `go test -c ./test/e2e`)
#   (b) kubectl-kruise                        (openkruise/kruise-tools, cmd/plugin)
# Outputs:  $HOME/.cache/kruise-upstream/bin/{rollouts-e2e.test,kubectl-kruise}
# Sources:  $HOME/.cache/kruise-upstream/src/<name>  (checkout of the mirror at a pinned commit)
# The Go module proxy refuses github.com/openkruise/* (403), so each openkruise module is taken
# from its mirror and wired in with a `replace` directive.
# Idempotent: a source tree or binary already present is reused (delete it to rebuild).
# Usage: MIRRORS=DIR hack/upstream-e2e/build.sh [e2e|kubectl-kruise|managers|rollouts-manager|kruise-manager|all]
#        (default: e2e + kubectl-kruise; NICE_LEVEL sets the builds' nice level, default 10)
#        DIR holds bare mirrors (git clone --mirror) of the public repositories, laid out as
#        DIR/openkruise+rollouts/repo, DIR/openkruise+kruise-api/repo,
#        DIR/openkruise+kruise-tools/repo, DIR/openkruise+kruise-rollout-api/repo
#        (and DIR/openkruise+kruise/repo for `managers`). `make upstream-e2e-build` runs it.
set -euo pipefail
C=${KRUISE_UPSTREAM_CACHE:-$HOME/.cache/kruise-upstream}
SRC=$C/src BIN=$C/bin LOGS=$C/logs
M=${MIRRORS:?set MIRRORS to the folder holding the bare mirrors, laid out as owner+name/repo}
GO=${GO:-go}
export GOFLAGS=-mod=mod GONOSUMDB='github.com/openkruise/*' GOPRIVATE='github.com/openkruise/*'
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}
mkdir -p "$SRC" "$BIN" "$LOGS"
NICE="nice -n ${NICE_LEVEL:-10}"

# Pinned upstream revisions (commits in the mirrors).
ROLLOUTS_REV=${ROLLOUTS_REV:-9dd6279dff3549d10a26c33e9f5a537320d29d2d}   # rollouts master (2026-06-27)
TOOLS_REV=${TOOLS_REV:-7c240e582832b3ee73b464335baba8cfdb1fe9d9}         # kruise-tools master (2025-07-22)
ROLLOUT_API_REV=${ROLLOUT_API_REV:-0afc933}                               # kruise-rollout-api "release 0.6.0 (#7)" (no v0.6.0 tag in the mirror)

# extract MIRROR REV DEST: the tree of a mirror commit into DEST (once). Some mirrors lack a few
# large blobs (kruise-tools: go.list, testdata/openapi/swagger.json); those paths are left out.
# A throwaway index is used, so nothing is written into the mirror.
extract() {
  local mirror=$1 rev=$2 dest=$3
  [ -f "$dest/go.mod" ] && return 0
  [ -d "$mirror" ] || { echo "missing mirror $mirror" >&2; exit 2; }
  rm -rf "$dest.part"; mkdir -p "$dest.part"
  local idx; idx=$(mktemp)
  GIT_INDEX_FILE=$idx git --git-dir="$mirror" read-tree "$rev"
  local missing
  missing=$(git --git-dir="$mirror" ls-tree -r "$rev" | awk '$2=="blob"{print $3" "$4}' |
    while read -r h p; do git --git-dir="$mirror" cat-file -e "$h" 2>/dev/null || echo "$p"; done)
  if [ -n "$missing" ]; then
    echo "note: blobs absent from $mirror, left out: $(echo $missing)" >&2
    echo "$missing" | GIT_INDEX_FILE=$idx xargs git --git-dir="$mirror" update-index --force-remove
  fi
  GIT_INDEX_FILE=$idx git --git-dir="$mirror" --work-tree="$dest.part" checkout-index -a --prefix="$dest.part/"
  rm -f "$idx"
  git --git-dir="$mirror" rev-parse "$rev^{commit}" >"$dest.part/.upstream-rev"
  mv "$dest.part" "$dest"
  echo "extracted $mirror $rev -> $dest" >&2
}

kruise_api() {  # kruise_api vX.Y.Z -> path
  local d=$SRC/kruise-api-$1
  extract "$M/openkruise+kruise-api/repo" "$1" "$d" >&2
  echo "$d"
}

timed() {  # timed NAME CMD...: runs CMD, logs to $LOGS/NAME.log, prints wall time
  local name=$1; shift
  local t0=$SECONDS
  echo "[$name] $*"
  if "$@" >"$LOGS/$name.log" 2>&1; then
    echo "[$name] ok in $((SECONDS - t0))s"
  else
    local rc=$?
    tail -30 "$LOGS/$name.log"
    echo "[$name] FAILED (rc=$rc) after $((SECONDS - t0))s; log: $LOGS/$name.log"
    return $rc
  fi
}

build_e2e() {
  local out=$BIN/rollouts-e2e.test
  if [ -x "$out" ]; then echo "[e2e] $out exists, skipping"; return 0; fi
  local d=$SRC/rollouts
  extract "$M/openkruise+rollouts/repo" "$ROLLOUTS_REV" "$d"
  local api; api=$(kruise_api v1.7.0)
  (cd "$d" && $GO mod edit -replace "github.com/openkruise/kruise-api=$api")
  (cd "$d" && timed e2e-mod $NICE $GO mod tidy -e) || true
  (cd "$d" && timed e2e-build $NICE $GO test -c ./test/e2e -o "$out.tmp") && mv "$out.tmp" "$out"
  ls -l "$out"
}

build_kubectl_kruise() {
  local out=$BIN/kubectl-kruise
  if [ -x "$out" ]; then echo "[kubectl-kruise] $out exists, skipping"; return 0; fi
  local d=$SRC/kruise-tools
  extract "$M/openkruise+kruise-tools/repo" "$TOOLS_REV" "$d"
  local api; api=$(kruise_api v1.8.0)
  local rapi=$SRC/kruise-rollout-api-v0.6.0
  if [ ! -d "$M/openkruise+kruise-rollout-api/repo" ]; then
    echo "need the kruise-rollout-api mirror under $M (openkruise+kruise-rollout-api/repo)" >&2; exit 2
  fi
  extract "$M/openkruise+kruise-rollout-api/repo" "$ROLLOUT_API_REV" "$rapi"
  (cd "$d" && $GO mod edit -replace "github.com/openkruise/kruise-api=$api" \
                          -replace "github.com/openkruise/kruise-rollout-api=$rapi")
  (cd "$d" && timed kk-mod $NICE $GO mod tidy -e) || true
  (cd "$d" && timed kk-build $NICE $GO build -o "$out.tmp" ./cmd/plugin) && mv "$out.tmp" "$out"
  ls -l "$out"
}

# Optional (item 4): the upstream managers themselves.
build_managers() {
  local out=$BIN/kruise-rollout-manager
  if [ "${ONLY:-rollouts}" != rollouts ]; then :
  elif [ ! -x "$out" ]; then
    local d=$SRC/rollouts
    extract "$M/openkruise+rollouts/repo" "$ROLLOUTS_REV" "$d"
    local api; api=$(kruise_api v1.7.0)
    (cd "$d" && $GO mod edit -replace "github.com/openkruise/kruise-api=$api")
    (cd "$d" && timed rollouts-manager-build $NICE $GO build -o "$out.tmp" .) && mv "$out.tmp" "$out"
  else echo "[managers] $out exists, skipping"; fi
  out=$BIN/kruise-manager
  if [ "${ONLY:-kruise}" != kruise ]; then :
  elif [ ! -x "$out" ]; then
    local kd=$SRC/kruise
    extract "$M/openkruise+kruise/repo" "${KRUISE_REV:-07169cfac7b9cf7800dda1b8652f850cc3184132}" "$kd"
    (cd "$kd" && timed kruise-manager-build $NICE $GO build -o "$out.tmp" ./main.go) && mv "$out.tmp" "$out"
  else echo "[managers] $out exists, skipping"; fi
  ls -l "$BIN"
}

case "${1:-default}" in
  e2e) build_e2e ;;
  kubectl-kruise) build_kubectl_kruise ;;
  managers) build_managers ;;
  rollouts-manager) ONLY=rollouts build_managers ;;
  kruise-manager) ONLY=kruise build_managers ;;
  all) build_e2e; build_kubectl_kruise; build_managers ;;
  default) build_e2e; build_kubectl_kruise ;;
  *) echo "usage: $0 [e2e|kubectl-kruise|managers|all]"; exit 2 ;;
esac
