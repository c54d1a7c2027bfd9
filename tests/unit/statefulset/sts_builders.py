"""Builders for Advanced StatefulSet, revision and pod dicts (the StatefulSet unit tests)."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

from kruise.workloads.objects import format_time
from kruise.workloads.revisions import new_revision
from kruise.workloads.statefulset.identity import STATEFULSET_KIND, new_pod
from kruise.workloads.statefulset.plan import Plan, plan
from kruise.workloads.statefulset.round import Options, World

NOW = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
JSON = dict[str, Any]


def statefulset(
    replicas: int = 3,
    *,
    image: str = "nginx:1",
    parallel: bool = False,
    rolling: JSON | None = None,
    update_type: str = "RollingUpdate",
    in_place: bool = False,
    **spec: Any,
) -> JSON:
    pod_spec: JSON = {"containers": [{"name": "main", "image": image}]}
    if in_place:
        pod_spec["readinessGates"] = [{"conditionType": "InPlaceUpdateReady"}]
    strategy: JSON = {"type": update_type}
    if update_type == "RollingUpdate":
        strategy["rollingUpdate"] = {
            "partition": 0,
            "maxUnavailable": 1,
            "podUpdatePolicy": "InPlaceIfPossible" if in_place else "ReCreate",
            "minReadySeconds": 0,
            **(rolling or {}),
        }
    return {
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": "ns", "uid": "set-uid", "generation": 2},
        "spec": {
            "replicas": replicas,
            "serviceName": "svc",
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": pod_spec},
            "podManagementPolicy": "Parallel" if parallel else "OrderedReady",
            "updateStrategy": strategy,
            "revisionHistoryLimit": 10,
            **spec,
        },
        "status": {},
    }


def revision(sts: JSON, number: int = 1) -> JSON:
    rev = new_revision(sts, number, 0, controller=STATEFULSET_KIND)
    rev["metadata"]["uid"] = f"rev-{number}"
    return rev


def with_image(sts: JSON, image: str) -> JSON:
    out = copy.deepcopy(sts)
    out["spec"]["template"]["spec"]["containers"][0]["image"] = image
    return out


def running(pod: JSON, *, ready: bool = True, since: datetime = NOW - timedelta(minutes=5)) -> JSON:
    """The pod as the API server shows it once scheduled and started (Ready unless told)."""
    out = copy.deepcopy(pod)
    out["metadata"]["uid"] = f"uid-{pod['metadata']['name']}"
    out["metadata"]["resourceVersion"] = "1"
    out["spec"]["nodeName"] = "node-1"
    status = "True" if ready else "False"
    out["status"] = {
        "phase": "Running",
        "conditions": [
            {"type": "Ready", "status": status, "lastTransitionTime": format_time(since)},
            {"type": "KruisePodReady", "status": "True"},
        ],
        "containerStatuses": [
            {"name": c["name"], "image": c["image"], "imageID": f"id-{c['image']}", "ready": ready}
            for c in out["spec"]["containers"]
        ],
    }
    return out


def pods_at(sts: JSON, rev: JSON, ordinals: list[int], **state: Any) -> list[JSON]:
    return [running(new_pod(sts, rev, o, NOW), **state) for o in ordinals]


def decide(
    sts: JSON,
    pods: list[JSON],
    *,
    current: JSON | None = None,
    update: JSON | None = None,
    revisions: list[JSON] | None = None,
    claims: dict[str, JSON] | None = None,
    options: Options | None = None,
    now: datetime = NOW,
) -> Plan:
    update = update or revision(sts)
    current = current or update
    revs = revisions or ([current, update] if current is not update else [update])
    world = World(sts, pods, claims or {}, current, update, revs, 0, now)
    return plan(world, options or Options())
