"""``plan()`` table by table: upstream's controller unit cases (``broadcastjob_controller_test.go``)
and the rules around them (eligibility, finished nodes, TTL, pause)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from kruise.core.api.base import format_time
from kruise.workloads.api.broadcastjob import BroadcastJobPhase
from kruise.workloads.broadcastjob.plan import Plan, is_finished, plan
from tests.unit.broadcastjob.builders import NOW, job, node, nodes, pod, started

JSON = dict[str, Any]


def counts(p: Plan) -> tuple[int, int, int, int]:
    assert p.status is not None
    return p.status.desired, p.status.active, p.status.succeeded, p.status.failed


def reasons(p: Plan) -> list[str]:
    return [e.reason for e in p.events]


def test_create_pod_absolute_parallelism() -> None:
    """TestReconcileJobCreatePodAbsolute: 3 nodes, one pod running, parallelism 2 -> one new pod."""
    j = job(parallelism=2)
    p = plan(j, nodes(3), [pod(j, "node1")], NOW)
    assert p.create_on == ("node2",)
    assert counts(p) == (3, 2, 0, 0)
    assert p.status is not None and p.status.start_time == NOW
    assert p.status.phase == BroadcastJobPhase.RUNNING


def test_create_pod_percentage_parallelism() -> None:
    """TestReconcileJobCreatePodPercentage: 5 nodes, one pod, parallelism 40% -> 2 active."""
    j = job(parallelism="40%")
    p = plan(j, nodes(5), [pod(j, "node1")], NOW)
    assert p.parallelism == 2
    assert p.create_on == ("node2",)
    assert counts(p) == (5, 2, 0, 0)


def test_unschedulable_node_gets_no_pod() -> None:
    """TestPodsOnUnschedulableNodes: only the schedulable node is desired."""
    j = job()
    p = plan(j, [node("node1", unschedulable=True), node("node2")], [], NOW)
    assert p.create_on == ("node2",)
    assert counts(p) == (1, 1, 0, 0)


def test_unschedulable_node_tolerated() -> None:
    tolerate = {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}
    j = job(pod_spec={"tolerations": [tolerate]})
    assert plan(j, [node("node1", unschedulable=True)], [], NOW).create_on == ("node1",)


def test_all_nodes_at_once_by_default() -> None:
    """TestReconcileJobMultipleBatches: 10 nodes, no parallelism -> 10 pods (batches are the shell's)."""
    p = plan(job(), nodes(10), [], NOW)
    assert len(p.create_on) == 10
    assert counts(p) == (10, 10, 0, 0)


def test_failed_pod_fails_the_job_fail_fast() -> None:
    """TestJobFailed / TestJobFailurePolicyTypeFailFast: a failed pod fails the job at once."""
    j = job()
    pods = [pod(j, "node1", "Succeeded"), pod(j, "node2", "Failed")]
    p = plan(j, nodes(3), pods, NOW)
    assert counts(p) == (3, 0, 1, 1)
    assert p.create_on == ()
    assert p.status is not None and p.status.phase == BroadcastJobPhase.FAILED
    assert p.status.completion_time == NOW
    assert p.status.conditions and p.status.conditions[-1].type == "Failed"
    assert (
        p.status.conditions[-1].message
        == "failure policy is FailurePolicyTypeFailFast and failed pod is found"
    )
    assert "failed pod is found" in reasons(p)


def test_fail_fast_deletes_active_pods_and_counts_them_failed() -> None:
    j = job()
    pods = [pod(j, "node1", "Failed"), pod(j, "node2")]
    p = plan(j, nodes(2), pods, NOW)
    assert p.delete == ("job1-node2",)
    assert counts(p) == (2, 0, 0, 2)


def test_failure_policy_continue() -> None:
    """TestJobFailurePolicyTypeContinue: the job keeps running and fills the rest."""
    j = job(failure={"type": "Continue"})
    pods = [pod(j, "node1", "Succeeded"), pod(j, "node2", "Failed")]
    p = plan(j, nodes(3), pods, NOW)
    assert p.create_on == ("node3",)
    assert counts(p) == (3, 1, 1, 1)
    assert p.status is not None and p.status.phase == BroadcastJobPhase.RUNNING


def test_failure_policy_continue_completes_with_failures() -> None:
    j = job(failure={"type": "Continue"})
    pods = [pod(j, "node1", "Succeeded"), pod(j, "node2", "Failed")]
    p = plan(j, nodes(2), pods, NOW)
    assert p.status is not None and p.status.phase == BroadcastJobPhase.COMPLETED
    assert (
        p.status.conditions
        and p.status.conditions[-1].message == "Job completed, 1 pods succeeded, 1 pods failed"
    )


def test_failure_policy_pause() -> None:
    """TestJobFailurePolicyPause: a failed pod pauses the job; nothing new is created."""
    j = job(failure={"type": "Pause"})
    pods = [pod(j, "node1", "Succeeded"), pod(j, "node2", "Failed")]
    p = plan(j, nodes(3), pods, NOW)
    assert p.status is not None and p.status.phase == BroadcastJobPhase.PAUSED
    assert counts(p) == (3, 0, 1, 1)
    assert p.create_on == () and reasons(p) == ["Paused"]
    again = plan(job(failure={"type": "Pause"}, status=p.status.to_dict()), nodes(3), pods, NOW)
    assert again.status is not None and again.status.phase == BroadcastJobPhase.PAUSED
    assert again.events == () and again.create_on == ()


def test_paused_job_creates_nothing() -> None:
    """TestJobSetPaused: 10 nodes, 3 active pods, paused -> phase paused, no new pod."""
    j = job(parallelism="50%", paused=True)
    pods = [pod(j, f"node{i}") for i in (1, 2, 3)]
    p = plan(j, nodes(10), pods, NOW)
    assert p.status is not None and p.status.phase == BroadcastJobPhase.PAUSED
    assert counts(p) == (10, 3, 0, 0)
    assert p.create_on == ()


def test_unpausing_continues() -> None:
    j = job(parallelism="50%", status={"phase": "paused", "startTime": format_time(NOW)})
    p = plan(j, nodes(10), [], NOW)
    assert p.status is not None and p.status.phase == BroadcastJobPhase.RUNNING
    assert reasons(p) == ["Continue"] and len(p.create_on) == 5


def test_failed_after_active_deadline() -> None:
    """TestJobFailedAfterActiveDeadline: active pods are deleted and counted failed."""
    j = job(completion={"type": "Always", "activeDeadlineSeconds": 10}, status=started(10))
    pods = [pod(j, "node1"), pod(j, "node2")]
    p = plan(j, nodes(2), pods, NOW)
    assert p.status is not None and p.status.phase == BroadcastJobPhase.FAILED
    assert p.status.conditions and p.status.conditions[-1].type == "Failed"
    assert p.status.conditions[-1].message == "Job ns/job1 was active longer than specified deadline"
    assert counts(p) == (2, 0, 0, 2)
    assert set(p.delete) == {"job1-node1", "job1-node2"}
    assert "DeadlineExceeded" in reasons(p)


def test_before_deadline_requeues_for_it() -> None:
    j = job(completion={"type": "Always", "activeDeadlineSeconds": 10}, status=started(4))
    p = plan(j, nodes(1), [pod(j, "node1")], NOW)
    assert p.status is not None and p.status.phase == BroadcastJobPhase.RUNNING
    assert p.requeue_after == pytest.approx(6)


def test_completes_when_every_desired_node_finished() -> None:
    j = job(completion={"type": "Always", "ttlSecondsAfterFinished": 30})
    pods = [pod(j, "node1", "Succeeded"), pod(j, "node2", "Succeeded")]
    p = plan(j, nodes(2), pods, NOW)
    assert p.status is not None and p.status.phase == BroadcastJobPhase.COMPLETED
    assert p.status.conditions and p.status.conditions[-1].type == "Complete"
    assert p.status.completion_time == NOW
    assert p.requeue_after == 31
    assert reasons(p) == ["JobComplete"]


def test_no_desired_node_stays_running() -> None:
    p = plan(job(pod_spec={"nodeSelector": {"pool": "gpu"}}), nodes(2), [], NOW)
    assert p.status is not None and p.status.phase == BroadcastJobPhase.RUNNING
    assert counts(p) == (0, 0, 0, 0)


def _finished(seconds_ago: float, ttl: int | None) -> JSON:
    completion: JSON = {"type": "Always"} | ({} if ttl is None else {"ttlSecondsAfterFinished": ttl})
    done = format_time(NOW - timedelta(seconds=seconds_ago))
    status = {
        "phase": "completed",
        "completionTime": done,
        "conditions": [{"type": "Complete", "status": "True"}],
    }
    return job(completion=completion, status=status)


@pytest.mark.parametrize(
    ("seconds_ago", "ttl", "delete", "requeue"),
    [
        pytest.param(5, 30, False, 25, id="ttl not reached: wait for it"),
        pytest.param(30, 30, True, None, id="ttl reached: delete the job"),
        pytest.param(5, None, False, None, id="no ttl: the job stays"),
    ],
)
def test_finished_job_waits_for_ttl(
    seconds_ago: float, ttl: int | None, delete: bool, requeue: float | None
) -> None:
    j = _finished(seconds_ago, ttl)
    assert is_finished(j)
    p = plan(j, nodes(3), [], NOW)
    assert p.status is None and p.create_on == ()
    assert p.delete_job is delete
    assert p.requeue_after == (pytest.approx(requeue) if requeue is not None else None)


def test_never_policy_gives_a_late_node_its_pod_and_never_finishes() -> None:
    j = job(completion={"type": "Never"})
    pods = [pod(j, "node1", "Succeeded"), pod(j, "node2", "Succeeded")]
    p = plan(j, nodes(3), pods, NOW)
    assert p.create_on == ("node3",)
    assert p.status is not None and p.status.phase == BroadcastJobPhase.RUNNING and not p.status.conditions


def test_finished_or_terminating_node_never_runs_again() -> None:
    j = job(completion={"type": "Never"}, failure={"type": "Continue"})
    pods = [pod(j, "node1", "Succeeded"), pod(j, "node2", "Failed"), pod(j, "node3", terminating=True)]
    assert plan(j, nodes(3), pods, NOW).create_on == ()


def test_unbound_pod_pinned_by_affinity_counts_for_its_node() -> None:
    j = job()
    p = plan(j, nodes(2), [pod(j, "node1", "Pending", bound=False)], NOW)
    assert p.create_on == ("node2",)


def test_restarts_over_limit_count_as_failed() -> None:
    j = job(failure={"type": "Continue", "restartLimit": 2})
    pods = [pod(j, "node1", restarts=3), pod(j, "node2", restarts=2)]
    assert counts(plan(j, nodes(2), pods, NOW)) == (2, 1, 0, 1)


def test_restarts_do_not_count_under_never() -> None:
    j = job(restart_policy="Never", failure={"type": "Continue"})
    assert counts(plan(j, nodes(1), [pod(j, "node1", restarts=5)], NOW)) == (1, 1, 0, 0)


@pytest.mark.parametrize(
    ("target", "pod_spec", "eligible"),
    [
        pytest.param(
            node("n", labels={"pool": "a"}), {"nodeSelector": {"pool": "a"}}, True, id="selector matches"
        ),
        pytest.param(
            node("n", labels={"pool": "b"}), {"nodeSelector": {"pool": "a"}}, False, id="selector misses"
        ),
        pytest.param(
            node("n", taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}]),
            {},
            False,
            id="untolerated taint",
        ),
        pytest.param(
            node("n", taints=[{"key": "k", "value": "v", "effect": "PreferNoSchedule"}]),
            {},
            True,
            id="soft taint",
        ),
        pytest.param(
            node("n", taints=[{"key": "k", "effect": "NoExecute"}]),
            {"tolerations": [{"key": "k", "operator": "Exists"}]},
            True,
            id="tolerated taint",
        ),
        pytest.param(
            node("n", labels={"zone": "z1"}),
            {
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z2"]}]}
                            ]
                        }
                    }
                }
            },
            False,
            id="affinity misses",
        ),
        pytest.param(
            node("n"),
            {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "8"}}}]},
            False,
            id="requests more cpu than allocatable",
        ),
        pytest.param(
            node("n"),
            {"nodeName": "other"},
            True,
            id="the template's nodeName is replaced by the node's (NewMockPod)",
        ),
    ],
)
def test_node_eligibility(target: JSON, pod_spec: JSON, eligible: bool) -> None:
    p = plan(job(pod_spec=pod_spec), [target], [], NOW)
    assert (p.create_on == ("n",)) is eligible
    assert counts(p)[0] == int(eligible)


def test_pod_no_longer_fitting_its_node_is_deleted() -> None:
    j = job(failure={"type": "Continue"})
    tainted = node("node1", taints=[{"key": "k", "effect": "NoExecute"}])
    p = plan(j, [tainted, node("node2")], [pod(j, "node1"), pod(j, "node2")], NOW)
    assert p.delete == ("job1-node1",)
    assert counts(p) == (1, 1, 0, 1)


def test_too_many_active_pods_warns() -> None:
    j = job(parallelism=1)
    p = plan(j, nodes(3), [pod(j, "node1"), pod(j, "node2")], NOW)
    assert p.create_on == () and reasons(p) == ["TooManyActivePods"]


def test_duplicate_pods_on_a_node_warn() -> None:
    j = job()
    p = plan(j, nodes(1), [pod(j, "node1"), pod(j, "node1", name="job1-dup")], NOW)
    assert "DuplicatePodCreatedOnSameNode" in reasons(p)
    assert p.create_on == ()
