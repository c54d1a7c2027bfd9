"""CloneSet behaviours upstream documents and unit-tests, end to end on the real control plane.

These complement ``test_upstream_scenarios.py`` (the e2e names): lifecycle hooks, update
strategies, maxSurge, the in-place grace period, history, rollback, scale-in order, volume
claim templates, status and events. Each docstring names the upstream behaviour it mirrors
(``openkruise.io/docs/user-manuals/cloneset`` and ``pkg/controller/cloneset``).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, PODS
from tests.integration.cloneset.helpers import (
    IMAGE,
    INSTANCE_ID,
    LIFECYCLE,
    NEW_IMAGE,
    REVISION,
    PodWatcher,
    annotation,
    create,
    events,
    get,
    image_of,
    label,
    names,
    new_cloneset,
    patch_pod,
    patch_spec,
    pods,
    pvcs,
    ready,
    revisions,
    set_image,
    wait_gone,
    wait_pods,
    wait_status,
)
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")
GRACE = "apps.kruise.io/inplace-update-grace"
STATE = "apps.kruise.io/inplace-update-state"


async def _release_finalizers(kube: KubeClient, namespace: str, name: str) -> None:
    """Delete the CloneSet and drop every pod finalizer so the namespace can go away."""
    await kube.delete(CLONESETS, name, namespace, missing_ok=True)
    for pod in await pods(kube, namespace, name, include_terminating=True):
        await kube.patch(
            PODS, pod["metadata"]["name"], {"metadata": {"finalizers": None}}, namespace, patch_type="merge"
        )


async def test_pre_delete_hook_holds_scale_in_until_the_finalizer_is_removed(
    kube: KubeClient, namespace: str
) -> None:
    """Lifecycle preDelete (finalizersHandler): a pod chosen for scale-in becomes PreparingDelete
    and is deleted only once the hook's finalizer is gone (``deletePods`` / Scale step 4)."""
    hold = "example.com/hold"
    body = new_cloneset("hooked", 3, lifecycle={"preDelete": {"finalizersHandler": [hold]}})
    body["spec"]["template"]["metadata"]["finalizers"] = [hold]
    await create(kube, namespace, body)
    try:
        await wait_status(kube, namespace, "hooked", readyReplicas=3)
        before = await pods(kube, namespace, "hooked")
        assert all(p["metadata"].get("finalizers") == [hold] for p in before)

        await patch_spec(kube, namespace, "hooked", {"replicas": 2})

        async def one_preparing() -> list[dict[str, Any]] | None:
            found = [
                p for p in await pods(kube, namespace, "hooked") if label(p, LIFECYCLE) == "PreparingDelete"
            ]
            return found if len(found) == 1 else None

        (victim,) = await eventually(one_preparing, what="one pod PreparingDelete")
        await asyncio.sleep(1.5)
        current = await pods(kube, namespace, "hooked")
        assert names(current) == names(before), "a hooked pod must not be deleted"
        assert (await get(kube, namespace, "hooked"))["status"]["replicas"] == 3

        await kube.patch(
            PODS,
            victim["metadata"]["name"],
            {"metadata": {"finalizers": None}},
            namespace,
            patch_type="merge",
        )
        await wait_gone(kube, namespace, victim["metadata"]["name"])
        await wait_status(kube, namespace, "hooked", replicas=2, readyReplicas=2)
        assert names(await pods(kube, namespace, "hooked")) == names(before) - {victim["metadata"]["name"]}
    finally:
        await _release_finalizers(kube, namespace, "hooked")


async def test_in_place_update_hook_walks_preparing_update_updating_updated_normal(
    kube: KubeClient, namespace: str
) -> None:
    """Lifecycle inPlaceUpdate (labelsHandler): PreparingUpdate while hooked, then Updating (the
    in-place patch), Updated once done, Normal when the user re-adds the hook label."""
    hook = {"update-hook": "true"}
    body = new_cloneset(
        "inplace",
        1,
        strategy={"type": "InPlaceIfPossible"},
        template_labels=hook,
        lifecycle={"inPlaceUpdate": {"labelsHandler": hook}},
    )
    await create(kube, namespace, body)
    await wait_status(kube, namespace, "inplace", readyReplicas=1)
    (pod,) = await pods(kube, namespace, "inplace")
    pod_name, uid = pod["metadata"]["name"], pod["metadata"]["uid"]
    restarts = pod["status"]["containerStatuses"][0]["restartCount"]

    await set_image(kube, namespace, "inplace", NEW_IMAGE)

    async def state_is(wanted: str) -> dict[str, Any] | None:
        current = await kube.get(PODS, pod_name, namespace)
        return current if label(current, LIFECYCLE) == wanted else None

    held = await eventually(lambda: state_is("PreparingUpdate"), what="PreparingUpdate")
    await asyncio.sleep(1)
    held = await kube.get(PODS, pod_name, namespace)
    assert label(held, LIFECYCLE) == "PreparingUpdate"
    assert image_of(held) == IMAGE, "no in-place update while the hook holds the pod"

    await patch_pod(kube, namespace, pod_name, {"metadata": {"labels": {"update-hook": None}}})
    updated = await eventually(lambda: state_is("Updated"), what="Updated after the in-place update")
    assert updated["metadata"]["uid"] == uid
    assert image_of(updated) == NEW_IMAGE
    assert updated["status"]["containerStatuses"][0]["restartCount"] == restarts + 1
    assert json.loads(annotation(updated, STATE) or "{}")["revision"] == label(updated, REVISION)

    await patch_pod(kube, namespace, pod_name, {"metadata": {"labels": hook}})
    await eventually(lambda: state_is("Normal"), what="Normal once the hook label is back")
    await wait_status(kube, namespace, "inplace", updatedReadyReplicas=1, availableReplicas=1)


