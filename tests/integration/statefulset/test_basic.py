"""Upstream e2e ``StatefulSet v1beta1 > Basic StatefulSet functionality [StatefulSetBasic]``.

``test/e2e/apps/v1beta1/statefulset.go`` of openkruise/kruise; each test's docstring is the
upstream ``It``. KWOK plays the kubelets, kube-scheduler binds, kube-controller-manager's PV
binder provisions claims. Upstream's probes are played with pod conditions: a template readiness
gate ``example.com/continue`` keeps new pods unready until the test sets it
(``PauseNewPods``/``ResumeNextPod``), and ``ContainersReady``/``Ready`` False hold a running pod
unready (``BreakHTTPProbe``/``RestoreHTTPProbe``). In-place grace periods are 2 s instead of
upstream's 10 s.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import PODS, PVCS, STATEFULSETS
from tests.integration.statefulset.helpers import (
    IMAGE,
    NEW_IMAGE,
    create,
    get,
    image_of,
    new_statefulset,
    ordinals,
    patch_spec,
    pods,
    ready,
    revision_of,
    set_image,
    wait_running_and_ready,
    wait_status,
)
from tests.support.podready import hold_unready, let_ready, set_gate
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")

PAUSE_GATE = "example.com/continue"
JSON = dict[str, Any]


def paused(body: JSON) -> JSON:
    """``PauseNewPods``: pods stay unready until the test resumes them."""
    body["spec"]["template"]["spec"].setdefault("readinessGates", []).append({"conditionType": PAUSE_GATE})
    return body


async def resume(kube: KubeClient, namespace: str, pod: str) -> None:
    await set_gate(kube, namespace, pod, PAUSE_GATE)


async def break_all(kube: KubeClient, namespace: str, name: str) -> None:
    for pod in await pods(kube, namespace, name):
        await hold_unready(kube, namespace, pod["metadata"]["name"])


async def restore_all(kube: KubeClient, namespace: str, name: str) -> None:
    for pod in await pods(kube, namespace, name):
        await let_ready(kube, namespace, pod["metadata"]["name"])


async def delete_pod(kube: KubeClient, namespace: str, pod: str) -> None:
    await kube.delete(PODS, pod, namespace, missing_ok=True)


async def wait_running(kube: KubeClient, namespace: str, name: str, count: int) -> list[JSON]:
    async def probe() -> list[JSON] | None:
        found = await pods(kube, namespace, name)
        ok = len(found) == count and all(p.get("status", {}).get("phase") == "Running" for p in found)
        return found if ok else None

    return await eventually(probe, timeout=60, what=f"{count} running pods")


async def revisions_now(kube: KubeClient, namespace: str, name: str) -> tuple[str, str]:
    status = (await wait_status(kube, namespace, name))["status"]
    return str(status["currentRevision"]), str(status["updateRevision"])


async def wait_partitioned(kube: KubeClient, namespace: str, name: str, partition: int) -> list[JSON]:
    """``WaitForPartitionedRollingUpdate``: pods >= partition at the update revision, the others not."""

    async def probe() -> list[JSON] | None:
        sts = await get(kube, namespace, name)
        update = sts.get("status", {}).get("updateRevision")
        found = sorted(await pods(kube, namespace, name), key=lambda p: p["metadata"]["name"])
        if len(found) != sts["spec"]["replicas"] or not all(ready(p) for p in found):
            return None
        for pod in found:
            at_update = revision_of(pod) == update
            if at_update != (int(pod["metadata"]["name"].rsplit("-", 1)[1]) >= partition):
                return None
        return found

    return await eventually(probe, timeout=90, what=f"partition {partition}")


async def test_should_provide_basic_identity(kube: KubeClient, namespace: str) -> None:
    """should provide basic identity"""
    await create(kube, namespace, paused(new_statefulset("ss", 3, claims=("datadir",))))
    for index in range(3):  # Saturate: each pod in turn, the next created only once it is ready
        await eventually(lambda i=index: kube.get_or_none(PODS, f"ss-{i}", namespace), timeout=60)
        await resume(kube, namespace, f"ss-{index}")
    first = {p["metadata"]["name"]: p for p in await wait_running_and_ready(kube, namespace, "ss", 3)}
    for name, pod in first.items():
        assert pod["spec"]["hostname"] == name and pod["spec"]["subdomain"] == "test"
        volume = next(v for v in pod["spec"]["volumes"] if v["name"] == "datadir")
        assert volume["persistentVolumeClaim"]["claimName"] == f"datadir-{name}"
    claims = {c["metadata"]["name"]: c for c in (await kube.list(PVCS, namespace))["items"]}
    assert set(claims) == {"datadir-ss-0", "datadir-ss-1", "datadir-ss-2"}
    for pod in first:  # Restart: every pod goes and comes back, in order, with its identity and claim
        await delete_pod(kube, namespace, pod)
    for index in range(3):  # the paused pods resume as each comes back (upstream's flag file persists)

        async def fresh(i: int = index) -> bool:
            pod = await kube.get_or_none(PODS, f"ss-{i}", namespace)
            return pod is not None and pod["metadata"]["uid"] != first[f"ss-{i}"]["metadata"]["uid"]

        await eventually(fresh, timeout=60, what=f"ss-{index} recreated")
        await resume(kube, namespace, f"ss-{index}")
    again = await wait_running_and_ready(kube, namespace, "ss", 3, timeout=90)
    for pod in again:
        volume = next(v for v in pod["spec"]["volumes"] if v["name"] == "datadir")
        assert volume["persistentVolumeClaim"]["claimName"] == f"datadir-{pod['metadata']['name']}"
    remaining = {c["metadata"]["name"]: c for c in (await kube.list(PVCS, namespace))["items"]}
    assert {n: c["metadata"]["uid"] for n, c in remaining.items()} == {
        n: c["metadata"]["uid"] for n, c in claims.items()
    }


def _controller(pod: JSON) -> JSON | None:
    return next((r for r in pod["metadata"].get("ownerReferences") or [] if r.get("controller")), None)


async def test_should_adopt_matching_orphans_and_release_non_matching_pods(
    kube: KubeClient, namespace: str
) -> None:
    """should adopt matching orphans and release non-matching pods"""
    sts = await create(kube, namespace, new_statefulset("ss", 1))
    (pod,) = await wait_running_and_ready(kube, namespace, "ss", 1)
    ref = _controller(pod)
    assert ref is not None and (ref["kind"], ref["name"], ref["uid"]) == (
        "StatefulSet",
        "ss",
        sts["metadata"]["uid"],
    )

    async def owner(want: bool) -> bool:
        current = await kube.get(PODS, "ss-0", namespace)
        found = _controller(current)
        if want:
            return found is not None and found["uid"] == sts["metadata"]["uid"]
        return found is None

    await kube.patch(PODS, "ss-0", {"metadata": {"ownerReferences": None}}, namespace, patch_type="merge")
    await eventually(lambda: owner(True), timeout=30, what="re-adopted")
    labels = (await kube.get(PODS, "ss-0", namespace))["metadata"]["labels"]
    await kube.patch(PODS, "ss-0", {"metadata": {"labels": None}}, namespace, patch_type="merge")
    await eventually(lambda: owner(False), timeout=30, what="released")
    await kube.patch(PODS, "ss-0", {"metadata": {"labels": labels}}, namespace, patch_type="merge")
    await eventually(lambda: owner(True), timeout=30, what="re-adopted")


async def test_should_not_deadlock_when_a_pods_predecessor_fails(kube: KubeClient, namespace: str) -> None:
    """should not deadlock when a pod's predecessor fails"""
    await create(kube, namespace, paused(new_statefulset("ss", 2)))
    await wait_running(kube, namespace, "ss", 1)
    await resume(kube, namespace, "ss-0")
    await wait_running(kube, namespace, "ss", 2)  # ss-1 runs, unready
    old = (await kube.get(PODS, "ss-0", namespace))["metadata"]["uid"]
    await delete_pod(kube, namespace, "ss-0")

    async def recreated() -> bool:
        pod = await kube.get_or_none(PODS, "ss-0", namespace)
        return (
            pod is not None
            and pod["metadata"]["uid"] != old
            and pod.get("status", {}).get("phase") == "Running"
        )

    await eventually(recreated, timeout=60, what="ss-0 recreated while ss-1 is unhealthy")
    await resume(kube, namespace, "ss-0")
    await resume(kube, namespace, "ss-1")
    await wait_running_and_ready(kube, namespace, "ss", 2)


