"""Upstream's "Native DaemonSet batch rollout" group (``KR:test/e2e/rollout_v1beta1_test.go``):
its ``native_daemonset.yaml`` (an ``apps/v1`` DaemonSet, ``RollingUpdate`` with ``maxUnavailable:
3``, env ``VERSION``) under ``rollout_v1beta1_native_daemonset_base.yaml`` (steps 1, 100%), on three
KWOK nodes of the test's own; kube-controller-manager's DaemonSet controller runs the pods.

- V1 -> V2 (1, 100%): the template change is held (``OnDelete``, the original strategy recorded);
  step 1 has the native DaemonSet controller delete one old pod, which kube's controller recreates
  at V2 (``updatedNumberScheduled`` 1) and pauses; approved, every pod runs V2, the annotations go
  and ``RollingUpdate`` comes back;
- continuous release V3 while V2 is paused at step 1: the release starts over on V3 and its first
  batch replaces exactly one pod (the V2 one, the newest), then V3 everywhere;
- succeeded, then rolled back as ``kubectl rollout undo`` (the template of the previous
  ControllerRevision): a new release from V2 to V1, step by step;
- release 1 and delete the Rollout: under ``KeepWorkloadPausedOnRolloutDeletion`` (upstream's
  workflow ``e2e-native-daemonset-*.yaml`` enables it) the DaemonSet stays ``OnDelete`` with one
  pod updated; without the gate its strategy comes back and kube's controller updates the rest.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CONTROLLER_REVISIONS, NATIVE_DAEMONSETS
from kruise.rollouts.manager.process import ManagerProcess
from kruise.rollouts.resources import BATCH_RELEASES, ROLLOUTS
from tests.integration.daemonset.helpers import events, node_label, pods, wait_on_nodes
from tests.integration.rollouts import helpers as h
from tests.support.cluster import TestCluster
from tests.support.managers import own_replica
from tests.support.nodes import NodePool
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")
JSON = dict[str, Any]
NAME, SELECTOR = "fluentd-elasticsearch", "name=fluentd-elasticsearch"
IMAGE = "quay.io/fluentd_elasticsearch/fluentd:v2.5.2"
ADVANCED_CONTROL = "rollouts.kruise.io/daemonset-advanced-control"
REVISION = "rollouts.kruise.io/daemonset-revision"
ORIGINAL = "rollouts.kruise.io/daemonset-original-update-strategy"
IN_PROGRESSING = "rollouts.kruise.io/in-progressing"
CONTROL = "batchrelease.rollouts.kruise.io/control-info"
RELEASE_ANNOTATIONS = {ADVANCED_CONTROL, REVISION, ORIGINAL, IN_PROGRESSING, CONTROL}


def container(version: str) -> JSON:
    return {
        "name": "fluentd-elasticsearch",
        "image": IMAGE,
        "env": [{"name": "VERSION", "value": version}],
        "resources": {"limits": {"memory": "200Mi"}, "requests": {"cpu": "100m", "memory": "200Mi"}},
    }


def native_daemonset(namespace: str, nodes: NodePool) -> JSON:
    """Upstream's ``native_daemonset.yaml`` in the test's namespace, on the test's nodes."""
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": NAME, "namespace": namespace, "labels": {"k8s-app": "fluentd-logging"}},
        "spec": {
            "selector": {"matchLabels": {"name": NAME}},
            "updateStrategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 3},
            },
            "template": {
                "metadata": {"labels": {"name": NAME}},
                "spec": {
                    "nodeSelector": node_label(nodes),
                    "containers": [container("version1")],
                    "terminationGracePeriodSeconds": 30,
                },
            },
        },
    }


