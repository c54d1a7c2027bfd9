"""CloneSet decisions that hinge on a pod being unready, with pods held unready as a kubelet
reports them (``ContainersReady`` False; ``tests/support/podready.py``), and the lifecycle
``markPodNotReady`` that makes a pod unready on purpose (``KruisePodReady``).

Upstream's arithmetic (``calculateDiffsWithExpectation``) counts unavailable pods against
``maxUnavailable``; these tests only mean something when an unready pod really stays unready.
"""

from __future__ import annotations

import asyncio
import contextlib
import json

import pytest

from kruise.core.errors import KruiseError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import PODS
from tests.integration.cloneset.helpers import (
    IMAGE,
    JSON,
    LIFECYCLE,
    NEW_IMAGE,
    consistently,
    create,
    get,
    image_of,
    label,
    names,
    new_cloneset,
    patch_pod,
    patch_spec,
    pods,
    ready,
    set_image,
    wait_gone,
    wait_pods,
    wait_status,
)
from tests.support.podready import condition, hold_unready, set_gate
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")
GATE = "example.com/serving"


async def test_specified_delete_keeps_the_pod_until_its_surge_replacement_is_ready(
    kube: KubeClient, namespace: str
) -> None:
    """maxUnavailable 1, maxSurge 1, one pod unready, another in ``scaleStrategy.podsToDelete``:
    ``scaleSurge`` creates the replacement first, and the listed (ready) pod is deleted only once
    ``deleteReadyLimit`` = maxUnavailable + surplus pods - unavailable pods is above 0, i.e. when
    the replacement is Ready (1 + 1 - 2 = 0 before, 1 after).

    Every pod carries a readiness gate the test owns, so the replacement stays unready until the
    test opens its gate; the unready pod has its gate open and is held by its containers."""
    body = new_cloneset("surge", 3, strategy={"maxUnavailable": 1, "maxSurge": 1})
    body["spec"]["template"]["spec"]["readinessGates"] = [{"conditionType": GATE}]
    await create(kube, namespace, body)
    first = sorted(names(await wait_pods(kube, namespace, "surge", 3, all_ready=False)))
    for pod in first:
        await set_gate(kube, namespace, pod, GATE)
    await wait_status(kube, namespace, "surge", readyReplicas=3, availableReplicas=3)
    unready, listed, kept = first

    await hold_unready(kube, namespace, unready)
    await wait_status(kube, namespace, "surge", readyReplicas=2)
    await patch_spec(kube, namespace, "surge", {"scaleStrategy": {"podsToDelete": [listed]}})

    async def replacement() -> str | None:
        new = names(await pods(kube, namespace, "surge")) - set(first)
        return next(iter(new)) if new else None

    surge = await eventually(replacement, what="the surge replacement")

    async def listed_pod_kept() -> bool:
        found = names(await pods(kube, namespace, "surge"))
        return listed in found and len(found) == 4

    await consistently(listed_pod_kept, seconds=4, what="the listed pod kept while its replacement unready")
    held = {p["metadata"]["name"]: p for p in await pods(kube, namespace, "surge")}[unready]
    assert not ready(held)

    await set_gate(kube, namespace, surge, GATE)
    await wait_gone(kube, namespace, listed)
    await wait_status(kube, namespace, "surge", replicas=3, readyReplicas=2)
    assert names(await pods(kube, namespace, "surge")) == {unready, kept, surge}

    async def truncated() -> bool:  # truncatePodsToDelete drops the name of the pod now gone
        cs = await get(kube, namespace, "surge")
        return cs["spec"]["scaleStrategy"].get("podsToDelete") in (None, [])

    await eventually(truncated, what="podsToDelete truncated")


class PodHistory:
    """Every version of one pod, in the order the API server wrote them (a watch from a list)."""

    def __init__(self, kube: KubeClient, namespace: str, pod_name: str) -> None:
        self.kube, self.namespace, self.pod_name = kube, namespace, pod_name
        self.versions: list[JSON] = []
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> PodHistory:
        listed = await self.kube.list(PODS, self.namespace, field_selector=f"metadata.name={self.pod_name}")
        self.versions.extend(listed["items"])
        self._task = asyncio.create_task(self._run(str(listed["metadata"]["resourceVersion"])))
        return self

    async def _run(self, version: str) -> None:
        with contextlib.suppress(KruiseError):
            async for event in self.kube.watch(
                PODS,
                self.namespace,
                resource_version=version,
                field_selector=f"metadata.name={self.pod_name}",
                timeout_seconds=120,
            ):
                if event.type in ("ADDED", "MODIFIED"):
                    self.versions.append(event.object)

    async def __aexit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    def first(self, state: str) -> JSON:
        """The first version whose lifecycle state label is ``state``."""
        return next(v for v in self.versions if label(v, LIFECYCLE) == state)


