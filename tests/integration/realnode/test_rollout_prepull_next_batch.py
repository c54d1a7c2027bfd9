"""Ours: a Rollout annotated ``rollouts.kruise.io/prepull-next-batch: "true"`` makes every batch
after the first start on a node that already holds the new image, on real kubelets.

Three real nodes (the package's one plus two this module adds), a CloneSet of three pods, one
per node (required pod anti-affinity), and a canary Rollout of three one-pod steps with manual
pauses. The new image is fresh: built here, pushed to the local registry, on no node. While the
release waits at step ``k`` the Rollout's ImagePullJob names the node of the pod step ``k + 1``
updates; the node's kruise-daemon pulls the image (``crictl images`` shows it) before the test
approves. The proof that no pull happened inside batches 2 and 3 is the kubelet's own account:
for each pod of those batches the kubelet reported ``Pulled ... already present on machine`` for
the new image and never ``Pulling`` it (the kubelet emits exactly one of the two each time it
ensures an image before starting a container). Batch 1 pulls: nothing pre-pulls before the
first step. The control, without the annotation, shows the kubelet pulling inside batch 2.

The pods say ``imagePullPolicy: IfNotPresent``. OpenKruise defaults a CloneSet's containers to
``Always`` (for in-place updates); with it the kubelet asks the registry on every container start
even when the node holds the image ("Pulling", then "Successfully pulled ... in 24ms" with no
layer fetched), so its events could not tell a pull from a check.

The two added nodes carry an extra ``NoSchedule`` taint only this module's pods tolerate, so
the package's other tests never see a pod of theirs land there; they go with the package's
real node at its teardown.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, EVENTS, IMAGEPULLJOBS, PODS
from kruise.core.localcluster.realnode.plan import NODE_SELECTOR, TOLERATION
from kruise.rollouts.resources import ROLLOUTS
from kruise.rollouts.rollout.prepull import PREPULL_ANNOTATION, PREPULL_LABEL
from tests.integration.realnode.conftest import RealNode, web_container
from tests.integration.realnode.test_imagepulljob import node_image_created
from tests.integration.realnode.test_nodeimage_daemon import fresh_image
from tests.integration.realnode.test_rollout import set_web_image
from tests.integration.rollouts import helpers as h
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")

JSON = dict[str, Any]
EXTRA_TAINT_KEY = "kruise.io/prepull-test-node"
REPLICAS = 3
ONE_POD_STEPS: list[JSON] = [
    {"replicas": 1, "pause": {}},
    {"replicas": 2, "pause": {}},
    {"replicas": "100%"},  # the last step: no pause, the release completes
]
PAYLOAD_BYTES = 8 * 1024 * 1024


@pytest.fixture(scope="module")
def real_nodes(real_node: RealNode) -> Iterator[list[str]]:
    """The package's real node and two more, tainted for this module's pods only."""
    added = real_node.local.add_real_nodes(2, wait_for_host=60)
    for name in added:
        real_node.local.kubectl("taint", "node", name, f"{EXTRA_TAINT_KEY}=true:NoSchedule")
    yield [real_node.name, *added]


def spread_cloneset(replicas: int) -> JSON:
    """CloneSet ``web``: busybox v1 pods, one per real node, updated in place, pulling an image
    only when the node does not hold it."""
    spec = {
        "nodeSelector": dict(NODE_SELECTOR),
        "tolerations": [dict(TOLERATION), {"key": EXTRA_TAINT_KEY, "operator": "Exists"}],
        "affinity": {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "labelSelector": {"matchLabels": {"app": "web"}},
                        "topologyKey": "kubernetes.io/hostname",
                    }
                ]
            }
        },
        "terminationGracePeriodSeconds": 5,
        # IfNotPresent: OpenKruise defaults a CloneSet's containers to Always (for in-place
        # updates), with which the kubelet asks the registry on every start even when the image
        # is there ("Pulling", then "Successfully pulled" with no layer fetched)
        "containers": [web_container("web", "v1", 8080, imagePullPolicy="IfNotPresent")],
    }
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": spec},
            "updateStrategy": {"type": "InPlaceIfPossible"},
        },
    }


async def release_of(kube: KubeClient, namespace: str, steps: list[JSON], prepull: bool) -> dict[str, str]:
    """The settled CloneSet on three nodes under a Healthy Rollout; returns pod name -> node."""
    await kube.create(CLONESETS, spread_cloneset(REPLICAS), namespace)
    await h.wait_settled(kube, namespace, REPLICAS, timeout=90)
    ro = h.rollout(namespace, steps)
    if prepull:
        ro["metadata"]["annotations"] = {PREPULL_ANNOTATION: "true"}
    await kube.create(ROLLOUTS, ro, namespace)
    await h.wait_phase(kube, namespace, "Healthy")
    pods = (await kube.list(PODS, namespace, label_selector="app=web"))["items"]
    return {p["metadata"]["name"]: p["spec"]["nodeName"] for p in pods}


async def updated_pods(kube: KubeClient, namespace: str, image: str) -> set[str]:
    """Pods whose ``web`` container spec already names ``image`` (updated by the CloneSet)."""
    pods = (await kube.list(PODS, namespace, label_selector="app=web"))["items"]
    return {p["metadata"]["name"] for p in pods if p["spec"]["containers"][0]["image"] == image}


async def image_events(kube: KubeClient, namespace: str, pod: str, image: str) -> list[str]:
    """The kubelet's ``Pulling``/``Pulled`` events of ``pod`` about ``image``: ``reason: message``."""
    items = (await kube.list(EVENTS, namespace, field_selector=f"involvedObject.name={pod}"))["items"]
    return sorted(
        f"{e['reason']}: {e['message']}"
        for e in items
        if e.get("reason") in ("Pulling", "Pulled") and f'"{image}"' in e.get("message", "")
    )


