"""The CRI port's contract, run against the real node's containerd through :class:`GrpcCri`.

What kruise-daemon relies on: the version check, pulls (a new image, a missing one, one past its
time), image listing and status, the containers of a pod, their status, ``ExecSync`` (output and
exit codes) and ``StopContainer`` (the kubelet then starts the container again), each failure in
the port's own error vocabulary.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import PODS
from kruise.core.localcluster.binaries import SYSTEM
from kruise.core.localcluster.realnode.images import image_ref, payload_spec
from kruise.daemon.cri.endpoint import resolve_endpoint
from kruise.daemon.cri.grpcclient import GrpcCri
from kruise.daemon.cri.port import ContainerState, CriNotFoundError, CriPullError, CriTimeoutError
from tests.integration.realnode.conftest import (
    RealNode,
    container_status,
    real_pod_spec,
    wait_pod,
    web_container,
)
from tests.support.wait import eventually

JSON = dict[str, Any]


@pytest.fixture
async def cri(real_node: RealNode) -> AsyncIterator[GrpcCri]:
    (plan,) = [p for p in real_node.local.real_node_plans() if p.name == real_node.name]
    client = await GrpcCri.connect(resolve_endpoint(str(plan.containerd_socket), "/hostvarrun"))
    try:
        yield client
    finally:
        await client.close()


def new_image(node: RealNode, payload: int = 4096) -> str:
    busybox_binary = Path(SYSTEM["busybox (static)"]).read_bytes()
    spec = payload_spec(busybox_binary, f"cri-{uuid.uuid4().hex[:8]}", "v1", payload)
    node.local.push_image(spec)
    return image_ref(spec.repository, spec.tag)


async def test_version_is_cri_v1_from_containerd(cri: GrpcCri) -> None:
    version = await cri.version()
    assert version.runtime_api_version == "v1"
    assert version.runtime_name == "containerd"


async def test_a_pull_returns_the_image_id_that_listing_and_status_then_show(
    cri: GrpcCri, real_node: RealNode
) -> None:
    image = new_image(real_node)
    assert await cri.image_status(image) is None
    ref = await cri.pull_image(image, sandbox_config={"labels": {"a": "b"}, "annotations": {"c": "d"}})
    status = await cri.image_status(image)
    assert status is not None and status.id == ref and image in status.repo_tags
    assert any(i.id == ref for i in await cri.list_images())
    held = {i["id"]: i for i in real_node.crictl_json("images")["images"]}
    assert image in held[ref]["repoTags"]  # crictl sees what the adapter pulled


async def test_a_missing_image_is_a_pull_error(cri: GrpcCri) -> None:
    with pytest.raises(CriPullError, match=r"not found|404"):
        await cri.pull_image(image_ref(f"missing-{uuid.uuid4().hex[:6]}", "v1"))


async def test_a_pull_past_its_timeout_is_a_timeout(cri: GrpcCri, real_node: RealNode) -> None:
    image = new_image(real_node, payload=32 * 1024 * 1024)
    with pytest.raises(CriTimeoutError):
        await cri.pull_image(image, timeout=0.001)


async def test_containers_status_exec_and_stop_of_a_real_pod(
    cri: GrpcCri, real_node: RealNode, kube: KubeClient, namespace: str
) -> None:
    web = web_container("web", "v1", 8080)
    web["env"].append({"name": "GREETING", "value": "hello"})
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "cri"},
           "spec": real_pod_spec(web, web_container("side", "v1", 8081))}  # fmt: skip
    await kube.create(PODS, pod, namespace)
    pod = await wait_pod(kube, namespace, "cri")
    uid = pod["metadata"]["uid"]

    containers = {c.name: c for c in await cri.list_containers(pod_uid=uid)}
    assert set(containers) == {"web", "side"}
    web_id = container_status(pod, "web")["containerID"].partition("://")[2]
    assert containers["web"].id == web_id
    assert containers["web"].pod_name == "cri" and containers["web"].state is ContainerState.RUNNING
    assert "io.kubernetes.container.hash" in containers["web"].annotations
    status = await cri.container_status(web_id)
    assert status.started_at > 0 and status.state is ContainerState.RUNNING

    env = await cri.exec_sync(web_id, ["env"], 5)
    assert env.exit_code == 0 and b"GREETING=hello" in env.stdout
    failed = await cri.exec_sync(web_id, ["sh", "-c", "echo out; echo err >&2; exit 3"], 5)
    assert (failed.exit_code, failed.stdout, failed.stderr) == (3, b"out\n", b"err\n")

    side_id = containers["side"].id
    await cri.stop_container(web_id, 2)
    assert (await cri.container_status(web_id)).state is ContainerState.EXITED

    async def restarted() -> JSON | None:
        current = await kube.get(PODS, "cri", namespace)
        s = container_status(current, "web")
        return current if s.get("restartCount") == 1 and s.get("ready") else None

    after = await eventually(restarted, timeout=60, what="the kubelet restarted web")
    assert container_status(after, "web")["containerID"].partition("://")[2] != web_id
    assert container_status(after, "side")["containerID"].partition("://")[2] == side_id  # untouched
    assert container_status(after, "side")["restartCount"] == 0


async def test_unknown_containers_are_not_found(cri: GrpcCri) -> None:
    with pytest.raises(CriNotFoundError):
        await cri.container_status("0" * 64)
    with pytest.raises(CriNotFoundError):
        await cri.exec_sync("0" * 64, ["true"], 2)
