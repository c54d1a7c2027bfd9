"""BroadcastJob through ``kruise manager`` on the real control plane, with KWOK nodes whose pods
finish through KWOK's completion stages (exit code and run time from pod annotations).

Upstream's e2e ``BroadcastJob > BroadcastJob dispatching > succeeds for parallelism < number of
node`` is the first test; the others cover what its controller unit tests cover, end to end:
failure policies, the active deadline, the TTL, completion policy Never and the webhooks.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kruise.core.errors import InvalidError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import BROADCASTJOBS
from kruise.rollouts.manager.process import ManagerProcess
from tests.integration.broadcastjob.helpers import condition, job_pods, new_job, node_label, wait_job
from tests.integration.test_manager_metrics import scrape_until
from tests.support.nodes import NodePool
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")
JSON = dict[str, Any]


def _active(pod: JSON) -> bool:
    return pod["status"].get("phase") not in ("Succeeded", "Failed") and not pod["metadata"].get(
        "deletionTimestamp"
    )


async def test_succeeds_for_parallelism_less_than_number_of_node(
    kube: KubeClient, namespace: str, nodes: NodePool, manager: ManagerProcess
) -> None:
    """Four eligible nodes (and a tainted and a cordoned one that are not), parallelism 2, pods
    that run 2 s: never more than two at once, one pod per eligible node, the job completes; the
    manager's /metrics shows it (state gauges, the controller's reconciles)."""
    eligible = await nodes.add_nodes(4, node_label(nodes))
    tainted = await nodes.add_nodes(
        1, node_label(nodes), [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
    )
    cordoned = await nodes.add_nodes(1, node_label(nodes))
    await nodes.cordon(cordoned[0])
    await kube.create(BROADCASTJOBS, new_job("bcj", nodes, run="2s", parallelism=2), namespace)
    most = 0

    async def completed() -> JSON | None:
        nonlocal most
        most = max(most, sum(_active(p) for p in await job_pods(kube, namespace, "bcj")))
        job = await kube.get(BROADCASTJOBS, "bcj", namespace)
        return job if (job.get("status") or {}).get("phase") == "completed" else None

    job = await eventually(completed, timeout=90, interval=0.1, what="the job completed")
    assert most == 2, f"at most parallelism pods at once, and that many: saw {most}"
    status = job["status"]
    assert (status["desired"], status["succeeded"], status["failed"], status["active"]) == (4, 4, 0, 0)
    assert status["startTime"] and status["completionTime"]
    assert (done := condition(job, "Complete")) is not None and done["message"].startswith("Job completed")
    pods = await job_pods(kube, namespace, "bcj")
    assert sorted(p["spec"]["nodeName"] for p in pods) == sorted(eligible)
    assert not {p["spec"]["nodeName"] for p in pods} & {*tainted, *cordoned}
    pinned = pods[0]["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert pinned["nodeSelectorTerms"][0]["matchFields"][0]["key"] == "metadata.name"
    assert all(p["status"]["phase"] == "Succeeded" for p in pods)
    key = {"namespace": namespace, "broadcastjob": "bcj"}

    metrics = await scrape_until(
        manager,
        lambda now: (
            now.value("kruise_broadcastjob_status_condition", **key, condition="Complete", status="true") == 1
        ),
        what="the Complete condition in the gauges",
    )
    assert metrics.value("kruise_broadcastjob_status_succeeded", **key) == 4
    assert metrics.value("kruise_broadcastjob_status_desired", **key) == 4
    assert (
        metrics.value("kruise_broadcastjob_status_condition", **key, condition="Complete", status="true") == 1
    )
    assert metrics.value("controller_runtime_reconcile_total", controller="broadcastjob-controller") > 0


async def test_a_failed_pod_fails_the_job_under_fail_fast(
    kube: KubeClient, namespace: str, nodes: NodePool
) -> None:
    await nodes.add_nodes(2, node_label(nodes))
    await kube.create(BROADCASTJOBS, new_job("bcj", nodes, exit_code=1), namespace)
    job = await wait_job(kube, namespace, "bcj", phase="failed")
    failed = condition(job, "Failed")
    assert failed is not None
    assert failed["message"] == "failure policy is FailurePolicyTypeFailFast and failed pod is found"
    assert job["status"]["failed"] >= 1 and job["status"]["active"] == 0
    assert job["status"]["completionTime"]


async def test_restarts_over_the_limit_fail_the_job(
    kube: KubeClient, namespace: str, nodes: NodePool
) -> None:
    """OnFailure pods that exit 1 are restarted by the kubelet (KWOK); once a pod has restarted
    more than ``restartLimit`` times it counts failed and FailFast fails the job."""
    await nodes.add_nodes(1, node_label(nodes))
    body = new_job("bcj", nodes, exit_code=1, restart="OnFailure", failurePolicy={"restartLimit": 1})
    await kube.create(BROADCASTJOBS, body, namespace)
    job = await wait_job(kube, namespace, "bcj", phase="failed", failed=1)
    assert condition(job, "Failed") is not None
    pods = await job_pods(kube, namespace, "bcj")
    assert len(pods) == 1 and pods[0]["status"]["containerStatuses"][0]["restartCount"] >= 2


async def test_continue_policy_completes_despite_a_failure(
    kube: KubeClient, namespace: str, nodes: NodePool
) -> None:
    await nodes.add_nodes(2, node_label(nodes))
    await kube.create(
        BROADCASTJOBS, new_job("bcj", nodes, exit_code=2, failurePolicy={"type": "Continue"}), namespace
    )
    job = await wait_job(kube, namespace, "bcj", phase="completed")
    assert (job["status"]["succeeded"], job["status"]["failed"]) == (0, 2)


async def test_pause_policy_pauses_on_a_failure_and_a_paused_job_creates_nothing(
    kube: KubeClient, namespace: str, nodes: NodePool
) -> None:
    """failurePolicy Pause: the first pod fails, the job is ``paused`` and the second node never
    gets its pod; a job created ``paused`` creates nothing until unpaused."""
    await nodes.add_nodes(2, node_label(nodes))
    body = new_job("pausing", nodes, exit_code=1, parallelism=1, failurePolicy={"type": "Pause"})
    await kube.create(BROADCASTJOBS, body, namespace)
    job = await wait_job(kube, namespace, "pausing", phase="paused", failed=1)
    assert (job["status"]["desired"], job["status"]["active"]) == (2, 0)
    await asyncio.sleep(2.0)  # more rounds: still one pod
    assert len(await job_pods(kube, namespace, "pausing")) == 1

    await kube.create(BROADCASTJOBS, new_job("held", nodes, paused=True), namespace)
    await wait_job(kube, namespace, "held", phase="paused", desired=2)
    assert await job_pods(kube, namespace, "held") == []
    await kube.patch(BROADCASTJOBS, "held", {"spec": {"paused": False}}, namespace, patch_type="merge")
    await wait_job(kube, namespace, "held", phase="completed", succeeded=2)


async def test_active_deadline_fails_the_job_and_deletes_its_pods(
    kube: KubeClient, namespace: str, nodes: NodePool
) -> None:
    await nodes.add_nodes(2, node_label(nodes))
    body = new_job(
        "bcj", nodes, exit_code=None, completionPolicy={"type": "Always", "activeDeadlineSeconds": 3}
    )
    await kube.create(BROADCASTJOBS, body, namespace)
    await wait_job(kube, namespace, "bcj", active=2, phase="running")
    job = await wait_job(kube, namespace, "bcj", phase="failed", timeout=30)
    failed = condition(job, "Failed")
    assert (
        failed is not None
        and failed["message"] == f"Job {namespace}/bcj was active longer than specified deadline"
    )
    assert (job["status"]["active"], job["status"]["failed"]) == (0, 2)

    async def pods_gone() -> bool:
        return not await job_pods(kube, namespace, "bcj")

    await eventually(pods_gone, timeout=30, what="the job's pods deleted")


async def test_ttl_after_finished_deletes_the_job(kube: KubeClient, namespace: str, nodes: NodePool) -> None:
    await nodes.add_nodes(1, node_label(nodes))
    body = new_job("bcj", nodes, completionPolicy={"type": "Always", "ttlSecondsAfterFinished": 2})
    await kube.create(BROADCASTJOBS, body, namespace)
    await wait_job(kube, namespace, "bcj", phase="completed")

    async def gone() -> bool:
        return await kube.get_or_none(BROADCASTJOBS, "bcj", namespace) is None

    await eventually(gone, timeout=30, what="the finished job deleted after its TTL")


async def test_never_completion_gives_a_late_node_its_pod(
    kube: KubeClient, namespace: str, nodes: NodePool
) -> None:
    """Completion policy Never: the job keeps running; a node that joins gets its pod, and the
    node that already ran never runs again."""
    first = await nodes.add_nodes(1, node_label(nodes))
    await kube.create(BROADCASTJOBS, new_job("bcj", nodes, completionPolicy={"type": "Never"}), namespace)
    await wait_job(kube, namespace, "bcj", succeeded=1, desired=1, phase="running")
    late = await nodes.add_nodes(1, node_label(nodes))
    job = await wait_job(kube, namespace, "bcj", succeeded=2, desired=2, phase="running")
    assert condition(job, "Complete") is None
    await asyncio.sleep(2.0)  # a round or two more: nothing runs again
    pods = await job_pods(kube, namespace, "bcj")
    assert sorted(p["spec"]["nodeName"] for p in pods) == sorted([*first, *late])


async def test_the_webhooks_default_and_refuse_with_upstreams_messages(
    kube: KubeClient, namespace: str, nodes: NodePool
) -> None:
    body = new_job("bcj", nodes)
    body["spec"]["template"]["spec"]["restartPolicy"] = "Always"
    with pytest.raises(InvalidError) as refused:
        await kube.create(BROADCASTJOBS, body, namespace)
    assert "pod restartPolicy can only be Never or OnFailure" in str(refused.value)
    body = new_job("bcj", nodes, completionPolicy={"type": "Never", "ttlSecondsAfterFinished": 5})
    with pytest.raises(InvalidError) as refused:
        await kube.create(BROADCASTJOBS, body, namespace)
    assert "ttlSecondsAfterFinished can just work with Always CompletionPolicyType" in str(refused.value)
    body = new_job("bcj", nodes)
    body["spec"]["template"]["metadata"]["labels"]["broadcastjob-name"] = "x"
    with pytest.raises(InvalidError) as refused:
        await kube.create(BROADCASTJOBS, body, namespace)
    assert (
        '"broadcastjob-name" and "broadcastjob-controller-uid" are not allowed to preset in pod labels'
        in str(refused.value)
    )
    assert await kube.get_or_none(BROADCASTJOBS, "bcj", namespace) is None
    created = await kube.create(BROADCASTJOBS, new_job("bcj", nodes), namespace)
    spec = created["spec"]
    assert spec["completionPolicy"] == {"type": "Always"} and spec["failurePolicy"] == {"type": "FailFast"}
    assert spec["parallelism"] == 2147483647
