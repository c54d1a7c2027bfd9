#!/usr/bin/env bash
# Debian packages the demo and the test suite need. Idempotent; skips apt when all are present.
#
#   prometheus, openssl          metric analysis tests, certificates
#   containerd runc skopeo ...   the real node of `kruise cluster up --real-nodes N`
#                                (containerd 1.6, runc, the CNI plugins it pulls in, a local
#                                docker-registry, skopeo to push images, busybox-static for
#                                the test images, iptables and conntrack for the kubelet and
#                                kube-proxy, nftables to delete the tables kube-proxy made)
#   buildah mmdebstrap           `make image`: the Dockerfile built without a Docker daemon
#
# The packages' services are not started: a policy-rc.d that refuses them is put in place
# for the install when the machine has none (docker-registry would otherwise listen on :5000).
set -euo pipefail
command -v go >/dev/null || { echo "Go >= 1.26 is required to build the control plane" >&2; exit 1; }

need=()
have_cmd() { command -v "$1" >/dev/null 2>&1; }
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
have_cmd prometheus || need+=(prometheus)
have_cmd openssl || need+=(openssl)
for pkg in containerd runc containernetworking-plugins docker-registry skopeo busybox-static iptables conntrack nftables buildah mmdebstrap; do
  have_pkg "$pkg" || need+=("$pkg")
done
((${#need[@]})) || exit 0

SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO=sudo
policy=/usr/sbin/policy-rc.d
placed=""
if [[ ! -e $policy ]]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
  $SUDO chmod 755 "$policy"
  placed=1
fi
cleanup() { [[ -n $placed ]] && $SUDO rm -f "$policy"; return 0; }
trap cleanup EXIT
start=$(date +%s)
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
echo "[install-system-deps] installed ${need[*]} in $(( $(date +%s) - start ))s" >&2
