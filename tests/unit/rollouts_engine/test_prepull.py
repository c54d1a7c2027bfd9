"""Ours: pre-pulling the next batch's images (the pure core, :mod:`kruise.rollouts.rollout.prepull`)."""

from __future__ import annotations

from typing import Any

from kruise.rollouts.rollout.prepull import (
    CONDITION_TYPE,
    PREPULL_ANNOTATION,
    condition,
    next_batch_pods,
    plan_prepull,
    pull_job,
)

JSON = dict[str, Any]
OLD, NEW = "web:1", "web:2"


def pod(name: str, node: str, revision: str = "web-old", image: str = OLD, **labels: str) -> JSON:
    return {
        "metadata": {
            "name": name,
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "labels": {"controller-revision-hash": revision, **labels},
        },
        "spec": {"nodeName": node, "containers": [{"name": "web", "image": image}]},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
    }


def cloneset(replicas: int = 4, **strategy: Any) -> JSON:
    return {
        "kind": "CloneSet",
        "spec": {
            "replicas": replicas,
            "template": {"spec": {"containers": [{"name": "web", "image": NEW}]}},
            "updateStrategy": {"type": "InPlaceIfPossible", **strategy},
        },
        "status": {"updateRevision": "web-new"},
    }


def rollout(step: int = 1, state: str = "StepPaused", annotated: bool = True) -> JSON:
    return {
        "apiVersion": "rollouts.kruise.io/v1beta1",
        "metadata": {
            "name": "web",
            "namespace": "ns",
            "uid": "r1",
            "annotations": {PREPULL_ANNOTATION: "true"} if annotated else {},
        },
        "spec": {
            "strategy": {
                "canary": {
                    "steps": [
                        {"replicas": 1, "pause": {}},
                        {"replicas": 3, "pause": {}},
                        {"replicas": "100%"},
                    ]
                }
            }
        },
        "status": {
            "phase": "Progressing",
            "canaryStatus": {"currentStepIndex": step, "currentStepState": state},
        },
    }


PODS = [
    pod("web-a", "node-a", "web-new", NEW),
    pod("web-b", "node-b"),
    pod("web-c", "node-c"),
    pod("web-d", "node-d"),
]


def test_next_step_nodes_follow_the_cloneset_priority_order() -> None:
    prio = {"weightPriority": [{"weight": 50, "matchSelector": {"matchLabels": {"first": "yes"}}}]}
    pods = [*PODS[:3], pod("web-d", "node-d", first="yes")]
    plan = plan_prepull(rollout(), cloneset(priorityStrategy=prio), pods)
    assert plan is not None
    assert plan.step == 2
    assert plan.images == {"web": NEW}
    chosen = next_batch_pods(cloneset(priorityStrategy=prio), pods, "web-new", 3)
    assert chosen[0]["metadata"]["name"] == "web-d"
    assert len(chosen) == 2
    assert set(plan.nodes) == {p["spec"]["nodeName"] for p in chosen}
    assert plan.message == f"pre-pull on: {', '.join(plan.nodes)}"


def test_nodes_are_deduplicated_and_sorted() -> None:
    pods = [PODS[0], pod("web-b", "node-z"), pod("web-c", "node-z"), pod("web-d", "node-y")]
    plan = plan_prepull(rollout(), cloneset(), pods)
    assert plan is not None
    assert len(plan.nodes) in (1, 2) and list(plan.nodes) == sorted(plan.nodes)


def test_nothing_without_annotation_or_waiting_step_or_next_step() -> None:
    assert plan_prepull(rollout(annotated=False), cloneset(), PODS) is None
    assert plan_prepull(rollout(state="StepUpgrade"), cloneset(), PODS) is None
    assert plan_prepull(rollout(step=3), cloneset(), PODS) is None
    assert plan_prepull(rollout(), None, PODS) is None
    done = rollout()
    done["status"]["phase"] = "Healthy"
    assert plan_prepull(done, cloneset(), PODS) is None


def test_analysing_step_plans_too() -> None:
    assert plan_prepull(rollout(state="StepMetricsAnalysis"), cloneset(), PODS) is not None


def test_no_plan_when_every_pod_already_updated_or_images_unchanged() -> None:
    updated = [pod(f"web-{i}", f"n{i}", "web-new", NEW) for i in range(4)]
    assert plan_prepull(rollout(), cloneset(), updated) is None
    same = cloneset()
    same["spec"]["template"]["spec"]["containers"][0]["image"] = OLD
    assert plan_prepull(rollout(), same, PODS) is None


def test_statefulset_updates_highest_ordinal_first() -> None:
    sts = {**cloneset(), "kind": "StatefulSet"}
    pods = [pod(f"web-{i}", f"n{i}") for i in range(4)]
    assert [p["metadata"]["name"] for p in next_batch_pods(sts, pods, "web-new", 2)] == ["web-3", "web-2"]


def test_job_and_condition() -> None:
    job = pull_job(rollout(), "web", NEW, ["node-b", "node-c"])
    assert job["metadata"]["name"] == "web-prepull-web"
    assert job["spec"]["selector"] == {"names": ["node-b", "node-c"]}
    assert job["metadata"]["ownerReferences"][0]["uid"] == "r1"
    plan = plan_prepull(rollout(), cloneset(), PODS)
    conds = condition({"conditions": [{"type": "Progressing"}]}, plan, "t1")
    assert [c["type"] for c in conds] == ["Progressing", CONDITION_TYPE]
    again = condition({"conditions": conds}, plan, "t2")
    assert again[-1]["lastTransitionTime"] == "t1"
    assert condition({"conditions": conds}, None, "t3") == [{"type": "Progressing"}]
