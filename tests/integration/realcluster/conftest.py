"""A cluster started with a real node, as ``kruise cluster up --real-nodes 1`` starts one.

Unlike ``tests/integration/realnode/`` (one real node added to the session's KWOK cluster, whose
API server stays on loopback), this package needs what only a cluster *started* with real nodes
has: its API server on the control-plane address, kube-proxy on the host, Service endpoints and
ServiceAccount tokens. It starts its own cluster for the package (a few seconds) and takes the
machine's real nodes in turn with other sessions; it fails, never skips, when it cannot start.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kruise.core.localcluster import LocalCluster
from kruise.core.localcluster.install import Installed, install

HOST_WAIT_SECONDS = 900
JSON = dict[str, Any]


@pytest.fixture(scope="package")
def services_cluster() -> Iterator[LocalCluster]:
    """A local cluster with one KWOK node and one real node, Services working, and no
    ``kruise daemon`` process of its own (``test_install`` installs the chart's DaemonSet)."""
    if os.environ.get("KRUISE_TEST_KUBECONFIG"):
        pytest.fail("this group starts its own cluster with a real node on this machine")
    directory = Path(tempfile.mkdtemp(prefix="kruise-realcluster-")) / "cluster"
    local = LocalCluster(directory, nodes=1, real_nodes=1, attached=True, node_daemons=False)
    t0 = time.monotonic()
    state = local.start(wait_for_host=HOST_WAIT_SECONDS)
    print(
        f"\n[kruise] cluster with a real node up in {time.monotonic() - t0:.1f}s ({state.real_node_timings})"
    )
    try:
        yield local
    finally:
        local.stop(remove=True)
        shutil.rmtree(directory.parent, ignore_errors=True)
        assert local.undo_problems == [], local.undo_problems


@pytest.fixture(scope="package")
def installed(services_cluster: LocalCluster) -> Installed:
    """kruise installed onto ``services_cluster`` as ``kruise cluster up --install`` does (image
    built and pushed, ``helm install charts/kruise``, waited for), once for the package."""
    installed = install(services_cluster, log=print)
    print(f"[kruise] installed {installed.image}: {installed.timings}")
    return installed


def kubectl_json(local: LocalCluster, *args: str) -> JSON:
    return dict(json.loads(local.kubectl(*args, "-o", "json")))


def create_namespace(local: LocalCluster, name: str) -> str:
    """Create ``name`` and wait for its ``default`` ServiceAccount (pods are admitted after it)."""
    local.kubectl("create", "namespace", name)
    local.kubectl("wait", "-n", name, "--for=create", "serviceaccount/default", "--timeout=60s")
    return name
