"""Upstream's ``DaemonSet canary rollout`` fixtures: Kruise Rollouts' ``fluentd-elasticsearch``
Advanced DaemonSet example under a ``rollouts.kruise.io/v1beta1`` Rollout ``web``, on three KWOK
nodes of the test's own.

The example goes to the test's namespace (the hold webhooks never see ``kube-system``, as
upstream's chart registers them) with a node selector for the test's nodes. Its pods are counted
by image: the scenarios change the container's image where upstream changes an env var.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import DAEMONSETS
from kruise.rollouts.resources import ROLLOUTS
from tests.integration.daemonset.helpers import image_of, label, node_label, node_of, pods, wait_on_nodes
from tests.integration.rollouts import helpers as h
from tests.support.corpus import UPSTREAM_EXAMPLES
from tests.support.nodes import NodePool
from tests.support.wait import eventually

FLUENTD = UPSTREAM_EXAMPLES / "kruise-rollouts/DaemonSet/001-fluentd-elasticsearch.yaml"
NAME, SELECTOR = "fluentd-elasticsearch", "name=fluentd-elasticsearch"
V1 = "quay.io/fluentd_elasticsearch/fluentd:v2.5.2"
V2 = "quay.io/fluentd_elasticsearch/fluentd:v2.6.0"
V3 = "quay.io/fluentd_elasticsearch/fluentd:v2.7.0"
ROLLOUT_ID, BATCH_ID = "rollouts.kruise.io/rollout-id", "rollouts.kruise.io/rollout-batch-id"
JSON = dict[str, Any]

# upstream's rollout_canary_daemonset_base.yaml and rollout_canary_daemonset_interrupt.yaml
STEPS_1_100: list[JSON] = [{"replicas": 1}, {"replicas": "100%"}]
STEPS_1_2_100: list[JSON] = [{"replicas": 1}, {"replicas": 2}, {"replicas": "100%"}]


def fluentd(namespace: str, nodes: NodePool) -> JSON:
    doc: JSON = yaml.safe_load(FLUENTD.read_text())
    doc["metadata"]["namespace"] = namespace
    doc["spec"]["template"]["spec"]["nodeSelector"] = node_label(nodes)
    return doc


def rollout(namespace: str, steps: Sequence[Mapping[str, Any]] = STEPS_1_100) -> JSON:
    """The Rollout ``web`` on the example (no traffic routing; a step without a pause waits for
    approval, except a last one at 100%)."""
    return {
        "apiVersion": "rollouts.kruise.io/v1beta1",
        "kind": "Rollout",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {
            "workloadRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "DaemonSet", "name": NAME},
            "strategy": {"canary": {"steps": [dict(s) for s in steps]}},
        },
    }


async def set_image(kube: KubeClient, namespace: str, image: str, rollout_id: str | None = None) -> None:
    """The example's container with ``image`` (a merge patch replaces the whole list, so the rest
    of the container is written as the example has it: going back to V1 is the V1 template), and
    with ``rollout_id`` the label ``rollouts.kruise.io/rollout-id`` in the same update."""
    (container,) = yaml.safe_load(FLUENTD.read_text())["spec"]["template"]["spec"]["containers"]
    patch: JSON = {"spec": {"template": {"spec": {"containers": [{**container, "image": image}]}}}}
    if rollout_id is not None:
        patch["metadata"] = {"labels": {ROLLOUT_ID: rollout_id}}
    await kube.patch(DAEMONSETS, NAME, patch, namespace, patch_type="merge")


def rolling(ds: Mapping[str, Any]) -> JSON:
    return dict(((ds["spec"].get("updateStrategy") or {}).get("rollingUpdate")) or {})


async def get(kube: KubeClient, namespace: str) -> JSON:
    return await kube.get(DAEMONSETS, NAME, namespace)


async def images(kube: KubeClient, namespace: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for pod in await pods(kube, namespace, NAME, selector=SELECTOR):
        out[image_of(pod)] = out.get(image_of(pod), 0) + 1
    return out


async def images_by_node(kube: KubeClient, namespace: str) -> dict[str, str]:
    """node -> image of its live daemon pod."""
    return {node_of(p): image_of(p) for p in await pods(kube, namespace, NAME, selector=SELECTOR)}


async def batch_labels(kube: KubeClient, namespace: str) -> dict[str, tuple[str | None, str | None]]:
    """node -> (``rollout-id``, ``rollout-batch-id``) labels of its live daemon pod."""
    return {
        node_of(p): (label(p, ROLLOUT_ID), label(p, BATCH_ID))
        for p in await pods(kube, namespace, NAME, selector=SELECTOR)
    }


async def wait_images(kube: KubeClient, namespace: str, want: dict[str, int], timeout: float = 90) -> None:
    async def probe() -> bool:
        return await images(kube, namespace) == want

    await eventually(probe, timeout=timeout, what=f"daemon pods {want}")


async def start(
    kube: KubeClient, namespace: str, nodes: NodePool, steps: Sequence[Mapping[str, Any]] = STEPS_1_100
) -> tuple[list[str], str]:
    """Three nodes, the DaemonSet on them, the Rollout Healthy; returns nodes and stable revision."""
    names = await nodes.add_nodes(3, node_label(nodes))
    await kube.create(DAEMONSETS, fluentd(namespace, nodes), namespace)
    await wait_on_nodes(kube, namespace, NAME, names, selector=SELECTOR, timeout=90)
    await kube.create(ROLLOUTS, rollout(namespace, steps), namespace)
    await h.wait_phase(kube, namespace, "Healthy")
    ds = await get(kube, namespace)
    assert ds["metadata"]["labels"]["rollouts.kruise.io/workload-type"] == "daemonset"
    return names, str(ds["status"]["daemonSetHash"])


async def assert_step(
    kube: KubeClient, namespace: str, ro: Mapping[str, Any], step: int, updated: int
) -> JSON:
    """Upstream's checks at a paused step: ``updated`` pods at the update revision, every desired
    pod Ready, the DaemonSet's ``rollingUpdate.paused`` written ``false`` (upstream's e2e
    dereferences the pointer, ``rollout_test.go:2864/2957/3093``: taking control writes it even
    when it was never set), its partition keeping the others back; the Rollout Progressing at
    ``step`` on the plan it hashed. Returns the DaemonSet."""
    ds = await get(kube, namespace)
    st = ds["status"]
    assert st["observedGeneration"] == ds["metadata"]["generation"]
    assert (st["updatedNumberScheduled"], st["numberReady"]) == (updated, st["desiredNumberScheduled"])
    assert rolling(ds).get("partition") == st["desiredNumberScheduled"] - updated
    assert "paused" not in rolling(yaml.safe_load(FLUENTD.read_text())), "the example sets no pause"
    assert rolling(ds).get("paused") is False
    cs = h.canary_status(ro)
    assert (ro["status"]["phase"], cs["currentStepIndex"]) == ("Progressing", step)
    assert cs["rolloutHash"] == ro["metadata"]["annotations"]["rollouts.kruise.io/hash"]
    assert cs["canaryRevision"] == cs["podTemplateHash"] == st["daemonSetHash"]
    assert cs["canaryReadyReplicas"] == updated
    return ds
