"""kruise-daemon's image puller on the real node: NodeImage spec in, CRI pulls, NodeImage status out.

The daemon half of image pre-pull (upstream ``pkg/daemon/imagepuller``), driven here through its
API contract: a tag written into the node's NodeImage (what the manager's ImagePullJob controller
writes) is pulled by the node's ``kruise daemon`` through containerd, and reported in the
NodeImage's status with the spec's ``version``; containerd really holds the image afterwards.
"""

from __future__ import annotations

import urllib.request
import uuid
from pathlib import Path
from typing import Any

from kruise.core.errors import AlreadyExistsError, NotFoundError
from kruise.core.kube import KubeClient
from kruise.core.localcluster.binaries import SYSTEM
from kruise.core.localcluster.realnode.images import image_ref, payload_spec
from kruise.daemon.api.nodeimage import NODEIMAGES
from tests.integration.realnode.conftest import RealNode
from tests.support.wait import eventually

JSON = dict[str, Any]


def fresh_image(node: RealNode, payload_bytes: int = 64 * 1024) -> str:
    """A new image in the local registry, never seen by the node: ``kruise.local/pull-<hex>:v1``."""
    busybox_binary = Path(SYSTEM["busybox (static)"]).read_bytes()
    spec = payload_spec(busybox_binary, f"pull-{uuid.uuid4().hex[:8]}", "v1", payload_bytes)
    node.local.push_image(spec)
    return image_ref(spec.repository, spec.tag)


def node_images(node: RealNode) -> dict[str, str]:
    """``repo:tag`` -> image id of every image containerd holds on the node."""
    return {
        tag: image["id"]
        for image in node.crictl_json("images")["images"]
        for tag in image.get("repoTags") or ()
    }


async def node_image(kube: KubeClient, node: str) -> JSON:
    """The node's NodeImage: the manager's NodeImage controller makes it; made here if not yet."""
    try:
        return await kube.get(NODEIMAGES, node)
    except NotFoundError:
        body = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "NodeImage", "metadata": {"name": node}}
        try:
            return await kube.create(NODEIMAGES, body)
        except AlreadyExistsError:
            return await kube.get(NODEIMAGES, node)


async def ask(kube: KubeClient, node: str, image: str, version: int = 1, **policy: Any) -> None:
    """Add ``image``'s tag to the node's NodeImage spec, as the ImagePullJob controller does."""
    repo, _, tag = image.rpartition(":")
    entry = {
        "tag": tag,
        "version": version,
        # the NodeImage webhook wants a TTL on every tag (upstream's validation)
        "pullPolicy": {"timeoutSeconds": 60, "backoffLimit": 1, "ttlSecondsAfterFinished": 600, **policy},
    }
    await node_image(kube, node)
    await kube.patch(NODEIMAGES, node, {"spec": {"images": {repo: {"tags": [entry]}}}})


async def reported(kube: KubeClient, node: str, image: str, version: int = 1, timeout: float = 90) -> JSON:
    repo, _, tag = image.rpartition(":")

    async def probe() -> JSON | None:
        status = (await kube.get(NODEIMAGES, node)).get("status") or {}
        for entry in ((status.get("imageStatuses") or {}).get(repo) or {}).get("tags") or ():
            if entry.get("tag") == tag and entry.get("version") == version and entry.get("completionTime"):
                return dict(entry)
        return None

    return await eventually(probe, timeout=timeout, what=f"{image} (version {version}) finished on {node}")


async def test_a_tag_in_the_nodeimage_is_pulled_by_the_nodes_daemon(
    kube: KubeClient, real_node: RealNode
) -> None:
    image = fresh_image(real_node)
    assert image not in node_images(real_node)
    await ask(kube, real_node.name, image)
    entry = await reported(kube, real_node.name, image)
    held = node_images(real_node)
    assert image in held  # containerd really holds it
    assert entry["phase"] == "Succeeded" and entry["progress"] == 100 and entry["startTime"]
    assert entry["imageID"] == f"{image.rpartition(':')[0]}@{held[image]}"
    status = (await kube.get(NODEIMAGES, real_node.name))["status"]
    assert status["desired"] >= 1 and status["succeeded"] >= 1


async def test_a_new_version_asks_for_a_new_pull_and_a_missing_image_fails_after_its_backoff(
    kube: KubeClient, real_node: RealNode
) -> None:
    missing = image_ref(f"missing-{uuid.uuid4().hex[:8]}", "v1")
    await ask(kube, real_node.name, missing, version=1, backoffLimit=1)
    failed = await reported(kube, real_node.name, missing, version=1)
    assert failed["phase"] == "Failed"
    assert "not found" in failed["message"] or "404" in failed["message"], failed["message"]
    assert missing not in node_images(real_node)
    # the manager asks again by bumping the version: the daemon tries again and reports the new one
    await ask(kube, real_node.name, missing, version=2, backoffLimit=0)
    again = await reported(kube, real_node.name, missing, version=2)
    assert again["phase"] == "Failed" and again["completionTime"] >= failed["completionTime"]


async def test_the_daemon_serves_healthz_and_pull_metrics(kube: KubeClient, real_node: RealNode) -> None:
    image = fresh_image(real_node)
    await ask(kube, real_node.name, image)
    await reported(kube, real_node.name, image)
    addr = real_node.local.daemon_addr(real_node.name)
    with urllib.request.urlopen(f"http://{addr}/healthz", timeout=5) as resp:
        assert resp.status == 200 and resp.read() == b"ok"
    with urllib.request.urlopen(f"http://{addr}/metrics", timeout=5) as resp:
        text = resp.read().decode()
    assert 'kruise_daemon_image_pulls_total{result="Succeeded"}' in text
    assert 'controller="imagepuller"' in text
