"""PodUnavailableBudget under an eviction storm (issue 26 item 7), through the API server's
``pods/eviction`` subresource.

A CloneSet of 50 Ready pods on two KWOK nodes of the test's own, a PUB with ``maxUnavailable: 3``.
The nodes are cordoned before the storm, so the replacements of evicted pods stay Pending and the
budget cannot come back while the storm runs: exactly 3 of 50 concurrent evictions are admitted
and 47 refused by ``vpodeviction.kb.io`` (HTTP 403, upstream's "pub unavailable allowed is
negative"). Uncordoned, the replacements turn Ready and the budget is back.

With the manager SIGKILLed and restarted mid-storm the webhook's ``failurePolicy: Fail`` refuses
every eviction nobody answers (``failed calling webhook``); the spent budget lives in the PUB
status, so the restarted manager admits no more than what is left of it: at most 3 admitted, and
``disruptedPods`` ever held exactly 3 names (a unit spent by a webhook killed before it answered
stays spent until the pod goes or its entry expires, as upstream). Every refused pod is kept and
the CloneSet ends with its 50 Ready pods.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from kruise.core.errors import ApiError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, PODS
from kruise.rollouts.manager.process import ManagerProcess
from kruise.workloads.api.podunavailablebudget import PUBS
from tests.integration.cloneset.helpers import new_cloneset
from tests.integration.faults.conftest import assert_no_traceback
from tests.integration.podunavailablebudget.test_pub import EXHAUSTED, budget, evict, ready, status_is
from tests.support.cluster import TestCluster
from tests.support.managers import expire_lease, own_replica
from tests.support.nodes import NodePool
from tests.support.wait import eventually

JSON = dict[str, Any]
REPLICAS, BUDGET = 50, 3
WEBHOOK_DOWN = 'failed calling webhook "vpodeviction.kb.io"'


@contextlib.asynccontextmanager
async def guarded_cloneset(kube: KubeClient, namespace: str) -> AsyncIterator[NodePool]:
    """The CloneSet ``web`` (50 Ready pods on two own KWOK nodes) under the PUB ``guard``
    (``maxUnavailable: 3``) with its status settled; yields the node pool (deleted afterwards)."""
    pool = NodePool(kube)
    try:
        names = await pool.add_nodes(2, labels={"pub-storm": pool.prefix})
        body = copy.deepcopy(new_cloneset("web", REPLICAS))
        pod_spec = body["spec"]["template"]["spec"]
        pod_spec["nodeSelector"] = {"pub-storm": pool.prefix}
        pod_spec["terminationGracePeriodSeconds"] = 0
        await kube.create(CLONESETS, body, namespace)
        await eventually(lambda: all_ready(kube, namespace), timeout=180, what=f"{REPLICAS} Ready pods")
        ref = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"}
        await kube.create(PUBS, budget(targetRef=ref, maxUnavailable=BUDGET), namespace)
        await status_is(
            kube,
            namespace,
            "guard",
            totalReplicas=REPLICAS,
            currentAvailable=REPLICAS,
            unavailableAllowed=BUDGET,
        )

        async def annotated() -> bool:
            pods = (await kube.list(PODS, namespace, label_selector="app=web"))["items"]
            related = [p["metadata"].get("annotations", {}).get("kruise.io/related-pub") for p in pods]
            return len(pods) == REPLICAS and set(related) == {"guard"}

        await eventually(annotated, timeout=60, what="every pod carries kruise.io/related-pub")
        for node in names:
            await pool.cordon(node)
        yield pool
    finally:
        await kube.delete(CLONESETS, "web", namespace, missing_ok=True)  # no replacements meanwhile
        await kube.delete(PUBS, "guard", namespace, missing_ok=True)  # else it guards the pods below
        await eventually(
            lambda: pub_gone(kube, namespace),
            what="the PUB deleted (the webhook reads it from the API server)",
        )
        await pool.close()


async def pub_gone(kube: KubeClient, namespace: str) -> bool:
    return await kube.get_or_none(PUBS, "guard", namespace) is None


async def live_pods(kube: KubeClient, namespace: str) -> list[JSON]:
    pods = (await kube.list(PODS, namespace, label_selector="app=web"))["items"]
    return [p for p in pods if not p["metadata"].get("deletionTimestamp")]


async def all_ready(kube: KubeClient, namespace: str) -> bool:
    pods = await live_pods(kube, namespace)
    return len(pods) == REPLICAS and all(ready(p) for p in pods)


async def fire(
    kube: KubeClient, namespace: str, pods: list[str], delay: float = 0.0
) -> dict[str, ApiError | None]:
    """Evict every pod at once (after ``delay`` seconds); pod -> None (201) or the refusal."""

    async def one(pod: str) -> ApiError | None:
        try:
            await evict(kube, namespace, pod)
        except ApiError as err:
            return err
        return None

    await asyncio.sleep(delay)
    outcomes = await asyncio.gather(*(one(p) for p in pods))
    return dict(zip(pods, outcomes, strict=True))


@contextlib.asynccontextmanager
async def disrupted_seen(kube: KubeClient, namespace: str) -> AsyncIterator[tuple[set[str], list[int]]]:
    """Watch the PUB: every name its ``disruptedPods`` ever held, and the largest it ever was."""
    seen: set[str] = set()
    peak = [0]

    async def watch() -> None:
        start = (await kube.list(PUBS, namespace))["metadata"]["resourceVersion"]
        async for event in kube.watch(PUBS, namespace, resource_version=start):
            if event.type in ("ADDED", "MODIFIED"):
                disrupted = (event.object.get("status") or {}).get("disruptedPods") or {}
                seen.update(disrupted)
                peak[0] = max(peak[0], len(disrupted))

    task = asyncio.create_task(watch())
    await asyncio.sleep(0.5)  # the watch is open before the first write it must see
    try:
        yield seen, peak
    finally:
        if task.done():
            task.result()  # the watch must not have died: what it saw is the test's evidence
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def saw(seen: set[str], count: int) -> bool:
    return len(seen) >= count


async def terminating_or_gone(kube: KubeClient, namespace: str, names: list[str]) -> set[str]:
    live = {p["metadata"]["name"] for p in await live_pods(kube, namespace)}
    return {n for n in names if n not in live}


async def settle(kube: KubeClient, namespace: str, pool: NodePool) -> None:
    """Uncordon: the replacements turn Ready, 50 live pods and the whole budget again."""
    for node in pool.names:
        await pool.cordon(node, unschedulable=False)
    await eventually(lambda: all_ready(kube, namespace), timeout=180, what=f"{REPLICAS} live Ready pods")
    await status_is(kube, namespace, "guard", currentAvailable=REPLICAS, unavailableAllowed=BUDGET)


async def test_fifty_concurrent_evictions_spend_a_budget_of_three(
    kube: KubeClient, namespace: str, manager: ManagerProcess
) -> None:
    async with guarded_cloneset(kube, namespace) as pool:
        victims = sorted(p["metadata"]["name"] for p in await live_pods(kube, namespace))
        assert len(victims) == REPLICAS
        async with disrupted_seen(kube, namespace) as (seen, peak):
            outcomes = await fire(kube, namespace, victims)
            admitted = sorted(p for p, err in outcomes.items() if err is None)
            refused = {p: err for p, err in outcomes.items() if err is not None}
            assert len(admitted) == BUDGET, admitted
            assert len(refused) == REPLICAS - BUDGET
            for err in refused.values():
                assert err.status == 403, err
                assert EXHAUSTED in err.message, err
                assert 'admission webhook "vpodeviction.kb.io" denied the request' in err.message
            pub = await status_is(kube, namespace, "guard", unavailableAllowed=0)
            assert pub["status"]["currentAvailable"] == REPLICAS - BUDGET
            assert set(pub["status"].get("disruptedPods") or {}) <= set(admitted)
            await eventually(lambda: saw(seen, BUDGET), what="the watch saw the spending writes")
        assert seen == set(admitted), "disruptedPods recorded exactly the admitted evictions"
        assert peak[0] <= BUDGET
        assert await terminating_or_gone(kube, namespace, victims) == set(admitted)

        await settle(kube, namespace, pool)
        survivor = next(
            p["metadata"]["name"]
            for p in await live_pods(kube, namespace)
            if p["metadata"]["name"] not in admitted
        )
        await evict(kube, namespace, survivor)  # the budget is back
        assert survivor in await terminating_or_gone(kube, namespace, [survivor])


async def restart(kube: KubeClient, proc: ManagerProcess) -> None:
    """Start the killed manager again, its Lease expired first (as ``kill_and_restart``)."""
    await expire_lease(kube)
    await asyncio.to_thread(proc.start)


async def test_the_budget_holds_across_a_manager_killed_mid_storm(
    kube: KubeClient, cluster: TestCluster, namespace: str, manager: ManagerProcess, tmp_path: Path
) -> None:
    async with (
        own_replica(manager, cluster, tmp_path / "replica") as replica,
        guarded_cloneset(kube, namespace) as pool,
    ):
        victims = sorted(p["metadata"]["name"] for p in await live_pods(kube, namespace))
        waves = [victims[:10], victims[10:20], victims[20:35], victims[35:]]
        async with disrupted_seen(kube, namespace) as (seen, peak):
            # 10 at once with the SIGKILL; 10 while no manager runs; 15 one by one through its
            # restart; the last 15 at once once it is back
            killed = asyncio.create_task(asyncio.to_thread(replica.kill))
            outcomes = await fire(kube, namespace, waves[0])
            await killed
            while_down = await fire(kube, namespace, waves[1])
            assert all(err is not None and WEBHOOK_DOWN in err.message for err in while_down.values()), (
                "failurePolicy: Fail refuses every eviction of a guarded pod while no manager answers"
            )
            outcomes.update(while_down)
            restarted = asyncio.create_task(restart(kube, replica))
            for pod in waves[2]:
                outcomes.update(await fire(kube, namespace, [pod], delay=0.2))
            await restarted
            outcomes.update(await fire(kube, namespace, waves[3]))
            await eventually(lambda: saw(seen, BUDGET), what="the watch saw the spending writes")
        admitted = sorted(p for p, err in outcomes.items() if err is None)
        refused = {p: err for p, err in outcomes.items() if err is not None}
        down = [p for p, err in refused.items() if WEBHOOK_DOWN in err.message]
        exhausted = [p for p, err in refused.items() if EXHAUSTED in err.message]
        # any other refusal is the restarting webhook's own (not ready yet): still a refusal by it
        assert all('"vpodeviction.kb.io"' in err.message for err in refused.values()), refused
        print(
            f"\n[kruise] storm over a SIGKILL: {len(admitted)} admitted, {len(down)} met no manager, "
            f"{len(exhausted)} refused by the budget"
        )
        assert len(admitted) <= BUDGET, admitted
        # a unit spent by a manager killed before it answered stays spent (as upstream: the
        # entry lasts until the pod goes or its deletion timeout): admitted + leaked == budget
        assert set(admitted) <= seen
        assert len(seen) == BUDGET, seen
        assert peak[0] <= BUDGET
        assert await terminating_or_gone(kube, namespace, victims) == set(admitted)
        pub = await status_is(kube, namespace, "guard", unavailableAllowed=0)
        assert pub["status"]["currentAvailable"] == REPLICAS - BUDGET

        await settle(kube, namespace, pool)
        live = {p["metadata"]["name"] for p in await live_pods(kube, namespace)}
        assert live & set(victims) == set(victims) - set(admitted), "refused pods all kept, evicted gone"
    assert_no_traceback(replica)
