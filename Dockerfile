# syntax=docker/dockerfile:1
# The one kruise image: `kruise manager` (the Helm chart's Deployment), `kruise daemon` (its
# DaemonSet) and the chart's pre-delete hook all run it.
#
#   make venv && docker build -t kruise:0.1.0 .
#   helm install kruise charts/kruise --set manager.image.repository=<registry>/kruise
#
# Without a Docker daemon, `make image` (hack/build-image.sh) builds this same file with buildah
# on a Debian bookworm base made by mmdebstrap (BASE=localhost/kruise-base:...): one recipe,
# two builders. The CRI stubs kruise-daemon imports are generated, not committed: `make venv`
# (hack/gen-cri.sh: Go and grpcio-tools) puts them under daemon/ before either build.
ARG BASE=python:3.11-slim

# ---- build: the venv the image runs, made with a throwaway pip (pip itself is not shipped) ----
FROM ${BASE} AS build
RUN python3 -m venv /opt/build \
 && /opt/build/bin/pip install --no-cache-dir --disable-pip-version-check --quiet build \
 && python3 -m venv --without-pip /opt/kruise
# the pinned dependencies first: this layer is reused until hack/image/requirements.txt changes
COPY hack/image/requirements.txt /tmp/requirements.txt
RUN /opt/build/bin/pip --python /opt/kruise/bin/python install --no-cache-dir --disable-pip-version-check \
      --quiet --no-deps -r /tmp/requirements.txt
# then one wheel from the six source roots (hatchling, see pyproject.toml), installed beside them
WORKDIR /src
COPY pyproject.toml README.md ./
COPY core/ core/
COPY workloads/ workloads/
COPY traffic/ traffic/
COPY analysis/ analysis/
COPY rollouts/ rollouts/
COPY daemon/ daemon/
RUN /opt/build/bin/python -m build --wheel --outdir /dist . \
 && /opt/build/bin/pip --python /opt/kruise/bin/python install --no-cache-dir --disable-pip-version-check \
      --quiet --no-deps /dist/kruise-*.whl

# ---- runtime: the base and that venv, nothing else ----
FROM ${BASE}
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="kruise" \
      org.opencontainers.image.description="kruise manager and kruise daemon: OpenKruise workloads and Kruise Rollouts in Python" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0"
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PATH=/opt/kruise/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
COPY --from=build /opt/kruise /opt/kruise
# nobody: the chart also runs the pods as 65534 with a read-only root filesystem
USER 65534:65534
ENTRYPOINT ["/opt/kruise/bin/kruise"]
CMD ["--help"]
