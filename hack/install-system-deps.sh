#!/usr/bin/env bash
# Debian packages the test suite needs. Idempotent; skips apt when all are present.
set -euo pipefail
need=()
command -v go >/dev/null || { echo "Go >= 1.26 is required to build the control plane" >&2; exit 1; }
command -v prometheus >/dev/null || need+=(prometheus)
command -v openssl >/dev/null || need+=(openssl)
if ((${#need[@]})); then
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