async def test_recreate_when_a_non_image_field_changes_under_in_place_if_possible(
    kube: KubeClient, namespace: str
) -> None:
    """InPlaceIfPossible falls back to recreate when more than images change (env here): the
    pod is labelled specified-delete and replaced (``updatePod`` -> ``PatchPodSpecifiedDelete``)."""
    await create(kube, namespace, new_cloneset("env", 2, strategy={"type": "InPlaceIfPossible"}))
    await wait_status(kube, namespace, "env", readyReplicas=2)
    old = await pods(kube, namespace, "env")
    await set_image(kube, namespace, "env", IMAGE, env=[{"name": "MODE", "value": "fast"}])
    cs = await wait_status(kube, namespace, "env", replicas=2, updatedReplicas=2, updatedReadyReplicas=2)
    new = await wait_pods(kube, namespace, "env", 2)
    assert not names(new) & names(old), "every pod was recreated under a new name"
    for pod_name in names(old):
        await wait_gone(kube, namespace, pod_name)
    assert all(p["spec"]["containers"][0]["env"] == [{"name": "MODE", "value": "fast"}] for p in new)
    assert all(label(p, REVISION) == cs["status"]["updateRevision"] for p in new)
    reasons = {e["reason"] for e in await events(kube, namespace, "env")}
    assert "SuccessfulUpdatePodReCreate" in reasons


async def test_recreate_strategy_replaces_pods_for_an_image_change(kube: KubeClient, namespace: str) -> None:
    """updateStrategy.type ReCreate (the default): even an image change recreates every pod."""
    await create(kube, namespace, new_cloneset("rc", 2))
    await wait_status(kube, namespace, "rc", readyReplicas=2)
    old = await pods(kube, namespace, "rc")
    await set_image(kube, namespace, "rc", NEW_IMAGE)
    cs = await wait_status(kube, namespace, "rc", replicas=2, updatedReadyReplicas=2, readyReplicas=2)
    new = await wait_pods(kube, namespace, "rc", 2)
    assert not {p["metadata"]["uid"] for p in new} & {p["metadata"]["uid"] for p in old}
    assert all(image_of(p) == NEW_IMAGE for p in new)
    assert cs["status"]["currentRevision"] == cs["status"]["updateRevision"]


async def test_max_surge_never_exceeds_replicas_plus_surge_and_removes_surge_at_the_end(
    kube: KubeClient, namespace: str
) -> None:
    """maxSurge: a recreate update runs at most replicas+maxSurge pods at once and settles back
    to replicas (``calculateDiffsWithExpectation`` useSurge)."""
    strategy = {"type": "ReCreate", "maxSurge": 1, "maxUnavailable": 0}
    await create(kube, namespace, new_cloneset("surge", 3, strategy=strategy))
    await wait_status(kube, namespace, "surge", readyReplicas=3)
    watcher = PodWatcher(kube, namespace, "surge")
    await watcher.start()
    try:
        await set_image(kube, namespace, "surge", NEW_IMAGE)
        await wait_status(kube, namespace, "surge", timeout=45, replicas=3, updatedReadyReplicas=3)
        final = await wait_pods(kube, namespace, "surge", 3)
    finally:
        await watcher.stop()
    assert watcher.max_running == 4, f"surge used: {watcher.max_at}"
    assert all(image_of(p) == NEW_IMAGE for p in final)