async def _rollback(kube: KubeClient, namespace: str, body: JSON) -> None:
    """``rollbackTest``: an update waits for an unready pod, then rolls in reverse ordinal order;
    reverting the template is a rollback to the prior revision (no new revision)."""
    name = body["metadata"]["name"]
    await create(kube, namespace, body)
    await wait_running_and_ready(kube, namespace, name, 3, timeout=90)
    current, update = await revisions_now(kube, namespace, name)
    assert current == update
    await hold_unready(kube, namespace, f"{name}-1")
    await set_image(kube, namespace, name, NEW_IMAGE)
    status = (await wait_status(kube, namespace, name))["status"]
    new_revision = status["updateRevision"]
    assert status["currentRevision"] != new_revision
    await asyncio.sleep(2)  # maxUnavailable 1 is taken by the unready pod: nothing moves yet
    assert all(image_of(p) == IMAGE for p in await pods(kube, namespace, name))
    await let_ready(kube, namespace, f"{name}-1")
    done = await wait_status(
        kube, namespace, name, currentRevision=new_revision, updatedReplicas=3, timeout=120
    )
    assert done["status"]["readyReplicas"] == 3
    assert {image_of(p) for p in await pods(kube, namespace, name)} == {NEW_IMAGE}

    await hold_unready(kube, namespace, f"{name}-1")
    await set_image(kube, namespace, name, IMAGE)
    status = (await wait_status(kube, namespace, name))["status"]
    assert status["updateRevision"] == current and status["currentRevision"] == new_revision
    await let_ready(kube, namespace, f"{name}-1")
    await wait_status(
        kube, namespace, name, currentRevision=current, updatedReplicas=3, readyReplicas=3, timeout=120
    )
    final = await pods(kube, namespace, name)
    assert {image_of(p) for p in final} == {IMAGE} and {revision_of(p) for p in final} == {current}


