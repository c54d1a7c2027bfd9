"""Image pre-pull on the real node: ImagePullJob -> NodeImage -> kruise-daemon -> containerd.

Upstream's ``test/e2e/apps/v1alpha1/pullimages.go`` runs these against real nodes; here the
manager's ImagePullJob controller writes the tag into the real node's NodeImage, the node's
``kruise daemon`` (started by the cluster beside the kubelet) pulls it through CRI from the local
registry, and containerd really holds the image afterwards (``crictl images``).
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from kruise.core.kube import KubeClient
from kruise.core.localcluster.realnode.images import image_ref
from kruise.daemon.api.imagepulljob import IMAGEPULLJOBS
from kruise.daemon.api.nodeimage import NODEIMAGES
from tests.integration.realnode.conftest import RealNode
from tests.integration.realnode.test_nodeimage_daemon import fresh_image, node_images
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")

JSON = dict[str, Any]


async def node_image_created(kube: KubeClient, node: str) -> None:
    """The manager's NodeImage controller has made the node's NodeImage (a job counts only
    nodes that have one, as upstream's selects over NodeImages)."""

    async def probe() -> bool:
        return await kube.get_or_none(NODEIMAGES, node) is not None

    await eventually(probe, timeout=60, what=f"the NodeImage of {node}")


def pull_job(name: str, image: str, node: str, **policy: Any) -> JSON:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ImagePullJob",
        "metadata": {"name": name},
        "spec": {
            "image": image,
            "selector": {"names": [node]},
            "parallelism": 4,
            "pullPolicy": {"timeoutSeconds": 50, "backoffLimit": 2, **policy},
            "completionPolicy": {"type": "Always"},
        },
    }


async def finished(kube: KubeClient, namespace: str, name: str, timeout: float = 180) -> JSON:
    async def probe() -> JSON | None:
        job = await kube.get(IMAGEPULLJOBS, name, namespace)
        return job if (job.get("status") or {}).get("completionTime") else None

    return await eventually(probe, timeout=timeout, what=f"ImagePullJob {name} completed")


def tag_status(node_image: JSON, image: str) -> JSON:
    repo, _, tag = image.rpartition(":")
    for entry in (((node_image.get("status") or {}).get("imageStatuses") or {}).get(repo) or {}).get(
        "tags"
    ) or ():
        if entry.get("tag") == tag:
            return dict(entry)
    return {}


async def test_create_an_always_job_to_pull_an_image_on_one_real_node(
    kube: KubeClient, namespace: str, real_node: RealNode
) -> None:
    image = fresh_image(real_node)
    assert image not in node_images(real_node)
    await node_image_created(kube, real_node.name)
    await kube.create(IMAGEPULLJOBS, pull_job("pull-one", image, real_node.name), namespace)

    job = await finished(kube, namespace, "pull-one")
    status = job["status"]
    assert (status["desired"], status.get("succeeded"), status.get("failed", 0)) == (1, 1, 0)
    assert image in node_images(real_node)  # containerd really holds it

    node_image = await kube.get(NODEIMAGES, real_node.name)
    pulled = tag_status(node_image, image)
    assert pulled["phase"] == "Succeeded" and pulled["progress"] == 100
    (held,) = [i for i in real_node.crictl_json("images")["images"] if image in (i.get("repoTags") or ())]
    assert pulled["imageID"] == f"{image.rpartition(':')[0]}@{held['id']}"

    await kube.delete(IMAGEPULLJOBS, "pull-one", namespace)

    async def cleaned() -> bool:
        spec_images = ((await kube.get(NODEIMAGES, real_node.name)).get("spec") or {}).get("images") or {}
        return image.rpartition(":")[0] not in spec_images

    await eventually(cleaned, timeout=30, what="the job's tag removed from the NodeImage")


async def test_a_missing_image_fails_after_its_backoff_and_names_the_node(
    kube: KubeClient, namespace: str, real_node: RealNode
) -> None:
    image = image_ref(f"missing-{uuid.uuid4().hex[:8]}", "v1")
    await kube.create(
        IMAGEPULLJOBS, pull_job("pull-missing", image, real_node.name, backoffLimit=1), namespace
    )

    job = await finished(kube, namespace, "pull-missing")
    status = job["status"]
    assert (status["desired"], status.get("succeeded", 0), status["failed"]) == (1, 0, 1)
    assert status["failedNodes"] == [real_node.name]
    failed = tag_status(await kube.get(NODEIMAGES, real_node.name), image)
    assert failed["phase"] == "Failed" and failed["completionTime"]
    assert "not found" in failed["message"] or "404" in failed["message"], failed["message"]
    assert image not in node_images(real_node)


async def test_a_registry_that_is_down_fails_the_pull_after_its_backoff_and_names_the_node(
    kube: KubeClient, namespace: str, real_node: RealNode
) -> None:
    """A registry nobody answers on (loopback port 1: the connection is refused at once): the
    daemon's pull fails, is retried ``backoffLimit`` times, and the job counts the node failed
    with containerd's reason in the tag's message, as upstream reports a pull error."""
    image = f"127.0.0.1:1/kruise/down-{uuid.uuid4().hex[:8]}:v1"
    await node_image_created(kube, real_node.name)
    await kube.create(IMAGEPULLJOBS, pull_job("pull-down", image, real_node.name, backoffLimit=1), namespace)

    job = await finished(kube, namespace, "pull-down")
    status = job["status"]
    assert (status["desired"], status.get("succeeded", 0), status["failed"]) == (1, 0, 1)
    assert status["failedNodes"] == [real_node.name]
    failed = tag_status(await kube.get(NODEIMAGES, real_node.name), image)
    assert failed["phase"] == "Failed" and failed["completionTime"]
    assert "connection refused" in failed["message"], failed["message"]
    assert image not in node_images(real_node)
