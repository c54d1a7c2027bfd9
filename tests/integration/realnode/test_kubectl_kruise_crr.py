"""``kubectl kruise create ContainerRecreateRequest`` on the real node: kubectl-kruise's command
creates the CRR with its defaults, and the node's daemon restarts exactly the named container."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CONTAINERRECREATEREQUESTS, PODS
from tests.integration.realnode.conftest import RealNode, container_status
from tests.integration.realnode.test_containerrecreate import completed, two_container_pod
from tests.support.cluster import TestCluster

pytestmark = pytest.mark.usefixtures("manager")
KUBECTL_KRUISE = str(Path(sys.executable).parent / "kubectl-kruise")


def kubectl_kruise(cluster: TestCluster, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [KUBECTL_KRUISE, f"--kubeconfig={cluster.kubeconfig}", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


async def test_create_container_recreate_request_restarts_the_named_container(
    kube: KubeClient, namespace: str, real_node: RealNode, cluster: TestCluster
) -> None:
    before = await two_container_pod(kube, namespace, "app")
    done = await asyncio.to_thread(
        kubectl_kruise, cluster, "create", "ContainerRecreateRequest", "restart-web", "-n", namespace,
        "--pod=app", "--containers=web", "-u", "0",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "containerrecreaterequest.apps.kruise.io/restart-web created" in done.stdout
    crr = await kube.get(CONTAINERRECREATEREQUESTS, "restart-web", namespace)
    assert [c["name"] for c in crr["spec"]["containers"]] == ["web"]
    assert (crr["spec"]["activeDeadlineSeconds"], crr["spec"]["ttlSecondsAfterFinished"]) == (300, 1800)
    assert crr["spec"]["strategy"]["minStartedSeconds"] == 3
    await completed(kube, namespace, "restart-web")
    after = await kube.get(PODS, "app", namespace)
    assert container_status(after, "web")["restartCount"] == 1
    assert container_status(after, "web")["containerID"] != container_status(before, "web")["containerID"]
    assert (
        container_status(after, "sidecar")["containerID"]
        == container_status(before, "sidecar")["containerID"]
    )


async def test_create_container_recreate_request_refuses_an_unknown_container(
    kube: KubeClient, namespace: str, real_node: RealNode, cluster: TestCluster
) -> None:
    await two_container_pod(kube, namespace, "app")
    done = await asyncio.to_thread(
        kubectl_kruise, cluster, "create", "ContainerRecreateRequest", "bad", "-n", namespace,
        "--pod=app", "--containers=nope",
    )  # fmt: skip
    assert done.returncode == 1
    assert "container nope not found in pod app" in done.stderr
    assert (await kube.list(CONTAINERRECREATEREQUESTS, namespace))["items"] == []
