"""Upstream's "DaemonSet canary rollout" group (``KR:test/e2e/rollout_test.go``) with Kruise
Rollouts' ``fluentd-elasticsearch`` Advanced DaemonSet example on three KWOK nodes of the test's
own (:mod:`tests.integration.daemonset.fluentd`). The Rollouts are upstream's
``rollout_canary_daemonset_base.yaml`` (steps 1, 100%) and ``..._interrupt.yaml`` (1, 2, 100%),
as ``rollouts.kruise.io/v1beta1``:

- V1 -> V2 (1, 100%): the image change is held at partition 32767; step 1 updates exactly one
  node's pod (partition 2) and pauses; approved, every pod runs V2, the partition is cleared, the
  Rollout succeeds;
- V1 -> V2 (1, 2) and continuous release V3: while V2 is paused at step 2 (two nodes on V2) the
  template changes to V3; the hold holds it again, the Rollout resets (the old BatchRelease
  removed, the canary status dropped) and starts over at step 1 on V3 (one node on V3, partition
  2), then releases V3 step by step to every node;
- V1 -> V2 (1, 100%), but delete the Rollout at step 1 (with ``Foreground`` propagation, as
  upstream's e2e: the garbage collector deletes the BatchRelease first): the deletion finalises the
  release as upstream's ``RolloutDeleting``: partition released, pause lifted, the control and
  in-progressing annotations, the stable-revision record and the workload-type label removed, the
  BatchRelease and then the Rollout's finalizer gone, and the DaemonSet updates every node to V2
  by itself (upstream's e2e writes partition 0 itself at this point; nothing needs to here);
- rolled back mid-release (V2 -> V1 at step 1): the Rollout sees a rollback (the update revision is
  the stable one again) and finalises at once: every pod back on V1, the partition cleared.
"""

from __future__ import annotations

import pytest

from kruise.core.kube import KubeClient
from kruise.rollouts.resources import BATCH_RELEASES
from tests.integration.daemonset import fluentd as f
from tests.integration.daemonset.helpers import check_status, wait_on_nodes
from tests.integration.rollouts import helpers as h
from tests.support.nodes import NodePool
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")
NONE: tuple[str | None, str | None] = (None, None)
WORKLOAD_TYPE, STABLE_REVISION = "rollouts.kruise.io/workload-type", "rollouts.kruise.io/stable-revision"
CONTROL_ANNOTATIONS = ("rollouts.kruise.io/in-progressing", "batchrelease.rollouts.kruise.io/control-info")


async def assert_succeeded(kube: KubeClient, namespace: str, names: list[str], image: str) -> None:
    """The release finished: Progressing Completed (False), Succeeded True, every node on ``image``,
    the DaemonSet handed back (no partition, no pause, no control annotations), the Rollout's
    canary status at the workload's generation."""
    ro = await h.wait_completed(kube, namespace, timeout=120)
    assert h.condition(ro, "Progressing")["status"] == "False"
    assert h.condition(ro, "Succeeded")["status"] == "True"
    await wait_on_nodes(kube, namespace, f.NAME, names, selector=f.SELECTOR, image=image, timeout=90)
    ds = await check_status(kube, namespace, f.NAME, len(names))
    assert f.rolling(ds).get("partition") in (None, 0) and not f.rolling(ds).get("paused")
    assert not set(CONTROL_ANNOTATIONS) & set(ds["metadata"].get("annotations") or {})
    assert STABLE_REVISION not in (ds["metadata"].get("labels") or {})

    async def generation_observed() -> bool:
        ro = await h.get_rollout(kube, namespace)
        return bool(h.canary_status(ro).get("observedWorkloadGeneration") == ds["metadata"]["generation"])

    await eventually(generation_observed, timeout=30, what="Rollout observed the DaemonSet's generation")