def rollout(namespace: str) -> JSON:
    """Upstream's ``rollout_v1beta1_native_daemonset_base.yaml``."""
    return {
        "apiVersion": "rollouts.kruise.io/v1beta1",
        "kind": "Rollout",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {
            "workloadRef": {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": NAME},
            "strategy": {
                "canary": {
                    "enableExtraWorkloadForCanary": False,
                    "steps": [{"replicas": 1}, {"replicas": "100%"}],
                }
            },
        },
    }


async def get(kube: KubeClient, namespace: str) -> JSON:
    return await kube.get(NATIVE_DAEMONSETS, NAME, namespace)


async def set_version(kube: KubeClient, namespace: str, version: str) -> None:
    """``UpdateNativeDaemonSet`` with env ``VERSION`` changed (a merge patch of the container list)."""
    patch = {"spec": {"template": {"spec": {"containers": [container(version)]}}}}
    await kube.patch(NATIVE_DAEMONSETS, NAME, patch, namespace, patch_type="merge")


async def wait_status(kube: KubeClient, namespace: str, timeout: float = 60, **want: int) -> JSON:
    """The DaemonSet once its status (for its generation) has every ``want`` field."""

    async def probe() -> JSON | None:
        ds = await get(kube, namespace)
        st = ds.get("status") or {}
        if ds["metadata"].get("generation") != st.get("observedGeneration"):
            return None
        return ds if all(st.get(k) == v for k, v in want.items()) else None

    return await eventually(probe, timeout=timeout, what=f"DaemonSet status {want}")


def version_of(pod: JSON) -> str:
    env = pod["spec"]["containers"][0].get("env") or []
    return str(next(e["value"] for e in env if e["name"] == "VERSION"))


async def versions(kube: KubeClient, namespace: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for pod in await pods(kube, namespace, NAME, selector=SELECTOR):
        out[version_of(pod)] = out.get(version_of(pod), 0) + 1
    return out


async def wait_versions(kube: KubeClient, namespace: str, want: dict[str, int], timeout: float = 90) -> None:
    async def probe() -> bool:
        return await versions(kube, namespace) == want

    await eventually(probe, timeout=timeout, what=f"daemon pods {want}")


async def start(kube: KubeClient, namespace: str, nodes: NodePool) -> list[str]:
    """Three nodes, the DaemonSet Ready on them, the Rollout Healthy and the DaemonSet labelled."""
    names = await nodes.add_nodes(3, node_label(nodes))
    await kube.create(ROLLOUTS, rollout(namespace), namespace)
    await kube.create(NATIVE_DAEMONSETS, native_daemonset(namespace, nodes), namespace)
    await wait_on_nodes(kube, namespace, NAME, names, selector=SELECTOR, timeout=90)
    await h.wait_phase(kube, namespace, "Healthy")

    async def labelled() -> bool:
        labels = (await get(kube, namespace))["metadata"].get("labels") or {}
        return labels.get("rollouts.kruise.io/workload-type") == "daemonset"

    await eventually(labelled, timeout=30, what="DaemonSet labelled for the hold webhook")
    return names


async def paused_at_step_1(kube: KubeClient, namespace: str, old: str, new: str) -> JSON:
    """Upstream's checks at step 1 (one pod updated, the Rollout Progressing at 1 -> 2), plus the
    hold's marks; returns the DaemonSet."""
    ro = await h.wait_paused_at(kube, namespace, 1, timeout=90)
    await wait_versions(kube, namespace, {old: 2, new: 1})
    ds = await wait_status(kube, namespace, updatedNumberScheduled=1, numberReady=3, timeout=60)
    cs = h.canary_status(ro)
    assert (ro["status"]["phase"], cs["currentStepIndex"], cs["nextStepIndex"]) == ("Progressing", 1, 2)
    assert cs["rolloutHash"] == ro["metadata"]["annotations"]["rollouts.kruise.io/hash"]
    assert ds["spec"]["updateStrategy"]["type"] == "OnDelete"
    annotations = ds["metadata"]["annotations"]
    assert annotations[ORIGINAL] == "RollingUpdate"
    control = json.loads(annotations[ADVANCED_CONTROL])
    assert control == {"partition": "2", "batch-revision": cs["canaryRevision"]}
    assert json.loads(annotations[REVISION]) == {
        "canary-revision": cs["canaryRevision"],
        "stable-revision": cs["stableRevision"],
    }
    return ds


async def assert_succeeded(kube: KubeClient, namespace: str, names: list[str], version: str) -> None:
    """Healthy, Progressing Completed, Succeeded; every node on ``version``; the DaemonSet handed
    back (``RollingUpdate`` with its own settings, no release annotation)."""
    ro = await h.wait_completed(kube, namespace, timeout=120)
    assert h.canary_status(ro)["nextStepIndex"] == -1
    assert h.condition(ro, "Progressing")["status"] == "False"
    assert h.condition(ro, "Succeeded")["status"] == "True"
    await wait_on_nodes(kube, namespace, NAME, names, selector=SELECTOR, timeout=90)
    assert await versions(kube, namespace) == {version: 3}
    ds = await wait_status(kube, namespace, updatedNumberScheduled=3, numberReady=3, desiredNumberScheduled=3)
    assert ds["spec"]["updateStrategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 3},
    }
    assert not RELEASE_ANNOTATIONS & set(ds["metadata"].get("annotations") or {})
    assert await kube.get_or_none(BATCH_RELEASES, "web", namespace) is None


@pytest.mark.timeout(300)
async def test_native_daemonset_v1_to_v2_percentage_1_100_succeeded(
    kube: KubeClient, namespace: str, nodes: NodePool
) -> None:
    names = await start(kube, namespace, nodes)
    await set_version(kube, namespace, "version2")
    await paused_at_step_1(kube, namespace, "version1", "version2")
    deleted = [e for e in await events(kube, namespace, NAME) if e.get("reason") == "PodDeleted"]
    assert len(deleted) == 1 and deleted[0]["message"].endswith(" for batch update")

    await h.approve(kube, namespace)
    await assert_succeeded(kube, namespace, names, "version2")


@pytest.mark.timeout(360)
async def test_native_daemonset_v1_to_v2_percentage_1_and_continuous_release_v3_100_succeeded(
    kube: KubeClient, namespace: str, nodes: NodePool
) -> None:
    names = await start(kube, namespace, nodes)
    await set_version(kube, namespace, "version2")
    ds = await paused_at_step_1(kube, namespace, "version1", "version2")
    v2 = json.loads(ds["metadata"]["annotations"][ADVANCED_CONTROL])["batch-revision"]

    await set_version(kube, namespace, "version3")  # v1 -> v2 -> v3: the release starts over
    await h.wait_restarted(kube, namespace, v2, timeout=90)
    ds = await paused_at_step_1(kube, namespace, "version1", "version3")
    assert ds["metadata"]["annotations"][ORIGINAL] == "RollingUpdate", "recorded when the release started"
    await asyncio.sleep(3)  # the batch stays one pod: the V2 pod was the one replaced
    assert await versions(kube, namespace) == {"version1": 2, "version3": 1}

    await h.approve(kube, namespace)
    await assert_succeeded(kube, namespace, names, "version3")


@pytest.mark.timeout(420)
async def test_native_daemonset_v1_to_v2_percentage_1_100_succeeded_and_rollback(
    kube: KubeClient, namespace: str, nodes: NodePool
) -> None:
    names = await start(kube, namespace, nodes)
    await set_version(kube, namespace, "version2")
    await paused_at_step_1(kube, namespace, "version1", "version2")
    await h.approve(kube, namespace)
    await assert_succeeded(kube, namespace, names, "version2")

    # RollbackDaemonSet(workload, 0): the template of the second newest ControllerRevision
    ds = await get(kube, namespace)
    revisions = (await kube.list(CONTROLLER_REVISIONS, namespace, label_selector=SELECTOR))["items"]
    previous = sorted(revisions, key=lambda r: int(r["revision"]), reverse=True)[1]
    template = dict(previous["data"]["spec"]["template"])
    template.pop("$patch", None)
    ds["spec"]["template"] = template
    await kube.replace(NATIVE_DAEMONSETS, ds)
    await paused_at_step_1(kube, namespace, "version2", "version1")

    await h.approve(kube, namespace)
    await assert_succeeded(kube, namespace, names, "version1")


@pytest.fixture
async def keep_paused(manager: ManagerProcess, cluster: TestCluster, tmp_path: Path) -> AsyncIterator[None]:
    """The manager with upstream's native DaemonSet workflow gates."""
    async with own_replica(
        manager,
        cluster,
        tmp_path / "gated",
        extra_args=("--feature-gates=AdvancedDeployment=true,KeepWorkloadPausedOnRolloutDeletion=true",),
    ):
        yield


async def released_one_then_deleted(kube: KubeClient, namespace: str, nodes: NodePool) -> list[str]:
    names = await start(kube, namespace, nodes)
    await set_version(kube, namespace, "version2")
    await paused_at_step_1(kube, namespace, "version1", "version2")
    await kube.delete(ROLLOUTS, "web", namespace)

    async def gone() -> bool:
        return (
            await kube.get_or_none(ROLLOUTS, "web", namespace) is None
            and await kube.get_or_none(BATCH_RELEASES, "web", namespace) is None
        )

    await eventually(gone, timeout=60, what="Rollout and BatchRelease deleted")
    return names


@pytest.mark.timeout(300)
@pytest.mark.usefixtures("keep_paused")
async def test_native_daemonset_v1_to_v2_release_1_and_delete_rollout_cr(
    kube: KubeClient, namespace: str, nodes: NodePool
) -> None:
    await released_one_then_deleted(kube, namespace, nodes)
    await asyncio.sleep(5)  # upstream waits 5 s, then expects one updated pod
    ds = await wait_status(kube, namespace, updatedNumberScheduled=1)
    assert await versions(kube, namespace) == {"version1": 2, "version2": 1}
    assert ds["spec"]["updateStrategy"]["type"] == "OnDelete", "kept where the release left it"
    assert not RELEASE_ANNOTATIONS & set(ds["metadata"].get("annotations") or {})


@pytest.mark.timeout(300)
async def test_native_daemonset_delete_rollout_cr_without_the_gate_gives_the_strategy_back(
    kube: KubeClient, namespace: str, nodes: NodePool
) -> None:
    names = await released_one_then_deleted(kube, namespace, nodes)
    ds = await get(kube, namespace)
    assert ds["spec"]["updateStrategy"]["type"] == "RollingUpdate"
    assert not RELEASE_ANNOTATIONS & set(ds["metadata"].get("annotations") or {})
    await wait_on_nodes(kube, namespace, NAME, names, selector=SELECTOR, timeout=90)
    await wait_versions(kube, namespace, {"version2": 3})
