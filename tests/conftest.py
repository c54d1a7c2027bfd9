"""Session-wide fixtures: one real control plane per test session, a namespace per test.

``make test`` runs the suite on ``TEST_WORKERS`` pytest-xdist workers (2 unless told); each
worker is a session of its own with its own embedded control plane and manager, and takes whole
files (their module fixtures and order stay together). The real-node files all go to one worker:
a real kubelet and containerd use machine-wide paths, so only one may run at a time.

Set ``KRUISE_TEST_KUBECONFIG`` (or pass ``--kubeconfig``) to run against an
existing cluster (kind on a laptop) instead of the embedded one; then run one worker
(``TEST_WORKERS=0``), since the session's manager owns the cluster's webhooks.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import NAMESPACES
from kruise.core.localcluster import LocalCluster
from kruise.core.localcluster.binaries import find_bin_dir
from kruise.rollouts.manager.process import ManagerProcess
from tests.support.cluster import TestCluster
from tests.support.namespaces import create_namespace

REPO = Path(__file__).resolve().parents[1]
THIRD_PARTY_CRDS = REPO / "hack" / "crds"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--kubeconfig", default=None, help="Use this cluster instead of the embedded one.")


REAL_NODE_GROUP = "realnode"


def pytest_configure(config: pytest.Config) -> None:
    external = config.getoption("--kubeconfig") or os.environ.get("KRUISE_TEST_KUBECONFIG")
    workers = getattr(config.option, "numprocesses", None)
    if external and workers not in (None, 0, 1):
        raise pytest.UsageError(
            "an existing cluster (--kubeconfig / KRUISE_TEST_KUBECONFIG) takes one worker: "
            "run with TEST_WORKERS=0 (pytest -n 0); each worker starts its own manager"
        )


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's worker hook turns the groups into nodeid suffixes
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        path = str(item.fspath)
        if "/integration/" in path or "/e2e/" in path:
            item.add_marker(pytest.mark.integration)
        if "/integration/realnode/" in path or "/integration/realcluster/" in path:
            item.add_marker(pytest.mark.realnode)
        # under `--dist loadgroup`: a file is one unit of work, and every real-node test is in one
        real = item.get_closest_marker("realnode") is not None
        group = REAL_NODE_GROUP if real else item.nodeid.split("::", 1)[0]
        item.add_marker(pytest.mark.xdist_group(group))
    # the real-node group is the longest unit of work (8-14 minutes): xdist hands out units in
    # this order, so it starts first and the many short files fill the other worker around it,
    # instead of it starting late and leaving one worker idle at the end
    items.sort(key=lambda item: item.get_closest_marker("realnode") is None)


def third_party_crds() -> list[Path]:
    """Gateway API and Istio CRDs vendored in hack/crds."""
    return [
        THIRD_PARTY_CRDS / "gateway-api-standard-install.yaml",
        THIRD_PARTY_CRDS / "istio-networking.yaml",
    ]


@pytest.fixture(scope="session")
def cluster(request: pytest.FixtureRequest) -> Iterator[TestCluster]:
    """The control plane under test, with third-party and kruise CRDs installed."""
    external = request.config.getoption("--kubeconfig") or os.environ.get("KRUISE_TEST_KUBECONFIG")
    tmp = Path(tempfile.mkdtemp(prefix="kruise-test-"))
    crd_dir = tmp / "kruise-crds"
    crd_dir.mkdir()
    from kruise.rollouts.crds import write_crds

    write_crds(crd_dir)
    if external:
        kubectl = shutil.which("kubectl") or str(find_bin_dir() / "kubectl")
        tc = TestCluster(kubeconfig=str(external), kubectl=kubectl, local=None)
        for manifest in [*third_party_crds(), crd_dir]:
            tc.apply(manifest)
        yield tc
        shutil.rmtree(tmp, ignore_errors=True)
        return
    local = LocalCluster(tmp / "cluster", nodes=3, attached=True)
    state = local.start([*third_party_crds(), crd_dir])
    print(f"\n[kruise] local control plane up in {state.startup_seconds:.1f}s at {state.server}")
    tc = TestCluster(kubeconfig=state.kubeconfig, kubectl=str(Path(state.bin_dir) / "kubectl"), local=local)
    try:
        yield tc
    finally:
        local.stop()
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="session")
async def kube(cluster: TestCluster) -> AsyncIterator[KubeClient]:
    client = await KubeClient.from_kubeconfig(cluster.kubeconfig, qps=500, burst=1000)
    try:
        yield client
    finally:
        await client.close()


@pytest.fixture
async def namespace(kube: KubeClient, request: pytest.FixtureRequest) -> AsyncIterator[str]:
    """A fresh namespace for one test, deleted afterwards (without waiting)."""
    name = await create_namespace(kube, request.node.name)
    yield name
    await kube.delete(NAMESPACES, name, missing_ok=True)


def run(cmd: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, check=False, **kw)  # type: ignore[call-overload]


@pytest.fixture(scope="session")
def manager(cluster: TestCluster) -> Iterator[ManagerProcess]:
    """One ``kruise manager`` process for the session, its webhooks registered with the API server."""
    cluster.kubectl("create", "namespace", "kruise-system", check=False)
    workdir = Path(tempfile.mkdtemp(prefix="kruise-manager-"))
    # the reference Rollout (steps 20/50/100% with traffic) needs a limit above upstream's 50
    # NodeImages 1 s after a Node is Ready (upstream waits 30 s): a test's real node gets its own at once
    extra = ("--partition-percent-limit=100", "--nodeimage-creation-delay=1")
    proc = ManagerProcess(cluster.kubeconfig, workdir, extra_args=extra)
    proc.start()
    try:
        yield proc
    finally:
        proc.stop()
        cluster.kubectl(
            "delete",
            "mutatingwebhookconfiguration,validatingwebhookconfiguration",
            "-l",
            "app.kubernetes.io/managed-by=kruise-manager",
            "--ignore-not-found",
            check=False,
        )
        shutil.copy(proc.log_path, "/tmp/kruise-last-manager.log") if proc.log_path.exists() else None
        print(f"\n[kruise] manager log tail:\n{proc.log_tail(20)}")
        shutil.rmtree(workdir, ignore_errors=True)
