# syntax=docker/dockerfile:1
# The one kruise image: `kruise manager` (the Helm chart's Deployment), `kruise daemon` (its
# DaemonSet, once the daemon lands) and the chart's pre-delete hook all run it.
#
#   docker build -t kruise:0.1.0 .
#   helm install kruise charts/kruise --set manager.image.repository=<registry>/kruise
#
# The CRI stubs kruise-daemon imports are generated, not committed: run `make venv` (which runs
# hack/gen-cri.sh, Go and grpcio-tools) before `docker build`, so daemon/ holds them.
#
# Not built by the test suite: the development environment has no Docker daemon.
# tests/unit/test_dockerfile.py instead checks this file's shape and replays its build stage
# (a wheel built from exactly the COPY'd paths, installed, `kruise --help` run from it).

# ---- build: one wheel from the six source roots (hatchling, see pyproject.toml) ----
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY core/ core/
COPY workloads/ workloads/
COPY traffic/ traffic/
COPY analysis/ analysis/
COPY rollouts/ rollouts/
COPY daemon/ daemon/
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /dist .

# ---- runtime: the wheel and its dependencies, nothing else ----
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
COPY --from=build /dist/ /tmp/dist/
RUN pip install --no-cache-dir /tmp/dist/kruise-*.whl && rm -rf /tmp/dist
# nobody: the chart also runs the pods as 65534 with a read-only root filesystem
USER 65534:65534
ENTRYPOINT ["kruise"]
CMD ["--help"]