async def wait_labels(
    kube: KubeClient, namespace: str, want: dict[str, tuple[str | None, str | None]]
) -> None:
    """Every node's pod carries the (rollout-id, batch-id) labels ``want`` gives it."""

    async def probe() -> bool:
        return await f.batch_labels(kube, namespace) == want

    await eventually(probe, timeout=30, what=f"batch labels {want}")


@pytest.mark.timeout(300)
async def test_daemonset_v1_to_v2_1_100_succeeded(kube: KubeClient, namespace: str, nodes: NodePool) -> None:
    names, stable = await f.start(kube, namespace, nodes)
    await f.set_image(kube, namespace, f.V2)
    ro = await h.wait_paused_at(kube, namespace, 1, timeout=90)
    await f.wait_images(kube, namespace, {f.V1: 2, f.V2: 1})
    ds = await f.assert_step(kube, namespace, ro, 1, updated=1)
    cs = h.canary_status(ro)
    assert (cs["stableRevision"], cs["canaryRevision"]) == (stable, ds["status"]["daemonSetHash"])

    await h.approve(kube, namespace)
    await assert_succeeded(kube, namespace, names, f.V2)


@pytest.mark.timeout(360)
@pytest.mark.parametrize("ids", [(None, None), ("v2", "v3")], ids=["no-rollout-id", "rollout-id"])
async def test_daemonset_v1_to_v2_percentage_1_2_and_continuous_release_v3(
    kube: KubeClient, namespace: str, nodes: NodePool, ids: tuple[str | None, str | None]
) -> None:
    """With rollout-ids (``v2`` with V2, ``v3`` with V3, each in the template's update) every
    batch's pods carry the release's id and their batch: the restarted release labels its own."""
    names, stable = await f.start(kube, namespace, nodes, f.STEPS_1_2_100)
    await f.set_image(kube, namespace, f.V2, ids[0])
    ro = await h.wait_paused_at(kube, namespace, 1, timeout=90)
    await f.wait_images(kube, namespace, {f.V1: 2, f.V2: 1})
    await f.assert_step(kube, namespace, ro, 1, updated=1)
    await h.approve(kube, namespace)
    ro = await h.wait_paused_at(kube, namespace, 2, timeout=90)
    await f.wait_images(kube, namespace, {f.V1: 1, f.V2: 2})
    v2 = (await f.assert_step(kube, namespace, ro, 2, updated=2))["status"]["daemonSetHash"]
    assert h.canary_status(ro)["observedRolloutID"] == (ids[0] or v2)  # getRolloutID: else the revision
    # the Advanced DaemonSet updates nodes by name, highest first
    assert await f.images_by_node(kube, namespace) == {names[0]: f.V1, names[1]: f.V2, names[2]: f.V2}
    if ids[0]:
        await wait_labels(kube, namespace, {names[0]: NONE, names[1]: (ids[0], "2"), names[2]: (ids[0], "1")})

    await f.set_image(kube, namespace, f.V3, ids[1])  # v1 -> v2 -> v3: the release starts over
    ro = await h.wait_restarted(kube, namespace, v2, timeout=90)
    await f.wait_images(kube, namespace, {f.V1: 1, f.V2: 1, f.V3: 1})
    ds = await f.assert_step(kube, namespace, ro, 1, updated=1)
    v3 = ds["status"]["daemonSetHash"]
    cs = h.canary_status(ro)
    assert v3 not in (stable, v2) and ds["metadata"]["labels"][STABLE_REVISION] == stable
    assert (cs["stableRevision"], cs["canaryRevision"], cs["nextStepIndex"]) == (stable, v3, 2)
    assert cs["observedRolloutID"] == (ids[1] or v3)
    assert h.condition(ro, "Progressing")["reason"] == "InRolling"
    assert await f.images_by_node(kube, namespace) == {names[0]: f.V1, names[1]: f.V2, names[2]: f.V3}
    br = await kube.get(BATCH_RELEASES, "web", namespace)
    assert (br["status"]["updateRevision"], br["status"]["canaryStatus"]["currentBatch"]) == (v3, 0)
    if ids[1]:
        await wait_labels(kube, namespace, {names[0]: NONE, names[1]: (ids[0], "2"), names[2]: (ids[1], "1")})

    await h.approve(kube, namespace)
    ro = await h.wait_paused_at(kube, namespace, 2, timeout=90)
    await f.wait_images(kube, namespace, {f.V1: 1, f.V3: 2})
    await f.assert_step(kube, namespace, ro, 2, updated=2)
    if ids[1]:
        await wait_labels(kube, namespace, {names[0]: NONE, names[1]: (ids[1], "2"), names[2]: (ids[1], "1")})
    await h.approve(kube, namespace)  # the last step, 100%, continues by itself
    await assert_succeeded(kube, namespace, names, f.V3)
    if ids[1]:
        await wait_labels(kube, namespace, {n: (ids[1], str(3 - i)) for i, n in enumerate(names)})


