"""Builders for the BroadcastJob unit tests: jobs, nodes, pods in every state."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from kruise.core.api.base import format_time
from kruise.workloads.broadcastjob.jobpods import new_pod

JSON = dict[str, Any]
NOW = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
UID = "bcj-uid"


def job(
    *,
    parallelism: int | str | None = None,
    completion: JSON | None = None,
    failure: JSON | None = None,
    paused: bool = False,
    restart_policy: str = "OnFailure",
    pod_spec: JSON | None = None,
    status: JSON | None = None,
) -> JSON:
    """A BroadcastJob ``ns/job1`` as the mutating webhook leaves it (unset fields stay unset)."""
    spec: JSON = {
        "template": {
            "metadata": {"labels": {"app": "job1"}},
            "spec": {"containers": [{"name": "c", "image": "busybox"}], "restartPolicy": restart_policy}
            | (pod_spec or {}),
        },
        "completionPolicy": completion or {"type": "Always"},
        "failurePolicy": failure or {"type": "FailFast"},
        "paused": paused,
    }
    if parallelism is not None:
        spec["parallelism"] = parallelism
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "BroadcastJob",
        "metadata": {"name": "job1", "namespace": "ns", "uid": UID},
        "spec": spec,
        "status": status or {},
    }


def node(name: str, *, labels: JSON | None = None, taints: list[JSON] | None = None, **spec: Any) -> JSON:
    """A Ready node with room for 110 pods, 4 CPUs and 8Gi."""
    node_spec: JSON = dict(spec)
    if taints:
        node_spec["taints"] = taints
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name} | (labels or {})},
        "spec": node_spec,
        "status": {"allocatable": {"pods": "110", "cpu": "4", "memory": "8Gi"}},
    }


def nodes(count: int) -> list[JSON]:
    return [node(f"node{i}") for i in range(1, count + 1)]


def pod(
    j: JSON,
    node_name: str,
    phase: str = "Running",
    *,
    name: str | None = None,
    restarts: int = 0,
    terminating: bool = False,
    bound: bool = True,
) -> JSON:
    """A pod of ``j`` for ``node_name`` (bound there unless ``bound`` is false)."""
    p = new_pod(j, node_name)
    p["metadata"]["name"] = name or f"job1-{node_name}"
    p["metadata"]["uid"] = f"uid-{p['metadata']['name']}"
    if terminating:
        p["metadata"]["deletionTimestamp"] = format_time(NOW)
    if bound:
        p["spec"]["nodeName"] = node_name
    p["status"] = {"phase": phase, "containerStatuses": [{"name": "c", "restartCount": restarts}]}
    return p


def started(seconds_ago: float) -> JSON:
    return {"startTime": format_time(NOW - timedelta(seconds=seconds_ago)), "phase": "running"}
