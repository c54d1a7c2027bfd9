"""A Kruise Rollouts release over real containers: each step's pods are updated in place by
the kubelet, and a pod whose new image cannot be pulled keeps the release where it is.

Upstream: a partition-style CloneSet release moves ``partition`` per step and a batch is
ready only when its pods are updated *and* Ready (``canaryReadyReplicas``); a step with
``pause: {}`` waits for approval.
"""

from __future__ import annotations

from typing import Any

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS
from kruise.core.localcluster.realnode import busybox
from kruise.core.localcluster.realnode.images import image_ref
from kruise.rollouts.resources import ROLLOUTS
from tests.integration.cloneset.helpers import consistently
from tests.integration.realnode.conftest import RealNode, condition, container_status
from tests.integration.realnode.test_inplace import check_update, real_cloneset, settled, web_pods
from tests.integration.rollouts import helpers as h
from tests.support.cluster import TestCluster
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")

JSON = dict[str, Any]
STEPS = [{"replicas": 1, "pause": {}}, {"replicas": "100%"}]
MISSING = image_ref("busybox", "not-in-the-registry")


async def start(kube: KubeClient, namespace: str) -> dict[str, str]:
    """The settled CloneSet under a Healthy Rollout; returns pod name -> UID."""
    await kube.create(CLONESETS, real_cloneset(2), namespace)
    await settled(kube, namespace, 2)
    await kube.create(ROLLOUTS, h.rollout(namespace, STEPS), namespace)
    await h.wait_phase(kube, namespace, "Healthy")
    return {p["metadata"]["name"]: p["metadata"]["uid"] for p in await web_pods(kube, namespace)}


async def set_web_image(kube: KubeClient, namespace: str, image: str) -> None:
    patch = [{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": image}]
    await kube.patch(CLONESETS, "web", patch, namespace, patch_type="json")


def restarts(pods: list[JSON]) -> dict[str, tuple[str, int]]:
    return {
        p["metadata"]["name"]: (
            container_status(p, "web").get("image", ""),
            container_status(p, "web").get("restartCount", -1),
        )
        for p in pods
    }


async def test_rollout_steps_update_pods_in_place_on_the_real_node(
    kube: KubeClient, namespace: str, real_node: RealNode, cluster: TestCluster
) -> None:
    uids = await start(kube, namespace)
    assert "IN PLACE" in check_update(cluster, namespace, "--image", f"web={busybox('v3')}")

    await set_web_image(kube, namespace, busybox("v3"))
    ro = await h.wait_paused_at(kube, namespace, 1, timeout=90)
    assert h.canary_status(ro)["canaryReadyReplicas"] == 1
    pods = await web_pods(kube, namespace)
    assert {p["metadata"]["name"]: p["metadata"]["uid"] for p in pods} == uids
    assert sorted(restarts(pods).values()) == [(busybox("v1"), 0), (busybox("v3"), 1)]
    assert all(condition(p, "Ready") == "True" for p in pods)

    await h.approve(kube, namespace)
    await h.wait_completed(kube, namespace, timeout=90)
    pods = await web_pods(kube, namespace)
    assert {p["metadata"]["name"]: p["metadata"]["uid"] for p in pods} == uids
    assert sorted(restarts(pods).values()) == [(busybox("v3"), 1), (busybox("v3"), 1)]


async def test_an_unpullable_image_keeps_the_pod_unready_and_the_release_in_its_step(
    kube: KubeClient, namespace: str, real_node: RealNode
) -> None:
    uids = await start(kube, namespace)
    await set_web_image(kube, namespace, MISSING)

    async def pull_failing() -> JSON | None:
        for pod in await web_pods(kube, namespace):
            waiting = (container_status(pod, "web").get("state") or {}).get("waiting") or {}
            if waiting.get("reason") in ("ErrImagePull", "ImagePullBackOff"):
                return pod
        return None

    failing = await eventually(pull_failing, timeout=60, what="the kubelet failing to pull the image")
    assert "not found" in str(container_status(failing, "web")["state"]["waiting"].get("message", ""))

    async def held() -> bool:
        ro = await h.get_rollout(kube, namespace)
        cs = h.canary_status(ro)
        pods = {p["metadata"]["name"]: p for p in await web_pods(kube, namespace)}
        other = next(p for n, p in pods.items() if n != failing["metadata"]["name"])
        return (
            (cs.get("currentStepIndex"), cs.get("currentStepState")) == (1, "StepUpgrade")
            and cs.get("canaryReadyReplicas", 0) == 0
            and {n: p["metadata"]["uid"] for n, p in pods.items()} == uids
            and condition(pods[failing["metadata"]["name"]], "Ready") == "False"
            and restarts([other])[other["metadata"]["name"]] == (busybox("v1"), 0)
            and condition(other, "Ready") == "True"
        )

    await consistently(held, seconds=10, what="the release held at step 1 with the failing pod unready")