async def test_in_place_grace_period_delays_the_image_patch(kube: KubeClient, namespace: str) -> None:
    """inPlaceUpdateStrategy.gracePeriodSeconds: the pod is marked not ready and its revision
    moves at once, the spec waits in ``apps.kruise.io/inplace-update-grace`` until the period ends."""
    grace = 3
    strategy = {"type": "InPlaceIfPossible", "inPlaceUpdateStrategy": {"gracePeriodSeconds": grace}}
    await create(kube, namespace, new_cloneset("grace", 1, strategy=strategy))
    await wait_status(kube, namespace, "grace", readyReplicas=1)
    (pod,) = await pods(kube, namespace, "grace")
    pod_name = pod["metadata"]["name"]
    await set_image(kube, namespace, "grace", NEW_IMAGE)

    async def in_grace() -> dict[str, Any] | None:
        current = await kube.get(PODS, pod_name, namespace)
        return current if annotation(current, GRACE) else None

    held = await eventually(in_grace, what="grace annotation")
    started = asyncio.get_running_loop().time()
    assert image_of(held) == IMAGE
    assert label(held, LIFECYCLE) == "Updating"
    spec = json.loads(annotation(held, GRACE) or "{}")
    assert spec["containerImages"] == {"nginx": NEW_IMAGE}
    assert any(
        c["type"] == "InPlaceUpdateReady" and c["status"] == "False" for c in held["status"]["conditions"]
    )

    async def patched() -> dict[str, Any] | None:
        current = await kube.get(PODS, pod_name, namespace)
        if image_of(current) == NEW_IMAGE:
            return current
        assert annotation(current, GRACE), "the grace annotation stays until the image is patched"
        return None

    done = await eventually(patched, interval=0.1, what="image patched after the grace period")
    waited = asyncio.get_running_loop().time() - started
    assert waited >= grace - 1.5, f"image patched after {waited:.1f}s, grace is {grace}s"
    assert annotation(done, GRACE) is None
    await wait_status(kube, namespace, "grace", updatedReadyReplicas=1, readyReplicas=1)


async def test_revision_history_limit_truncates_old_revisions(kube: KubeClient, namespace: str) -> None:
    """revisionHistoryLimit: non-live ControllerRevisions beyond the limit are deleted, oldest first
    (``truncateHistory``)."""
    body = new_cloneset("hist", 1, strategy={"type": "InPlaceIfPossible"}, revisionHistoryLimit=1)
    await create(kube, namespace, body)
    await wait_status(kube, namespace, "hist", readyReplicas=1)
    seen: list[str] = []
    for tag in ("2", "3", "4"):
        await set_image(kube, namespace, "hist", f"registry.example.com/nginx:{tag}")
        cs = await wait_status(kube, namespace, "hist", updatedReadyReplicas=1, readyReplicas=1)
        seen.append(cs["status"]["updateRevision"])

    async def truncated() -> list[dict[str, Any]] | None:
        found = await revisions(kube, namespace, "hist")
        return found if len(found) == 2 else None

    kept = await eventually(truncated, what="one live revision plus one in history")
    assert [r["metadata"]["name"] for r in kept] == seen[-2:]


async def test_rollback_reuses_the_old_revision_and_bumps_its_number(
    kube: KubeClient, namespace: str
) -> None:
    """Rolling back to an earlier template reuses its ControllerRevision with a new ``.revision``
    (``getActiveRevisions``: an equal older revision is bumped, not recreated)."""
    await create(kube, namespace, new_cloneset("rb", 1, strategy={"type": "InPlaceIfPossible"}))
    first = (await wait_status(kube, namespace, "rb", readyReplicas=1))["status"]["updateRevision"]
    await set_image(kube, namespace, "rb", NEW_IMAGE)
    second = (await wait_status(kube, namespace, "rb", updatedReadyReplicas=1))["status"]["updateRevision"]
    assert second != first
    await set_image(kube, namespace, "rb", IMAGE)
    cs = await wait_status(kube, namespace, "rb", updatedReadyReplicas=1, updateRevision=first)
    found = {r["metadata"]["name"]: r for r in await revisions(kube, namespace, "rb")}
    assert set(found) == {first, second}
    assert found[first]["revision"] == 3 and found[second]["revision"] == 2
    assert cs["status"]["currentRevision"] == first
    (pod,) = await pods(kube, namespace, "rb")
    assert image_of(pod) == IMAGE and label(pod, REVISION) == first