async def prepull_nodes(kube: KubeClient, namespace: str, updated_nodes: set[str]) -> list[str]:
    """The nodes the Rollout's one pre-pull ImagePullJob names, once it names none of
    ``updated_nodes`` (the job of the step before may still be there for a moment)."""

    async def probe() -> list[str] | None:
        jobs = (await kube.list(IMAGEPULLJOBS, namespace, label_selector=f"{PREPULL_LABEL}=web"))["items"]
        names = [sorted(j["spec"]["selector"]["names"]) for j in jobs]
        return names[0] if len(names) == 1 and not updated_nodes & set(names[0]) else None

    return await eventually(probe, timeout=30, what="the Rollout's pre-pull ImagePullJob")


async def kubelet_outcome(kube: KubeClient, namespace: str, pod: str, image: str) -> list[str]:
    """``image_events`` once the kubelet has reported its outcome (pulled, or already present)."""

    async def probe() -> list[str] | None:
        events = await image_events(kube, namespace, pod, image)
        return events if any(e.startswith("Pulled: ") for e in events) else None

    return await eventually(probe, timeout=30, what=f"the kubelet's Pulled event of {pod} for {image}")


def _has(node: RealNode, name: str, image: str) -> bool:
    """True when containerd on real node ``name`` holds ``image``."""
    listed = json.loads(node.local.crictl(name, "images", "-o", "json"))["images"]
    return image in {tag for held in listed for tag in held.get("repoTags") or ()}


def held(node: RealNode, name: str, image: str) -> Callable[[], Awaitable[bool]]:
    """A probe for :func:`eventually`: ``image`` is on real node ``name``."""

    async def probe() -> bool:
        return _has(node, name, image)

    return probe


async def test_with_prepull_next_batch_no_batch_after_the_first_pulls_its_image(
    kube: KubeClient, namespace: str, real_node: RealNode, real_nodes: list[str]
) -> None:
    for node in real_nodes:
        await node_image_created(kube, node)
    nodes_of = await release_of(kube, namespace, ONE_POD_STEPS, prepull=True)
    assert sorted(nodes_of.values()) == sorted(real_nodes)  # one pod per node
    image = fresh_image(real_node, PAYLOAD_BYTES)
    assert not any(_has(real_node, n, image) for n in real_nodes)

    await set_web_image(kube, namespace, image)
    done: set[str] = set()
    batches: list[set[str]] = []
    prepulled: list[list[str]] = []
    for step in (1, 2):
        await h.wait_paused_at(kube, namespace, step, timeout=90)
        now = await updated_pods(kube, namespace, image)
        batches.append(now - done)
        done = now

        names = await prepull_nodes(kube, namespace, {nodes_of[p] for p in done})
        assert len(names) == 1
        # the node's kruise-daemon pulled the image before the next batch starts
        await eventually(held(real_node, names[0], image), timeout=60, what=f"{image} on {names}")
        prepulled.append(names)
        await h.approve(kube, namespace)
    await h.wait_completed(kube, namespace, timeout=90)
    batches.append(await updated_pods(kube, namespace, image) - done)
    assert [len(b) for b in batches] == [1, 1, 1]

    # batch 1: nothing pre-pulled it, the kubelet pulls
    (first,) = batches[0]
    events = await kubelet_outcome(kube, namespace, first, image)
    assert any(e.startswith("Pulling: ") for e in events), events
    # batches 2 and 3: each pod's node is the one pre-pulled while the step before waited, and its
    # kubelet found the image there
    for batch, names in zip(batches[1:], prepulled, strict=True):
        (pod,) = batch
        assert [nodes_of[pod]] == names
        events = await kubelet_outcome(kube, namespace, pod, image)
        assert not any(e.startswith("Pulling: ") for e in events), events
        assert all("already present on machine" in e for e in events), events


async def test_without_the_annotation_the_second_batch_pulls_inside_its_batch(
    kube: KubeClient, namespace: str, real_node: RealNode, real_nodes: list[str]
) -> None:
    steps: list[JSON] = [{"replicas": 1, "pause": {}}, {"replicas": "100%"}]
    await release_of(kube, namespace, steps, prepull=False)
    image = fresh_image(real_node, PAYLOAD_BYTES)
    await set_web_image(kube, namespace, image)
    await h.wait_paused_at(kube, namespace, 1, timeout=90)
    first = await updated_pods(kube, namespace, image)
    assert len(first) == 1
    assert (await kube.list(IMAGEPULLJOBS, namespace))["items"] == []
    held = [n for n in real_nodes if _has(real_node, n, image)]
    assert len(held) == 1  # only batch 1's node has it when batch 2 starts

    await h.approve(kube, namespace)
    await h.wait_completed(kube, namespace, timeout=90)
    second = await updated_pods(kube, namespace, image) - first
    assert len(second) == 2
    for pod in second:
        events = await kubelet_outcome(kube, namespace, pod, image)
        assert any(e.startswith("Pulling: ") for e in events), events
