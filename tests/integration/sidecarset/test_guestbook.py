"""The issue's acceptance scenario with upstream's own manifests (shared/upstream-examples):
``guestbook-sidecar`` injects every pod of a new 5-replica CloneSet it selects, leaves an older pod
alone, and a new sidecar image with ``partition: 2`` updates exactly 3 pods in place (the app
containers not restarted); ``test-sidecarset``'s hot upgrade swaps the working container; a
conflicting SidecarSet is refused with upstream's message."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from typing import Any

import pytest
import yaml

from kruise.core.errors import InvalidError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, PODS, SIDECARSETS
from kruise.rollouts.manager.process import ManagerProcess
from kruise.workloads.sidecarset.keys import (
    HASH_ANNOTATION,
    HASH_WITHOUT_IMAGE_ANNOTATION,
    INJECTED_LIST_ANNOTATION,
)
from tests.integration.sidecarset.helpers import (
    container,
    container_status,
    selector_pods,
    update_sidecarset,
    wait_observed,
    wait_pods,
    wait_status,
)
from tests.support.corpus import UPSTREAM_EXAMPLES

JSON = dict[str, Any]
CORPUS = UPSTREAM_EXAMPLES / "kruise" / "SidecarSet"
LABEL = {"app.kubernetes.io/name": "guestbook-with-sidecar"}


def example(name: str) -> JSON:
    loaded: JSON = yaml.safe_load((CORPUS / name).read_text())
    return loaded


@pytest.fixture
async def upstream_sidecarsets(kube: KubeClient, manager: ManagerProcess) -> AsyncIterator[None]:
    """The examples' fixed names are cluster-wide: removed before and after."""
    names = ("guestbook-sidecar", "test-sidecarset", "guestbook-sidecar-copy")
    for name in names:
        await kube.delete(SIDECARSETS, name, missing_ok=True)
    yield
    for name in names:
        await kube.delete(SIDECARSETS, name, missing_ok=True)


def guestbook_cloneset(name: str, replicas: int, labels: dict[str, str]) -> JSON:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name, **labels}},
                "spec": {"containers": [{"name": "guestbook", "image": "openkruise/guestbook:v1"}]},
            },
        },
    }


async def test_guestbook_sidecar_injection_partition_upgrade_and_conflict(
    kube: KubeClient, namespace: str, upstream_sidecarsets: None
) -> None:
    old = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "older", "labels": dict(LABEL)}}
    old["spec"] = {"containers": [{"name": "guestbook", "image": "openkruise/guestbook:v1"}]}
    await kube.create(PODS, old, namespace)
    sidecarset = example("002-guestbook-sidecar.yaml")
    await kube.create(SIDECARSETS, copy.deepcopy(sidecarset))
    await wait_observed(kube, "guestbook-sidecar")
    await kube.create(CLONESETS, guestbook_cloneset("guestbook", 5, LABEL), namespace)
    pods = await wait_pods(kube, namespace, 5, {"app": "guestbook"})
    for pod in pods:
        assert [c["name"] for c in pod["spec"]["containers"]] == ["guestbook-sidecar", "guestbook"]
        annotations = pod["metadata"]["annotations"]
        assert {HASH_ANNOTATION, HASH_WITHOUT_IMAGE_ANNOTATION} <= set(annotations)
        assert annotations[INJECTED_LIST_ANNOTATION] == "guestbook-sidecar"
        assert any(v["name"] == "log-volume" for v in pod["spec"]["volumes"])
    untouched = await kube.get(PODS, "older", namespace)
    assert [c["name"] for c in untouched["spec"]["containers"]] == ["guestbook"]
    await wait_status(kube, "guestbook-sidecar", matchedPods=5, updatedPods=5, readyPods=5)

    def new_image(obj: JSON) -> None:
        obj["spec"]["containers"][0]["image"] = "openkruise/guestbook:sidecarv2"
        obj["spec"]["updateStrategy"]["partition"] = 2

    await update_sidecarset(kube, "guestbook-sidecar", new_image)
    await wait_status(kube, "guestbook-sidecar", matchedPods=5, updatedPods=3, readyPods=5)
    pods = await selector_pods(kube, namespace, {"app": "guestbook"})
    upgraded = [
        p for p in pods if container(p, "guestbook-sidecar")["image"] == "openkruise/guestbook:sidecarv2"
    ]
    assert len(upgraded) == 3
    for pod in pods:
        assert container_status(pod, "guestbook")["restartCount"] == 0
        assert container_status(pod, "guestbook-sidecar")["restartCount"] == (1 if pod in upgraded else 0)
    assert {p["metadata"]["uid"] for p in pods} == {
        p["metadata"]["uid"] for p in await selector_pods(kube, namespace, {"app": "guestbook"})
    }

    conflicting = example("002-guestbook-sidecar.yaml")
    conflicting["metadata"]["name"] = "guestbook-sidecar-copy"
    with pytest.raises(InvalidError) as refused:
        await kube.create(SIDECARSETS, conflicting)
    assert "container guestbook-sidecar already exist in guestbook-sidecar" in str(refused.value)


async def test_test_sidecarset_hot_upgrade_swaps_the_working_container(
    kube: KubeClient, namespace: str, upstream_sidecarsets: None
) -> None:
    body = example("001-test-sidecarset.yaml")
    body["spec"]["namespace"] = namespace  # upstream's selects app=main everywhere; keep it to this test
    await kube.create(SIDECARSETS, body)
    await wait_observed(kube, "test-sidecarset")
    await kube.create(CLONESETS, guestbook_cloneset("main", 2, {}), namespace)  # pods labelled app=main
    pods = await wait_pods(kube, namespace, 2, {"app": "main"})
    for pod in pods:
        assert container(pod, "nginx-sidecar-1")["image"] == "nginx:1.18"
        assert container(pod, "nginx-sidecar-2")["image"] == "empty:1.0.0"

    def upgrade(obj: JSON) -> None:
        obj["spec"]["containers"][0]["image"] = "nginx:1.19"

    await update_sidecarset(kube, "test-sidecarset", upgrade)
    await wait_status(kube, "test-sidecarset", matchedPods=2, updatedPods=2, readyPods=2, updatedReadyPods=2)
    for pod in await selector_pods(kube, namespace, {"app": "main"}):
        assert container(pod, "nginx-sidecar-2")["image"] == "nginx:1.19"
        assert container(pod, "nginx-sidecar-1")["image"] == "empty:1.0.0"
        assert container_status(pod, "guestbook")["restartCount"] == 0