def kruise_pod_ready(pod: JSON) -> JSON:
    return condition(pod, "KruisePodReady")


def not_ready_keys(pod: JSON) -> list[JSON]:
    return list(json.loads(kruise_pod_ready(pod).get("message") or "[]"))


async def test_mark_pod_not_ready_takes_the_pod_out_before_the_pre_delete_hook_waits(
    kube: KubeClient, namespace: str
) -> None:
    """``lifecycle.preDelete.markPodNotReady``: the pod chosen for scale-in is not Ready (its
    ``KruisePodReady`` condition False with the key ``{Lifecycle, preDeleteHook}``) already in the
    first version that reads ``PreparingDelete``, so traffic drains before the hook's owner acts."""
    hook = {"delete-hook": "true"}
    body = new_cloneset(
        "drain",
        2,
        template_labels=hook,
        lifecycle={"preDelete": {"labelsHandler": hook, "markPodNotReady": True}},
    )
    await create(kube, namespace, body)
    await wait_status(kube, namespace, "drain", readyReplicas=2, availableReplicas=2)
    before = await pods(kube, namespace, "drain")
    assert all(kruise_pod_ready(p)["status"] == "True" for p in before), "KruisePodReady starts True"
    victim = before[0]["metadata"]["name"]

    async with PodHistory(kube, namespace, victim) as history:
        await patch_spec(
            kube, namespace, "drain", {"scaleStrategy": {"podsToDelete": [victim]}, "replicas": 1}
        )

        async def preparing() -> JSON | None:
            current = await kube.get(PODS, victim, namespace)
            return current if label(current, LIFECYCLE) == "PreparingDelete" else None

        held = await eventually(preparing, what="PreparingDelete")
        await asyncio.sleep(1)
    entered = history.first("PreparingDelete")
    assert kruise_pod_ready(entered)["status"] == "False" and not ready(entered)
    assert not_ready_keys(entered) == [{"userAgent": "Lifecycle", "key": "preDeleteHook"}]
    held = await kube.get(PODS, victim, namespace)
    assert not ready(held), "the pod stays out of the endpoints while the hook holds it"
    assert condition(held, "Ready")["reason"] == "ReadinessGatesNotReady"

    await patch_pod(kube, namespace, victim, {"metadata": {"labels": {"delete-hook": None}}})
    await wait_gone(kube, namespace, victim)
    await wait_status(kube, namespace, "drain", replicas=1, readyReplicas=1)


async def test_mark_pod_not_ready_holds_an_in_place_update_until_updated(
    kube: KubeClient, namespace: str
) -> None:
    """``lifecycle.inPlaceUpdate.markPodNotReady``: entering PreparingUpdate adds the key
    ``{Lifecycle, preUpdateHook}`` (not Ready before the state changes), the in-place update runs
    once the hook lets go, and entering Updated removes the key: the pod is Ready again."""
    hook = {"update-hook": "true"}
    body = new_cloneset(
        "held",
        1,
        strategy={"type": "InPlaceIfPossible"},
        template_labels=hook,
        lifecycle={"inPlaceUpdate": {"labelsHandler": hook, "markPodNotReady": True}},
    )
    await create(kube, namespace, body)
    await wait_status(kube, namespace, "held", readyReplicas=1, availableReplicas=1)
    (pod,) = await pods(kube, namespace, "held")
    pod_name = pod["metadata"]["name"]

    async def state_is(wanted: str) -> JSON | None:
        current = await kube.get(PODS, pod_name, namespace)
        return current if label(current, LIFECYCLE) == wanted else None

    async with PodHistory(kube, namespace, pod_name) as history:
        await set_image(kube, namespace, "held", NEW_IMAGE)
        await eventually(lambda: state_is("PreparingUpdate"), what="PreparingUpdate")
        await asyncio.sleep(1)
        held = await kube.get(PODS, pod_name, namespace)
        assert image_of(held) == IMAGE and not ready(held)
        assert not_ready_keys(held) == [{"userAgent": "Lifecycle", "key": "preUpdateHook"}]

        await patch_pod(kube, namespace, pod_name, {"metadata": {"labels": {"update-hook": None}}})
        await eventually(lambda: state_is("Updated"), what="Updated after the in-place update")

        async def ready_again() -> JSON | None:
            current = await kube.get(PODS, pod_name, namespace)
            return current if ready(current) else None

        updated = await eventually(ready_again, what="Ready again once Updated")
    entered = history.first("PreparingUpdate")
    assert kruise_pod_ready(entered)["status"] == "False" and not ready(entered)
    assert (kruise_pod_ready(updated)["status"], not_ready_keys(updated)) == ("True", [])
    assert image_of(updated) == NEW_IMAGE