async def test_should_perform_rolling_updates_and_roll_backs_of_template_modifications_with_pvcs(
    kube: KubeClient, namespace: str
) -> None:
    """should perform rolling updates and roll backs of template modifications with PVCs"""
    await _rollback(kube, namespace, new_statefulset("ss", 3, claims=("datadir",)))


async def test_should_perform_rolling_updates_and_roll_backs_of_template_modifications(
    kube: KubeClient, namespace: str
) -> None:
    """should perform rolling updates and roll backs of template modifications"""
    await _rollback(kube, namespace, new_statefulset("ss2", 3))


async def test_should_perform_canary_updates_and_phased_rolling_updates_of_template_modifications(
    kube: KubeClient, namespace: str
) -> None:
    """should perform canary updates and phased rolling updates of template modifications"""
    await create(kube, namespace, new_statefulset("ss2", 3, rolling={"partition": 3}))
    await wait_running_and_ready(kube, namespace, "ss2", 3)
    current, _ = await revisions_now(kube, namespace, "ss2")
    await set_image(kube, namespace, "ss2", NEW_IMAGE)
    _, update = await revisions_now(kube, namespace, "ss2")
    assert update != current
    await asyncio.sleep(1)
    assert {revision_of(p) for p in await pods(kube, namespace, "ss2")} == {current}
    rolling = {"updateStrategy": {"rollingUpdate": {"partition": 2}}}
    await patch_spec(kube, namespace, "ss2", rolling)
    await wait_partitioned(kube, namespace, "ss2", 2)
    for pod in ("ss2-0", "ss2-2"):  # deleted pods come back at the revision the partition says
        await delete_pod(kube, namespace, pod)
    await asyncio.sleep(1)
    found = await wait_partitioned(kube, namespace, "ss2", 2)
    assert [image_of(p) for p in found] == [IMAGE, IMAGE, NEW_IMAGE]
    for partition in (1, 0):
        await patch_spec(
            kube, namespace, "ss2", {"updateStrategy": {"rollingUpdate": {"partition": partition}}}
        )
        await wait_partitioned(kube, namespace, "ss2", partition)
    await wait_status(kube, namespace, "ss2", currentRevision=update)