@pytest.mark.timeout(300)
async def test_daemonset_v1_to_v2_1_100_but_delete_rollout_crd(
    kube: KubeClient, namespace: str, nodes: NodePool
) -> None:
    names, _ = await f.start(kube, namespace, nodes)
    assert "rollouts.kruise.io/rollout" in (await h.get_rollout(kube, namespace))["metadata"]["finalizers"]
    await f.set_image(kube, namespace, f.V2)
    ro = await h.wait_paused_at(kube, namespace, 1, timeout=90)
    await f.wait_images(kube, namespace, {f.V1: 2, f.V2: 1})
    await f.assert_step(kube, namespace, ro, 1, updated=1)
    assert await kube.get_or_none(BATCH_RELEASES, "web", namespace) is not None

    await h.delete_rollout(kube, namespace, propagation="Foreground")
    assert await kube.get_or_none(BATCH_RELEASES, "web", namespace) is None
    ds = await f.get(kube, namespace)
    assert f.rolling(ds).get("partition") in (None, 0) and not f.rolling(ds).get("paused")
    assert not set(CONTROL_ANNOTATIONS) & set(ds["metadata"].get("annotations") or {})
    # no Rollout references it: not labelled for the hold webhooks, no stable revision recorded
    assert not {WORKLOAD_TYPE, STABLE_REVISION} & set(ds["metadata"].get("labels") or {})
    await wait_on_nodes(kube, namespace, f.NAME, names, selector=f.SELECTOR, image=f.V2, timeout=90)
    await check_status(kube, namespace, f.NAME, len(names))

    # without a Rollout the next template change rolls out at once (no hold)
    await f.set_image(kube, namespace, f.V3)
    await wait_on_nodes(kube, namespace, f.NAME, names, selector=f.SELECTOR, image=f.V3, timeout=90)
    ds = await f.get(kube, namespace)
    assert f.rolling(ds).get("partition") in (None, 0)
    assert not set(CONTROL_ANNOTATIONS) & set(ds["metadata"].get("annotations") or {})


@pytest.mark.timeout(300)
async def test_daemonset_rolled_back_mid_release_finalises_on_v1(
    kube: KubeClient, namespace: str, nodes: NodePool
) -> None:
    names, stable = await f.start(kube, namespace, nodes)
    await f.set_image(kube, namespace, f.V2)
    await h.wait_paused_at(kube, namespace, 1, timeout=90)
    await f.wait_images(kube, namespace, {f.V1: 2, f.V2: 1})
    await f.set_image(kube, namespace, f.V1)  # the user reverts the template
    ro = await h.wait_completed(kube, namespace, timeout=120)
    assert h.condition(ro, "Progressing")["reason"] == "Completed"
    await wait_on_nodes(kube, namespace, f.NAME, names, selector=f.SELECTOR, image=f.V1, timeout=90)
    ds = await f.get(kube, namespace)
    assert ds["status"]["daemonSetHash"] == stable
    assert f.rolling(ds).get("partition") in (None, 0)
