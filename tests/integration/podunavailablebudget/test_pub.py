"""PodUnavailableBudget on the real control plane (KWOK pods become Ready through the stages).

The status over a CloneSet; a pod DELETE admitted while the budget allows it and refused with
upstream's message once it is spent; an eviction (``pods/eviction``) refused likewise; a pod
annotated ``pub.kruise.io/no-protect`` deleted regardless; the PUB webhook's refusals (nothing
stored).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kruise.core.errors import KruiseError, NotFoundError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, DEPLOYMENTS, EVENTS, PODS
from kruise.workloads.api.podunavailablebudget import PUBS
from tests.integration.cloneset.helpers import new_cloneset
from tests.support.wait import eventually, wait_observed

pytestmark = pytest.mark.usefixtures("manager")
JSON = dict[str, Any]
EXHAUSTED = 'podunavailablebudget.policy.kruise.io "guard" is forbidden: pub unavailable allowed is negative'


def budget(name: str = "guard", annotations: dict[str, str] | None = None, **spec: Any) -> JSON:
    meta: JSON = {"name": name, "annotations": annotations or {}}
    return {
        "apiVersion": "policy.kruise.io/v1alpha1",
        "kind": "PodUnavailableBudget",
        "metadata": meta,
        "spec": spec,
    }


def bare_pod(name: str, app: str = "guarded") -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": app}},
        "spec": {
            "terminationGracePeriodSeconds": 0,
            "containers": [{"name": "app", "image": "registry.example.com/app:1"}],
        },
    }


def ready(pod: JSON) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


async def status_is(kube: KubeClient, namespace: str, name: str, **wanted: int) -> JSON:
    async def probe() -> JSON | None:
        pub = await kube.get(PUBS, name, namespace)
        status = pub.get("status") or {}
        if status.get("observedGeneration") != pub["metadata"]["generation"]:
            return None
        return pub if all(status.get(k) == v for k, v in wanted.items()) else None

    return await eventually(probe, timeout=60, what=f"pub {name} status {wanted}")


async def evict(kube: KubeClient, namespace: str, pod: str) -> None:
    body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": pod, "namespace": namespace}}
    await kube.request("POST", PODS.path(namespace, pod, "eviction"), body=body)


async def test_status_over_a_cloneset(kube: KubeClient, namespace: str) -> None:
    await kube.create(CLONESETS, copy.deepcopy(new_cloneset("web", 4)), namespace)
    ref = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"}
    await kube.create(PUBS, budget(targetRef=ref, maxUnavailable="25%"), namespace)
    pub = await status_is(
        kube,
        namespace,
        "guard",
        totalReplicas=4,
        desiredAvailable=3,
        currentAvailable=4,
        unavailableAllowed=1,
    )
    assert "disruptedPods" not in pub["status"]
    pods = (await kube.list(PODS, namespace, label_selector="app=web"))["items"]
    assert len(pods) == 4
    assert {p["metadata"]["annotations"].get("kruise.io/related-pub") for p in pods} == {"guard"}
    # a pod marked unavailable stops counting
    victim = pods[0]["metadata"]["name"]
    await kube.patch(
        PODS, victim, {"metadata": {"labels": {"unavailable-pod.kruise.io/drain": "true"}}}, namespace
    )
    await status_is(kube, namespace, "guard", currentAvailable=3, unavailableAllowed=0)
    # a scale-down follows the workload's replicas
    await kube.patch(CLONESETS, "web", {"spec": {"replicas": 2}}, namespace)
    await status_is(kube, namespace, "guard", totalReplicas=2, desiredAvailable=1)


async def test_delete_and_eviction_spend_the_budget_then_are_refused(
    kube: KubeClient, namespace: str
) -> None:
    for name in ("a", "b", "c"):
        await kube.create(PODS, bare_pod(name), namespace)
    annotations = {"pub.kruise.io/protect-total-replicas": "3"}
    await kube.create(
        PUBS,
        budget(annotations=annotations, selector={"matchLabels": {"app": "guarded"}}, maxUnavailable=1),
        namespace,
    )
    await status_is(kube, namespace, "guard", totalReplicas=3, currentAvailable=3, unavailableAllowed=1)

    async def annotated() -> bool:
        pods = (await kube.list(PODS, namespace))["items"]
        return all(p["metadata"].get("annotations", {}).get("kruise.io/related-pub") == "guard" for p in pods)

    await eventually(annotated, what="pods carry kruise.io/related-pub")

    await kube.delete(PODS, "a", namespace)  # admitted: one unit spent before the deletion
    pub = await kube.get(PUBS, "guard", namespace)
    assert pub["status"]["unavailableAllowed"] == 0
    assert "a" in (pub["status"].get("disruptedPods") or {}) or pub["status"]["currentAvailable"] == 2

    with pytest.raises(KruiseError) as refused:
        await kube.delete(PODS, "b", namespace)
    assert EXHAUSTED in str(refused.value)
    assert 'admission webhook "vpod.kb.io" denied the request' in str(refused.value)
    assert (await kube.get(PODS, "b", namespace))["metadata"].get("deletionTimestamp") is None

    async def prevented() -> bool:
        events = (await kube.list(EVENTS, namespace, field_selector="involvedObject.name=b"))["items"]
        return any(e.get("reason") == "PubPreventPodDeletion" and e.get("type") == "Warning" for e in events)

    await eventually(prevented, what="PubPreventPodDeletion event on pod b")

    with pytest.raises(KruiseError) as refused:
        await evict(kube, namespace, "b")
    assert EXHAUSTED in str(refused.value)
    assert 'admission webhook "vpodeviction.kb.io" denied the request' in str(refused.value)
    assert (await kube.get(PODS, "b", namespace))["metadata"].get("deletionTimestamp") is None

    # settled: two available of the three expected, none to spare
    await status_is(kube, namespace, "guard", currentAvailable=2, desiredAvailable=2, unavailableAllowed=0)

    # no-protect takes a pod out of the budget
    await kube.patch(
        PODS, "c", {"metadata": {"annotations": {"pub.kruise.io/no-protect": "true"}}}, namespace
    )
    await kube.delete(PODS, "c", namespace)

    async def gone() -> bool:
        try:
            await kube.get(PODS, "c", namespace)
        except NotFoundError:
            return True
        return False

    await eventually(gone, what="pod c deleted")


async def test_eviction_admitted_while_the_budget_allows(kube: KubeClient, namespace: str) -> None:
    for name in ("a", "b"):
        await kube.create(PODS, bare_pod(name), namespace)
    await kube.create(
        PUBS,
        budget(
            selector={"matchLabels": {"app": "guarded"}},
            minAvailable=1,
            annotations={"pub.kruise.io/protect-total-replicas": "2"},
        ),
        namespace,
    )
    await status_is(kube, namespace, "guard", currentAvailable=2, desiredAvailable=1, unavailableAllowed=1)

    async def annotated() -> bool:
        pod = await kube.get(PODS, "a", namespace)
        return pod["metadata"].get("annotations", {}).get("kruise.io/related-pub") == "guard"

    await eventually(annotated, what="pod a carries kruise.io/related-pub")
    await evict(kube, namespace, "a")
    pub = await kube.get(PUBS, "guard", namespace)
    assert pub["status"]["unavailableAllowed"] == 0
    with pytest.raises(KruiseError) as refused:
        await evict(kube, namespace, "b")
    assert EXHAUSTED in str(refused.value)


async def test_validation_refuses_with_upstreams_messages(kube: KubeClient, namespace: str) -> None:
    selector = {"matchLabels": {"app": "web"}}
    ref = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"}
    cases = [
        (
            budget("both", selector=selector, targetRef=ref, maxUnavailable=1),
            "spec.selector, targetRef: Required value: selector and targetRef are mutually exclusive",
        ),
        (
            budget("neither", maxUnavailable=1),
            "spec.selector, targetRef: Required value: no selector or targetRef defined in "
            "PodUnavailableBudget",
        ),
        (
            budget("budgets", selector=selector, maxUnavailable=1, minAvailable=1),
            "spec.maxUnavailable, minAvailable: Required value: maxUnavailable and minAvailable are mutually "
            "exclusive",
        ),
    ]
    for body, message in cases:
        with pytest.raises(KruiseError) as err:
            await kube.create(PUBS, body, namespace)
        assert message in str(err.value)
        assert await kube.get_or_none(PUBS, body["metadata"]["name"], namespace) is None

    await kube.create(PUBS, budget("first", selector=selector, maxUnavailable=1), namespace)
    # the manager's informer (the webhook reads the same) holds "first"
    await wait_observed(lambda: kube.get(PUBS, "first", namespace), what="first")
    with pytest.raises(KruiseError) as err:
        await kube.create(PUBS, budget("second", selector=selector, maxUnavailable=2), namespace)
    assert "pub.spec.selector is in conflict with other PodUnavailableBudget first" in str(err.value)
    assert await kube.get_or_none(PUBS, "second", namespace) is None

    with pytest.raises(KruiseError) as err:
        await kube.patch(PUBS, "first", {"spec": {"selector": {"matchLabels": {"app": "other"}}}}, namespace)
    assert "selector and targetRef cannot be modified" in str(err.value)
    stored = await kube.get(PUBS, "first", namespace)
    assert stored["spec"]["selector"] == selector


async def test_status_over_a_deployment_through_its_replicasets(kube: KubeClient, namespace: str) -> None:
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "api"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "api"}},
            "template": {
                "metadata": {"labels": {"app": "api"}},
                "spec": {"containers": [{"name": "api", "image": "registry.example.com/api:1"}]},
            },
        },
    }
    await kube.create(DEPLOYMENTS, deployment, namespace)
    ref = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "api"}
    await kube.create(PUBS, budget(targetRef=ref, minAvailable="50%"), namespace)
    await status_is(
        kube,
        namespace,
        "guard",
        totalReplicas=2,
        desiredAvailable=1,
        currentAvailable=2,
        unavailableAllowed=1,
    )
    # a selector budget counts the Deployment's replicas too (its pods' ReplicaSet climbs to it)
    await kube.delete(PUBS, "guard", namespace)
    await kube.create(
        PUBS, budget("by-labels", selector={"matchLabels": {"app": "api"}}, maxUnavailable=0), namespace
    )
    await status_is(kube, namespace, "by-labels", totalReplicas=2, desiredAvailable=2, unavailableAllowed=0)

    async def taken_over() -> bool:
        pods = (await kube.list(PODS, namespace, label_selector="app=api"))["items"]
        return {p["metadata"]["annotations"].get("kruise.io/related-pub") for p in pods} == {"by-labels"}

    await eventually(taken_over, what="the pods point at the live budget")
    victim = (await kube.list(PODS, namespace, label_selector="app=api"))["items"][0]["metadata"]["name"]
    with pytest.raises(KruiseError) as refused:
        await kube.delete(PODS, victim, namespace)
    assert 'podunavailablebudget.policy.kruise.io "by-labels" is forbidden' in str(refused.value)