async def test_should_implement_legacy_replacement_when_the_update_strategy_is_on_delete(
    kube: KubeClient, namespace: str
) -> None:
    """should implement legacy replacement when the update strategy is OnDelete"""
    body = new_statefulset("ss2", 3)
    body["spec"]["updateStrategy"] = {"type": "OnDelete"}
    await create(kube, namespace, body)
    await wait_running_and_ready(kube, namespace, "ss2", 3)
    current, _ = await revisions_now(kube, namespace, "ss2")
    await set_image(kube, namespace, "ss2", NEW_IMAGE)
    _, update = await revisions_now(kube, namespace, "ss2")
    assert update != current
    await asyncio.sleep(2)
    assert {revision_of(p) for p in await pods(kube, namespace, "ss2")} == {current}  # nothing replaced
    for index in range(3):
        await delete_pod(kube, namespace, f"ss2-{index}")

    async def replaced() -> list[JSON] | None:
        found = await pods(kube, namespace, "ss2")
        ok = len(found) == 3 and all(ready(p) and revision_of(p) == update for p in found)
        return found if ok else None

    found = await eventually(replaced, timeout=90, what="pods recreated at the new revision")
    assert {image_of(p) for p in found} == {NEW_IMAGE}


async def test_should_in_place_update_pods_when_the_pod_update_strategy_is_in_place(
    kube: KubeClient, namespace: str
) -> None:
    """should in-place update pods when the pod update strategy is InPlace"""
    rolling = {"inPlaceUpdateStrategy": {"gracePeriodSeconds": 2}}
    await create(kube, namespace, new_statefulset("ss", 3, in_place=True, rolling=rolling))
    before = {p["metadata"]["name"]: p for p in await wait_running_and_ready(kube, namespace, "ss", 3)}
    current, _ = await revisions_now(kube, namespace, "ss")
    await patch_spec(kube, namespace, "ss", {"updateStrategy": {"rollingUpdate": {"partition": 3}}})
    await set_image(kube, namespace, "ss", NEW_IMAGE)
    _, update = await revisions_now(kube, namespace, "ss")
    assert update != current
    await patch_spec(kube, namespace, "ss", {"updateStrategy": {"rollingUpdate": {"partition": 0}}})
    await wait_status(
        kube, namespace, "ss", updatedReplicas=3, readyReplicas=3, currentRevision=update, timeout=120
    )
    for pod in await pods(kube, namespace, "ss"):
        name = pod["metadata"]["name"]
        assert pod["metadata"]["uid"] == before[name]["metadata"]["uid"]  # updated in place
        assert image_of(pod) == NEW_IMAGE and revision_of(pod) == update
        assert pod["status"]["containerStatuses"][0]["restartCount"] == 1


async def test_should_recreate_update_when_pod_qos_changed(kube: KubeClient, namespace: str) -> None:
    """should recreate update when pod qos changed"""
    rolling = {"inPlaceUpdateStrategy": {"gracePeriodSeconds": 2}, "partition": 3}
    await create(kube, namespace, new_statefulset("ss", 3, in_place=True, rolling=rolling))
    await wait_running_and_ready(kube, namespace, "ss", 3)
    started = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
    await asyncio.sleep(1)
    quantities = {"cpu": "100m", "memory": "64Mi"}
    resources = {"requests": quantities, "limits": quantities}
    patch = [{"op": "add", "path": "/spec/template/spec/containers/0/resources", "value": resources}]
    await kube.patch(STATEFULSETS, "ss", patch, namespace, patch_type="json")
    _, update = await revisions_now(kube, namespace, "ss")
    await patch_spec(kube, namespace, "ss", {"updateStrategy": {"rollingUpdate": {"partition": 0}}})
    await wait_status(
        kube, namespace, "ss", updatedReplicas=3, readyReplicas=3, currentRevision=update, timeout=120
    )
    for pod in await pods(kube, namespace, "ss"):
        created = datetime.datetime.fromisoformat(pod["metadata"]["creationTimestamp"].replace("Z", "+00:00"))
        assert created >= started and revision_of(pod) == update
        assert pod["status"]["containerStatuses"][0].get("restartCount", 0) == 0


