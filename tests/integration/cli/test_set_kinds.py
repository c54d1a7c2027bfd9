"""kubectl-kruise's commands on StatefulSets and DaemonSets, native and Advanced, through ``kubectl kruise``.

An Advanced StatefulSet (``asts``) and a native DaemonSet (``ds``) take ``set image`` and roll to
it (``rollout status`` in their viewers' words); an Advanced DaemonSet (``ads``) reaches "successfully
rolled out" and refuses ``pause`` as kubectl-kruise does; an Advanced StatefulSet's ControllerRevisions
are its ``history`` and ``undo`` puts revision 1's template back.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import DAEMONSETS, NATIVE_DAEMONSETS, PODS, STATEFULSETS
from tests.integration.cli.conftest import Kubectl
from tests.integration.daemonset import helpers as ads
from tests.integration.statefulset import helpers as asts
from tests.support.nodes import NodePool
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")


@pytest.fixture
async def nodes(kube: KubeClient) -> AsyncIterator[NodePool]:
    """Two KWOK nodes of the test's own (label ``ads-test: <prefix>``), deleted after."""
    pool = NodePool(kube)
    try:
        await pool.add_nodes(2, ads.node_label(pool))
        yield pool
    finally:
        await pool.close()


def ok(out: object) -> str:
    assert out.returncode == 0, out.stdout + out.stderr  # type: ignore[attr-defined]
    return str(out.stdout)  # type: ignore[attr-defined]


def image(obj: dict[str, object]) -> str:
    return str(obj["spec"]["template"]["spec"]["containers"][0]["image"])  # type: ignore[index]


async def test_set_image_rolls_an_advanced_statefulset_and_a_native_daemonset(
    kube: KubeClient, namespace: str, kk: Kubectl, nodes: NodePool
) -> None:
    await asts.create(kube, namespace, asts.new_statefulset("db", 2))
    assert ok(kk("set", "image", "asts/db", f"nginx={asts.NEW_IMAGE}")) == (
        "statefulset.apps.kruise.io/db image updated\n"
    )
    assert image(await kube.get(STATEFULSETS, "db", namespace)) == asts.NEW_IMAGE
    done = kk("rollout", "status", "statefulset.apps.kruise.io/db", "--timeout", "2m")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1].startswith(
        "Advanced StatefulSet rolling update complete 2 pods at revision db-"
    )
    assert {asts.image_of(p) for p in await asts.pods(kube, namespace, "db")} == {asts.NEW_IMAGE}

    native = ads.new_daemonset("agent", nodes)
    native["apiVersion"] = "apps/v1"
    await kube.create(NATIVE_DAEMONSETS, native, namespace)
    assert (
        ok(kk("set", "image", "ds/agent", f"app={ads.NEW_IMAGE}")) == "daemonset.apps/agent image updated\n"
    )
    rolled = kk("rollout", "status", "daemonset/agent", "--timeout", "2m")
    assert rolled.returncode == 0, rolled.stdout + rolled.stderr
    assert rolled.stdout.splitlines()[-1] == 'daemon set "agent" successfully rolled out'
    pods = (await kube.list(PODS, namespace, label_selector=f"{ads.NAME_LABEL}=agent"))["items"]
    assert sorted(p["spec"]["nodeName"] for p in pods) == sorted(nodes.names)
    assert {p["spec"]["containers"][0]["image"] for p in pods} == {ads.NEW_IMAGE}

    assert ok(kk("rollout", "restart", "ds/agent")) == "daemonset.apps/agent restarted\n"
    annotations = (await kube.get(NATIVE_DAEMONSETS, "agent", namespace))["spec"]["template"]["metadata"]
    assert "kubectl.kubernetes.io/restartedAt" in annotations["annotations"]


async def test_status_of_an_advanced_daemonset_reaches_done_and_pause_is_refused(
    kube: KubeClient, namespace: str, kk: Kubectl, nodes: NodePool
) -> None:
    await ads.create(kube, namespace, ads.new_daemonset("agent", nodes))
    assert ok(kk("set", "image", "ads/agent", f"app={ads.NEW_IMAGE}")) == (
        "daemonset.apps.kruise.io/agent image updated\n"
    )
    watched = kk("rollout", "status", "daemonset.apps.kruise.io/agent", "--timeout", "2m")
    assert watched.returncode == 0, watched.stdout + watched.stderr
    assert watched.stdout.splitlines()[-1] == 'daemon set "agent" successfully rolled out'
    ds = await ads.get(kube, namespace, "agent")
    assert (ds["status"]["updatedNumberScheduled"], ds["status"]["numberAvailable"]) == (2, 2)

    paused = kk("rollout", "pause", "ads/agent")
    assert paused.returncode == 1
    assert paused.stderr.strip().endswith('daemonsets.apps.kruise.io "agent" pausing is not supported'), (
        paused.stderr
    )
    assert (
        not (await kube.get(DAEMONSETS, "agent", namespace))["spec"].get("updateStrategy", {}).get("paused")
    )


async def test_history_and_undo_of_an_advanced_statefulset(
    kube: KubeClient, namespace: str, kk: Kubectl
) -> None:
    await asts.create(kube, namespace, asts.new_statefulset("db", 2))
    only_one = kk("rollout", "undo", "asts/db")
    assert only_one.returncode == 1 and "no latest revision to roll back to" in only_one.stderr, (
        only_one.stderr
    )
    ok(kk("set", "image", "asts/db", f"nginx={asts.NEW_IMAGE}"))
    ok(kk("rollout", "status", "asts/db", "--timeout", "2m"))

    history = ok(kk("rollout", "history", "asts/db"))
    assert history.splitlines() == [
        "statefulset.apps.kruise.io/db ",
        "REVISION  CHANGE-CAUSE",
        "1         <none>",
        "2         <none>",
    ]
    assert f"Image:\t{asts.IMAGE}" in ok(kk("rollout", "history", "asts/db", "--revision", "1"))
    listed = json.loads(ok(kk("rollout", "history", "statefulset.apps.kruise.io", "db", "-o", "json")))
    assert [r["revision"] for r in listed["items"]] == [1, 2]

    assert ok(kk("rollout", "undo", "asts/db")) == "statefulset.apps.kruise.io/db rolled back\n"
    assert image(await kube.get(STATEFULSETS, "db", namespace)) == asts.IMAGE

    async def rolled_back() -> bool:
        return {asts.image_of(p) for p in await asts.pods(kube, namespace, "db")} == {asts.IMAGE}

    await eventually(rolled_back, timeout=60, what="the pods back on revision 1's image")
    missing = kk("rollout", "undo", "asts/db", "--to-revision", "9")
    assert missing.returncode == 1 and "unable to find specified revision 9 in history" in missing.stderr
