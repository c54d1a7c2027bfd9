"""Upstream's "DaemonSet canary rollout" group (``KR:test/e2e/rollout_test.go``) with Kruise
Rollouts' ``fluentd-elasticsearch`` Advanced DaemonSet example, on three KWOK nodes of the test's
own (the example goes to the test's namespace: the hold webhooks never see ``kube-system``, as
upstream's chart registers them; and gets a node selector for the test's nodes).

The Rollout is upstream's ``rollout_canary_daemonset_base.yaml`` (steps 1, 100%; no traffic
routing; a step without a pause waits for approval), as ``rollouts.kruise.io/v1beta1``:

- V1 -> V2: the image change is held at partition 32767; step 1 updates exactly one node's pod
  (partition 2) and pauses; approved, every pod runs V2, the partition is cleared, the Rollout
  succeeds;
- rolled back mid-release (V2 -> V1 at step 1): the Rollout sees a rollback (the update revision is
  the stable one again) and finalises at once: every pod back on V1, the partition cleared.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import DAEMONSETS
from kruise.rollouts.resources import ROLLOUTS
from tests.integration.daemonset.helpers import image_of, node_label, pods, wait_on_nodes
from tests.integration.rollouts import helpers as h
from tests.support.corpus import UPSTREAM_EXAMPLES
from tests.support.nodes import NodePool
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")

FLUENTD = UPSTREAM_EXAMPLES / "kruise-rollouts/DaemonSet/001-fluentd-elasticsearch.yaml"
NAME, SELECTOR = "fluentd-elasticsearch", "name=fluentd-elasticsearch"
V1 = "quay.io/fluentd_elasticsearch/fluentd:v2.5.2"
V2 = "quay.io/fluentd_elasticsearch/fluentd:v2.6.0"
JSON = dict[str, Any]


def fluentd(namespace: str, nodes: NodePool) -> JSON:
    doc: JSON = yaml.safe_load(FLUENTD.read_text())
    doc["metadata"]["namespace"] = namespace
    doc["spec"]["template"]["spec"]["nodeSelector"] = node_label(nodes)
    return doc


def rollout(namespace: str) -> JSON:
    return {
        "apiVersion": "rollouts.kruise.io/v1beta1",
        "kind": "Rollout",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {
            "workloadRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "DaemonSet", "name": NAME},
            "strategy": {"canary": {"steps": [{"replicas": 1}, {"replicas": "100%"}]}},
        },
    }


async def set_image(kube: KubeClient, namespace: str, image: str) -> None:
    """The example's container with ``image`` (a merge patch replaces the whole list, so the rest
    of the container is written as the example has it: going back to V1 is the V1 template)."""
    (container,) = yaml.safe_load(FLUENTD.read_text())["spec"]["template"]["spec"]["containers"]
    patch = {"spec": {"template": {"spec": {"containers": [{**container, "image": image}]}}}}
    await kube.patch(DAEMONSETS, NAME, patch, namespace, patch_type="merge")


def rolling(ds: JSON) -> JSON:
    return dict(((ds["spec"].get("updateStrategy") or {}).get("rollingUpdate")) or {})


async def images(kube: KubeClient, namespace: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for pod in await pods(kube, namespace, NAME, selector=SELECTOR):
        out[image_of(pod)] = out.get(image_of(pod), 0) + 1
    return out


async def wait_images(kube: KubeClient, namespace: str, want: dict[str, int], timeout: float = 90) -> None:
    async def probe() -> bool:
        return await images(kube, namespace) == want

    await eventually(probe, timeout=timeout, what=f"daemon pods {want}")


async def start(kube: KubeClient, namespace: str, nodes: NodePool) -> tuple[list[str], str]:
    """Three nodes, the DaemonSet on them, the Rollout Healthy; returns nodes and stable revision."""
    names = await nodes.add_nodes(3, node_label(nodes))
    await kube.create(DAEMONSETS, fluentd(namespace, nodes), namespace)
    await wait_on_nodes(kube, namespace, NAME, names, selector=SELECTOR, timeout=90)
    await kube.create(ROLLOUTS, rollout(namespace), namespace)
    await h.wait_phase(kube, namespace, "Healthy")
    ds = await kube.get(DAEMONSETS, NAME, namespace)
    assert ds["metadata"]["labels"]["rollouts.kruise.io/workload-type"] == "daemonset"
    return names, str(ds["status"]["daemonSetHash"])


@pytest.mark.timeout(300)
async def test_daemonset_v1_to_v2_1_100_succeeded(kube: KubeClient, namespace: str, nodes: NodePool) -> None:
    names, stable = await start(kube, namespace, nodes)
    await set_image(kube, namespace, V2)
    ro = await h.wait_paused_at(kube, namespace, 1, timeout=90)
    await wait_images(kube, namespace, {V1: 2, V2: 1})
    ds = await kube.get(DAEMONSETS, NAME, namespace)
    assert rolling(ds).get("partition") == 2 and not rolling(ds).get("paused")
    cs = h.canary_status(ro)
    canary = ds["status"]["daemonSetHash"]
    assert (cs["stableRevision"], cs["canaryRevision"], cs["podTemplateHash"]) == (stable, canary, canary)
    assert cs["canaryReadyReplicas"] == 1

    await h.approve(kube, namespace)
    ro = await h.wait_completed(kube, namespace, timeout=120)
    assert h.condition(ro, "Succeeded")["status"] == "True"
    await wait_on_nodes(kube, namespace, NAME, names, selector=SELECTOR, image=V2, timeout=90)
    ds = await kube.get(DAEMONSETS, NAME, namespace)
    assert rolling(ds).get("partition") in (None, 0)
    assert "rollouts.kruise.io/in-progressing" not in (ds["metadata"].get("annotations") or {})


@pytest.mark.timeout(300)
async def test_daemonset_rolled_back_mid_release_finalises_on_v1(
    kube: KubeClient, namespace: str, nodes: NodePool
) -> None:
    names, stable = await start(kube, namespace, nodes)
    await set_image(kube, namespace, V2)
    await h.wait_paused_at(kube, namespace, 1, timeout=90)
    await wait_images(kube, namespace, {V1: 2, V2: 1})
    await set_image(kube, namespace, V1)  # the user reverts the template
    ro = await h.wait_completed(kube, namespace, timeout=120)
    assert h.condition(ro, "Progressing")["reason"] == "Completed"
    await wait_on_nodes(kube, namespace, NAME, names, selector=SELECTOR, image=V1, timeout=90)
    ds = await kube.get(DAEMONSETS, NAME, namespace)
    assert ds["status"]["daemonSetHash"] == stable
    assert rolling(ds).get("partition") in (None, 0)
