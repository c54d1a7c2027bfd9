"""ImagePullJob, ImageListPullJob and NodeImage through ``kruise manager`` on KWOK nodes.

Named after upstream's ``It``s (``test/e2e/apps/v1alpha1/pullimages.go``,
``imagelistpulljobs.go``) where they match. KWOK nodes run no kruise-daemon, so the test writes
NodeImage statuses the way the daemon does (the API contract between the two processes: the tag,
its ``version`` echoed, a phase and ``completionTime``); the real daemon is proven elsewhere.
Each module adds its own KWOK nodes (their NodeImages appear after ``--nodeimage-creation-delay``,
30 s after the node is Ready) and each test pulls its own image, so tests do not see each other.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest

from kruise.core.errors import ApiError, NotFoundError
from kruise.core.kube import KubeClient
from kruise.daemon.api.imagepulljob import IMAGELISTPULLJOBS, IMAGEPULLJOBS
from kruise.daemon.api.nodeimage import NODEIMAGES
from kruise.rollouts.manager.process import ManagerProcess
from tests.support.nodes import NodePool
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")
JSON = dict[str, Any]


@pytest.fixture(scope="module")
async def nodes(kube: KubeClient, manager: ManagerProcess) -> AsyncIterator[list[str]]:
    """Three KWOK nodes of this module, with their NodeImages created."""
    pool = NodePool(kube)
    names = await pool.add_nodes(3, {"ipj-test": pool.prefix})

    async def all_there() -> bool:
        for name in names:
            if await kube.get_or_none(NODEIMAGES, name) is None:
                return False
        return True

    try:
        await eventually(all_there, timeout=90, interval=1, what="a NodeImage per node")
        yield names
    finally:
        await pool.close()


def image() -> tuple[str, str]:
    tag = uuid.uuid4().hex[:8]
    return f"kruise.local/ipj-test:{tag}", tag


def new_job(name: str, img: str, **spec: Any) -> JSON:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ImagePullJob",
        "metadata": {"name": name},
        "spec": {"image": img, "completionPolicy": {"type": "Always"}, **spec},
    }


def tag_entry(nodeimage: JSON, tag: str) -> JSON | None:
    for t in ((nodeimage.get("spec") or {}).get("images") or {}).get("kruise.local/ipj-test", {}).get(
        "tags"
    ) or ():
        if t["tag"] == tag:
            return t  # type: ignore[no-any-return]
    return None


async def tagged(kube: KubeClient, names: list[str], tag: str) -> list[str]:
    out = []
    for name in names:
        if tag_entry(await kube.get(NODEIMAGES, name), tag) is not None:
            out.append(name)
    return out


async def report(kube: KubeClient, node: str, tag: str, phase: str) -> None:
    """Write the tag's status on ``node``'s NodeImage as kruise-daemon does."""
    for _ in range(5):
        ni = await kube.get(NODEIMAGES, node)
        entry = tag_entry(ni, tag)
        assert entry is not None
        status = ni.get("status") or {"desired": 0}
        images = status.setdefault("imageStatuses", {})
        tags = [t for t in images.get("kruise.local/ipj-test", {}).get("tags", []) if t["tag"] != tag]
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        tags.append(
            {
                "tag": tag,
                "phase": phase,
                "version": entry.get("version", 0),
                "completionTime": now,
                "startTime": now,
                "progress": 100,
            }
        )
        images["kruise.local/ipj-test"] = {"tags": tags}
        try:
            await kube.replace(NODEIMAGES, {**ni, "status": status}, subresource="status")
            return
        except ApiError:
            continue


async def status(kube: KubeClient, namespace: str, name: str) -> JSON:
    return (await kube.get(IMAGEPULLJOBS, name, namespace)).get("status") or {}


async def test_nodeimage_per_node_with_its_labels(kube: KubeClient, nodes: list[str]) -> None:
    # a NodeImage is created first and gets its node's labels on the next round
    async def labelled(name: str) -> bool:
        ni = await kube.get(NODEIMAGES, name)
        return bool((ni["metadata"].get("labels") or {}).get("ipj-test"))

    for name in nodes:
        await eventually(lambda n=name: labelled(n), timeout=30, what=f"NodeImage {name} labelled")


async def test_create_an_always_job_to_pull_an_image_on_one_real_node(
    kube: KubeClient, namespace: str, nodes: list[str]
) -> None:
    """Selected by name, parallelism 1: one node at a time; statuses written back complete it."""
    img, tag = image()
    chosen = nodes[:2]
    await kube.create(
        IMAGEPULLJOBS, new_job("one", img, selector={"names": chosen}, parallelism=1), namespace
    )
    first = await eventually(lambda: tagged(kube, nodes, tag), timeout=30, what="the tag on one node")
    assert len(first) == 1 and first[0] in chosen
    job = await kube.get(IMAGEPULLJOBS, "one", namespace)
    assert "apps.kruise.io/deletion-protection" in job["metadata"]["finalizers"]
    entry = tag_entry(await kube.get(NODEIMAGES, first[0]), tag)
    assert entry is not None
    assert entry["ownerReferences"][0]["uid"] == job["metadata"]["uid"]
    assert entry["pullPolicy"]["timeoutSeconds"] == 600 and entry["pullPolicy"]["backoffLimit"] == 3
    assert entry["imagePullPolicy"] == "IfNotPresent"
    await eventually(lambda: _has(kube, namespace, "one", active=1, desired=2), what="active 1 of 2")
    assert await tagged(kube, nodes, tag) == first  # parallelism holds the second node back

    await report(kube, first[0], tag, "Succeeded")
    second = await eventually(
        lambda: _count(tagged(kube, nodes, tag), 2), timeout=30, what="the tag on the second node"
    )
    assert set(second) == set(chosen)
    other = next(n for n in chosen if n != first[0])
    await report(kube, other, tag, "Failed")
    done = await eventually(lambda: _completed(kube, namespace, "one"), timeout=30, what="completion")
    assert done["succeeded"] == 1 and done["failed"] == 1 and done["failedNodes"] == [other]
    assert done["message"] == "job has completed"

    async def unprotected() -> bool:  # the round after the one that wrote completionTime drops it
        job = await kube.get(IMAGEPULLJOBS, "one", namespace)
        return "apps.kruise.io/deletion-protection" not in (job["metadata"].get("finalizers") or [])

    await eventually(unprotected, timeout=30, what="the protection finalizer dropped on completion")


async def _count(names: Any, n: int) -> list[str] | None:
    got: list[str] = await names
    return got if len(got) == n else None


async def _has(kube: KubeClient, namespace: str, name: str, **want: int) -> bool:
    st = await status(kube, namespace, name)
    return all(st.get(k, 0) == v for k, v in want.items())


async def _completed(kube: KubeClient, namespace: str, name: str) -> JSON | None:
    st = await status(kube, namespace, name)
    return st if st.get("completionTime") else None


async def test_deleting_a_job_removes_its_tags(kube: KubeClient, namespace: str, nodes: list[str]) -> None:
    img, tag = image()
    selector = {
        "matchLabels": {"ipj-test": (await kube.get(NODEIMAGES, nodes[0]))["metadata"]["labels"]["ipj-test"]}
    }
    await kube.create(IMAGEPULLJOBS, new_job("gone", img, selector=selector, parallelism=3), namespace)
    await eventually(
        lambda: _count(tagged(kube, nodes, tag), 3), timeout=30, what="the tag on all three nodes"
    )
    await kube.delete(IMAGEPULLJOBS, "gone", namespace)

    async def job_gone() -> bool:
        return await kube.get_or_none(IMAGEPULLJOBS, "gone", namespace) is None

    await eventually(job_gone, timeout=30, what="the finalizer released")

    async def untagged() -> bool:
        return await tagged(kube, nodes, tag) == []

    await eventually(untagged, timeout=30, what="the tags removed")


async def test_pull_image_with_secret_and_ttl_cleaned(
    kube: KubeClient, namespace: str, nodes: list[str]
) -> None:
    """ttlSecondsAfterFinished deletes the completed job."""
    img, tag = image()
    await kube.create(
        IMAGEPULLJOBS,
        new_job(
            "ttl",
            img,
            selector={"names": [nodes[2]]},
            completionPolicy={"type": "Always", "ttlSecondsAfterFinished": 2},
        ),
        namespace,
    )
    await eventually(lambda: _count(tagged(kube, nodes, tag), 1), timeout=30, what="the tag")
    await report(kube, nodes[2], tag, "Succeeded")

    async def deleted() -> bool:
        try:
            await kube.get(IMAGEPULLJOBS, "ttl", namespace)
        except NotFoundError:
            return True
        return False

    await eventually(deleted, timeout=30, what="the job deleted after its TTL")


BAD = [
    (
        "names-and-labels",
        {"selector": {"names": ["a"], "matchLabels": {"a": "b"}}},
        "can not set both names and labelSelector in this spec.selector",
    ),
    (
        "never-with-ttl",
        {"completionPolicy": {"type": "Never", "ttlSecondsAfterFinished": 3}},
        "activeDeadlineSeconds and ttlSecondsAfterFinished can only work with Always CompletionPolicyType",
    ),
    (
        "short-deadline",
        {"completionPolicy": {"type": "Always", "activeDeadlineSeconds": 10}},
        "completionPolicy.activeDeadlineSeconds must be greater than pullPolicy.timeoutSeconds(default 600)",
    ),
]


@pytest.mark.parametrize(("spec", "message"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
async def test_bad_specs_are_refused_with_upstreams_message(
    kube: KubeClient, namespace: str, spec: JSON, message: str
) -> None:
    with pytest.raises(ApiError) as err:
        await kube.create(IMAGEPULLJOBS, new_job("bad", "nginx:1.9.1", **spec), namespace)
    assert message in str(err.value)
    assert await kube.get_or_none(IMAGEPULLJOBS, "bad", namespace) is None


async def test_create_an_always_job_to_pull_two_images_on_one_real_node(
    kube: KubeClient, namespace: str, nodes: list[str]
) -> None:
    """An ImageListPullJob makes one owned ImagePullJob per image and completes with them."""
    (img1, tag1), (img2, tag2) = image(), image()
    body = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ImageListPullJob",
        "metadata": {"name": "list"},
        "spec": {
            "images": [img1, img2],
            "selector": {"names": [nodes[1]]},
            "completionPolicy": {"type": "Always"},
        },
    }
    await kube.create(IMAGELISTPULLJOBS, body, namespace)

    async def children() -> list[JSON] | None:
        items = (await kube.list(IMAGEPULLJOBS, namespace))["items"]
        return items if len(items) == 2 else None

    kids = await eventually(children, timeout=30, what="two ImagePullJobs")
    assert {k["spec"]["image"] for k in kids} == {img1, img2}
    assert all(k["metadata"]["ownerReferences"][0]["kind"] == "ImageListPullJob" for k in kids)
    for tag in (tag1, tag2):
        await eventually(lambda t=tag: _count(tagged(kube, [nodes[1]], t), 1), timeout=30, what="the tag")
        await report(kube, nodes[1], tag, "Succeeded")

    async def list_done() -> JSON | None:
        st = (await kube.get(IMAGELISTPULLJOBS, "list", namespace)).get("status") or {}
        return st if st.get("completionTime") else None

    st = await eventually(list_done, timeout=45, what="the list completed")
    assert st["desired"] == 2 and st["completed"] == 2 and st["succeeded"] == 2