@contextlib.asynccontextmanager
async def pod_events(kube: KubeClient, namespace: str, name: str) -> AsyncIterator[list[tuple[str, str]]]:
    """(event type, pod name) of every pod event of the set while the block runs."""
    seen: list[tuple[str, str]] = []

    async def watch() -> None:
        async for event in kube.watch(PODS, namespace, label_selector=f"app={name}"):
            if event.type in ("ADDED", "DELETED"):
                seen.append((event.type, event.object["metadata"]["name"]))

    task = asyncio.create_task(watch())
    await asyncio.sleep(0.3)
    try:
        yield seen
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def test_scaling_should_happen_in_predictable_order_and_halt_if_any_stateful_pod_is_unhealthy(
    kube: KubeClient, namespace: str
) -> None:
    """Scaling should happen in predictable order and halt if any stateful pod is unhealthy"""
    async with pod_events(kube, namespace, "ss") as seen:
        await create(kube, namespace, new_statefulset("ss", 1))
        await wait_running_and_ready(kube, namespace, "ss", 1)
        await break_all(kube, namespace, "ss")
        await wait_status(kube, namespace, "ss", readyReplicas=0)
        await patch_spec(kube, namespace, "ss", {"replicas": 3})
        await asyncio.sleep(3)
        assert len(await pods(kube, namespace, "ss")) == 1  # halted
        await restore_all(kube, namespace, "ss")
        await wait_running_and_ready(kube, namespace, "ss", 3)
        assert [n for t, n in seen if t == "ADDED"] == ["ss-0", "ss-1", "ss-2"]

        await break_all(kube, namespace, "ss")
        await wait_status(kube, namespace, "ss", readyReplicas=0)
        await patch_spec(kube, namespace, "ss", {"replicas": 0})
        await asyncio.sleep(3)
        assert len(await pods(kube, namespace, "ss")) == 3  # halted
        await restore_all(kube, namespace, "ss")
        await wait_status(kube, namespace, "ss", replicas=0, timeout=90)
        await eventually(lambda: _gone(kube, namespace), timeout=60, what="pods deleted")
        assert [n for t, n in seen if t == "DELETED"] == ["ss-2", "ss-1", "ss-0"]


async def _gone(kube: KubeClient, namespace: str) -> bool:
    return not await pods(kube, namespace, "ss", include_terminating=True)


async def test_burst_scaling_should_run_to_completion_even_with_unhealthy_pods(
    kube: KubeClient, namespace: str
) -> None:
    """Burst scaling should run to completion even with unhealthy pods"""
    await create(kube, namespace, new_statefulset("ss", 1, parallel=True))
    await wait_running_and_ready(kube, namespace, "ss", 1)
    await break_all(kube, namespace, "ss")
    await wait_status(kube, namespace, "ss", readyReplicas=0)
    await patch_spec(kube, namespace, "ss", {"replicas": 3})
    await eventually(lambda: _count(kube, namespace, 3), timeout=60, what="3 pods despite an unhealthy one")
    await restore_all(kube, namespace, "ss")
    await wait_running_and_ready(kube, namespace, "ss", 3)
    await break_all(kube, namespace, "ss")
    await wait_status(kube, namespace, "ss", readyReplicas=0)
    await patch_spec(kube, namespace, "ss", {"replicas": 0})
    await eventually(lambda: _count(kube, namespace, 0), timeout=60, what="all pods deleted")
    await wait_status(kube, namespace, "ss", replicas=0)


async def _count(kube: KubeClient, namespace: str, count: int) -> bool:
    return len(await pods(kube, namespace, "ss")) == count


async def test_should_recreate_evicted_statefulset(kube: KubeClient, namespace: str) -> None:
    """Should recreate evicted statefulset"""
    await create(kube, namespace, new_statefulset("ss", 1))
    (pod,) = await wait_running_and_ready(kube, namespace, "ss", 1)
    status = {"status": {"phase": "Failed", "reason": "Evicted", "message": "The node was low on memory."}}
    await kube.patch(PODS, "ss-0", status, namespace, patch_type="merge", subresource="status")

    async def recreated() -> bool:
        now = await kube.get_or_none(PODS, "ss-0", namespace)
        return (
            now is not None
            and now["metadata"]["uid"] != pod["metadata"]["uid"]
            and now.get("status", {}).get("phase") == "Running"
        )

    await eventually(recreated, timeout=60, what="evicted pod recreated")


SCALE = "scale"