async def test_scale_in_deletes_not_ready_pods_then_lower_deletion_cost_first(
    kube: KubeClient, namespace: str
) -> None:
    """Scale-in order (``ActivePodsWithRanks``): not-ready pods go first, then the lowest
    ``controller.kubernetes.io/pod-deletion-cost``."""
    gate = "example.com/ready"
    body = new_cloneset("order", 4)
    body["spec"]["template"]["spec"]["readinessGates"] = [{"conditionType": gate}]
    await create(kube, namespace, body)
    await wait_status(kube, namespace, "order", replicas=4)
    found = sorted(names(await wait_pods(kube, namespace, "order", 4, all_ready=False)))
    not_ready, cheap, costly, plain = found  # the first one never gets its gate: it stays not ready
    for pod_name in (cheap, costly, plain):
        condition = {"type": gate, "status": "True", "lastTransitionTime": "2024-01-01T00:00:00Z"}
        await kube.patch(
            PODS,
            pod_name,
            {"status": {"conditions": [condition]}},
            namespace,
            subresource="status",
            patch_type="strategic",
        )
    cost = "controller.kubernetes.io/pod-deletion-cost"
    await patch_pod(kube, namespace, cheap, {"metadata": {"annotations": {cost: "-50"}}})
    await patch_pod(kube, namespace, costly, {"metadata": {"annotations": {cost: "100"}}})
    await wait_status(kube, namespace, "order", readyReplicas=3)

    await patch_spec(kube, namespace, "order", {"replicas": 2})
    await wait_status(kube, namespace, "order", replicas=2)
    left = names(await pods(kube, namespace, "order"))
    assert not_ready not in left and cheap not in left
    assert left == {costly, plain}


async def test_volume_claim_templates_named_and_reused(kube: KubeClient, namespace: str) -> None:
    """volumeClaimTemplates: PVC ``<vct>-<cloneset>-<instance-id>``; a pod deleted from outside
    comes back with its instance id and PVC; scale-in deletes the PVC with its pod."""
    vct = {
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    await create(kube, namespace, new_cloneset("vol", 2, volumeClaimTemplates=[vct]))
    await wait_status(kube, namespace, "vol", readyReplicas=2)
    first = await pods(kube, namespace, "vol")
    for pod in first:
        instance = label(pod, INSTANCE_ID)
        assert pod["metadata"]["name"] == f"vol-{instance}"
        volume = next(v for v in pod["spec"]["volumes"] if v["name"] == "data")
        assert volume["persistentVolumeClaim"]["claimName"] == f"data-vol-{instance}"
    claims = await pvcs(kube, namespace)
    assert names(claims) == {f"data-vol-{label(p, INSTANCE_ID)}" for p in first}

    victim = first[0]
    await kube.delete(PODS, victim["metadata"]["name"], namespace)

    async def replaced() -> dict[str, Any] | None:
        now = await kube.get_or_none(PODS, victim["metadata"]["name"], namespace)
        uid_changed = now is not None and now["metadata"]["uid"] != victim["metadata"]["uid"]
        return now if uid_changed and ready(now) else None

    again = await eventually(replaced, what="the deleted pod recreated with its instance id")
    assert label(again, INSTANCE_ID) == label(victim, INSTANCE_ID)
    assert names(await pvcs(kube, namespace)) == names(claims)

    await patch_spec(kube, namespace, "vol", {"replicas": 1})
    await wait_status(kube, namespace, "vol", replicas=1)
    (kept,) = await wait_pods(kube, namespace, "vol", 1)

    async def claim_of_kept_only() -> bool:
        return names(await pvcs(kube, namespace)) == {f"data-vol-{label(kept, INSTANCE_ID)}"}

    await eventually(claim_of_kept_only, what="PVC deleted with its scaled-in pod")


async def test_status_fields_and_events(kube: KubeClient, namespace: str) -> None:
    """Status (``cloneset_status.go``) and events (``SuccessfulCreate`` / ``SuccessfulDelete``)."""
    await create(kube, namespace, new_cloneset("st", 2, strategy={"partition": 1}))
    cs = await wait_status(kube, namespace, "st", readyReplicas=2, availableReplicas=2)
    st = cs["status"]
    assert st["replicas"] == 2 and st["updatedReplicas"] == 2
    assert st["updatedReadyReplicas"] == 2 and st["updatedAvailableReplicas"] == 2
    assert st["expectedUpdatedReplicas"] == 1  # replicas - partition
    assert st["currentRevision"] == st["updateRevision"]
    assert st["labelSelector"] == "app=st"
    assert st["collisionCount"] == 0
    assert st["observedGeneration"] == cs["metadata"]["generation"]
    created = names(await pods(kube, namespace, "st"))

    await patch_spec(kube, namespace, "st", {"replicas": 1})
    await wait_status(kube, namespace, "st", replicas=1)
    (left,) = await wait_pods(kube, namespace, "st", 1)
    (deleted,) = created - {left["metadata"]["name"]}

    async def recorded() -> list[dict[str, Any]] | None:
        found = await events(kube, namespace, "st")
        messages = {(e["reason"], e["message"]) for e in found}
        wanted = {("SuccessfulCreate", f"succeed to create pod {n}") for n in created}
        wanted.add(("SuccessfulDelete", f"succeed to delete pod {deleted}"))
        return found if wanted <= messages else None

    found = await eventually(recorded, what="SuccessfulCreate and SuccessfulDelete events")
    assert all(e["type"] == "Normal" and e["source"]["component"] == "cloneset-controller" for e in found)
