#!/usr/bin/env bash
# make image: build the kruise image from the Dockerfile without a Docker daemon.
#
#   hack/build-image.sh [--push REGISTRY/REPO]     (IMAGE=localhost/kruise:<version> by default)
#
# 1. base: a Debian bookworm minbase rootfs with python3 and python3-venv, made by mmdebstrap
#    from Debian's packages (docs, man pages, locales, perl and apt left out: nothing at run time
#    needs them), imported into buildah's
#    storage as localhost/kruise-base:bookworm-<hash of the package list>; built once and kept.
# 2. the Dockerfile itself, built by `buildah bud --layers` with BASE set to that base (a Docker
#    user builds the same file on python:3.11-slim): the wheel from the source roots, its pinned
#    dependencies (hack/image/requirements.txt) from PyPI, USER 65534.
# 3. prints the image's size and the build's time; with --push, copies it to REGISTRY/REPO:<version>
#    (plain HTTP allowed: the embedded cluster's registry is on loopback).
# The build stage's layers stay in buildah's storage untagged: they are the cache of the next
# build (`buildah rmi --prune` frees them, and every other untagged image of the machine).
# Needs root (buildah's storage) and hack/install-system-deps.sh (buildah, mmdebstrap).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
version=$(python3 -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["version"])')
image=${IMAGE:-localhost/kruise:$version}
push=""
[[ ${1:-} == --push ]] && push=${2:?--push needs REGISTRY/REPO}

for cmd in buildah mmdebstrap; do
  command -v "$cmd" >/dev/null || { echo "build-image: $cmd missing: run hack/install-system-deps.sh" >&2; exit 1; }
done
[[ -f daemon/kruise/daemon/cri/_generated/api_pb2.py ]] \
  || { echo "build-image: the CRI stubs are missing: run make venv first" >&2; exit 1; }

suite=bookworm
packages=python3,python3-venv,ca-certificates
key=$(printf '%s %s v2' "$suite" "$packages" | sha256sum | cut -c1-12)
base=localhost/kruise-base:$suite-$key
if ! buildah inspect --type image "$base" >/dev/null 2>&1; then
  cache=${XDG_CACHE_HOME:-$HOME/.cache}/kruise/image
  mkdir -p "$cache"
  rootfs=$cache/base-$suite-$key.tar
  if [[ ! -s $rootfs ]]; then
    echo "build-image: making the $suite base ($packages) with mmdebstrap" >&2
    mmdebstrap --quiet --variant=minbase --include="$packages" \
      --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
      --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
      --dpkgopt='path-include=/usr/share/doc/*/copyright' \
      --customize-hook='chroot "$1" dpkg --purge --force-depends perl libperl5.36 perl-modules-5.36 apt' \
      --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/* "$1"/var/log/*' \
      --format=tar "$suite" "$rootfs.tmp" http://deb.debian.org/debian >"$cache/mmdebstrap.log" 2>&1 \
      || { tail -20 "$cache/mmdebstrap.log" >&2; exit 1; }
    mv "$rootfs.tmp" "$rootfs"
  fi
  ctr=$(buildah from --quiet scratch)
  buildah add --quiet "$ctr" "$rootfs" / >/dev/null
  buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --label "org.opencontainers.image.base.name=debian:$suite" "$ctr"
  buildah commit --quiet --rm "$ctr" "$base" >/dev/null
fi

# the builder's trust (e.g. a TLS-intercepting proxy's CA, pip's configuration) is lent to the
# RUN steps as read-only mounts, never stored in the image
mounts=()
[[ -s /etc/ssl/certs/ca-certificates.crt ]] && mounts+=(--volume /etc/ssl/certs/ca-certificates.crt:/etc/ssl/certs/ca-certificates.crt:ro)
[[ -s /etc/pip.conf ]] && mounts+=(--volume /etc/pip.conf:/etc/pip.conf:ro)
buildah bud --quiet --layers --isolation chroot "${mounts[@]}" --build-arg "BASE=$base" --build-arg "VERSION=$version" \
  --label "org.opencontainers.image.revision=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" \
  -t "$image" -f Dockerfile . >/dev/null
size=$(buildah images --format '{{.Size}}' "$image")
echo "build-image: $image ($size) in $(( $(date +%s) - start ))s"
if [[ -n $push ]]; then
  buildah push --quiet --tls-verify=false "$image" "docker://$push:$version"
  echo "build-image: pushed $push:$version"
fi