async def test_should_have_a_working_scale_subresource(kube: KubeClient, namespace: str) -> None:
    """should have a working scale subresource"""
    await create(kube, namespace, new_statefulset("ss", 1))
    await wait_running_and_ready(kube, namespace, "ss", 1)
    await wait_status(kube, namespace, "ss", replicas=1)
    scale = await kube.get(STATEFULSETS, "ss", namespace, subresource=SCALE)
    assert (scale["spec"]["replicas"], scale["status"]["replicas"]) == (1, 1)
    assert scale["status"]["selector"] == "app=ss"
    scale["spec"]["replicas"] = 2
    scale["metadata"].pop("resourceVersion", None)
    result = await kube.replace(STATEFULSETS, scale, subresource=SCALE)
    assert result["spec"]["replicas"] == 2
    assert (await get(kube, namespace, "ss"))["spec"]["replicas"] == 2
    await wait_running_and_ready(kube, namespace, "ss", 2)


async def test_should_can_update_pods_when_the_statefulset_scale_strategy_is_set(
    kube: KubeClient, namespace: str
) -> None:
    """Should can update pods when the statefulset scale strategy is set"""
    body = new_statefulset(
        "ss",
        3,
        parallel=True,
        in_place=True,
        rolling={"minReadySeconds": 3},
        scaleStrategy={"maxUnavailable": 2},
    )
    await create(kube, namespace, body)
    await wait_running_and_ready(kube, namespace, "ss", 3)
    await wait_status(kube, namespace, "ss", availableReplicas=3)  # minReadySeconds passed
    await patch_spec(kube, namespace, "ss", {"replicas": 7})  # upstream: 10
    await eventually(lambda: _count(kube, namespace, 5), timeout=30, what="two new pods")
    for _ in range(4):  # maxUnavailable 2: no more until those two are available (minReadySeconds 3)
        assert len(await pods(kube, namespace, "ss")) == 5
        await asyncio.sleep(0.4)
    await wait_running_and_ready(kube, namespace, "ss", 7, timeout=120)
    # every pod unhealthy, then a template change still reaches all of them
    limits = {
        "scaleStrategy": {"maxUnavailable": "100%"},
        "updateStrategy": {"rollingUpdate": {"maxUnavailable": "100%"}},
    }
    await patch_spec(kube, namespace, "ss", limits)
    await break_all(kube, namespace, "ss")
    await wait_status(kube, namespace, "ss", readyReplicas=0)
    patch = [{"op": "add", "path": "/spec/template/metadata/labels/test-update", "value": "yes"}]
    await kube.patch(STATEFULSETS, "ss", patch, namespace, patch_type="json")
    _, update = await revisions_now(kube, namespace, "ss")

    async def all_updated() -> bool:
        found = await pods(kube, namespace, "ss")
        return len(found) == 7 and all(revision_of(p) == update for p in found)

    await eventually(all_updated, timeout=120, what="all pods updated while unhealthy")
    await restore_all(kube, namespace, "ss")
    found = await wait_running_and_ready(kube, namespace, "ss", 7, timeout=120)
    assert all(p["metadata"]["labels"]["test-update"] == "yes" for p in found)


async def test_should_perform_rolling_updates_with_specified_deleted(
    kube: KubeClient, namespace: str
) -> None:
    """should perform rolling updates with specified-deleted"""
    await create(kube, namespace, new_statefulset("ss2", 4))
    await wait_running_and_ready(kube, namespace, "ss2", 4)
    current, _ = await revisions_now(kube, namespace, "ss2")

    async def specified_delete(index: int) -> None:
        name = f"ss2-{index}"
        old = (await kube.get(PODS, name, namespace))["metadata"]["uid"]
        label = {"metadata": {"labels": {"apps.kruise.io/specified-delete": "true"}}}
        await kube.patch(PODS, name, label, namespace, patch_type="strategic")

        async def replaced() -> bool:
            pod = await kube.get_or_none(PODS, name, namespace)
            return pod is not None and pod["metadata"]["uid"] != old and ready(pod)

        await eventually(replaced, timeout=60, what=f"{name} recreated")

    await specified_delete(1)
    await patch_spec(kube, namespace, "ss2", {"updateStrategy": {"rollingUpdate": {"partition": 2}}})
    await set_image(kube, namespace, "ss2", NEW_IMAGE)
    await specified_delete(2)
    _, update = await revisions_now(kube, namespace, "ss2")
    assert update != current
    await specified_delete(1)  # below the partition: comes back at the current revision
    found = await wait_partitioned(kube, namespace, "ss2", 2)
    assert [revision_of(p) for p in found] == [current, current, update, update]
    assert ordinals(found) == [0, 1, 2, 3]
