"""Builders for the Advanced DaemonSet unit tests: DaemonSets, nodes, pods, revisions, and a tiny
world that applies a :class:`~kruise.workloads.daemonset.plan.Plan` the way the cluster would."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from kruise.workloads.daemonset.daemonpods import DAEMONSET_KIND, new_pod
from kruise.workloads.daemonset.plan import FailedBackoff, Plan, plan
from kruise.workloads.revisions import new_revision

JSON = dict[str, Any]
NOW = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
LONG_AGO = NOW - timedelta(hours=1)
UID = "ds-uid"


def daemonset(
    *,
    image: str = "nginx:1",
    rolling: JSON | None = None,
    strategy_type: str = "RollingUpdate",
    lifecycle: JSON | None = None,
    min_ready: int = 0,
    node_selector: JSON | None = None,
    tolerations: list[JSON] | None = None,
    annotations: JSON | None = None,
    burst: int | str | None = None,
) -> JSON:
    """A defaulted DaemonSet (``maxUnavailable: 1`` unless ``rolling`` says otherwise)."""
    pod_spec: JSON = {"containers": [{"name": "main", "image": image}]}
    if node_selector:
        pod_spec["nodeSelector"] = node_selector
    if tolerations:
        pod_spec["tolerations"] = tolerations
    strategy: JSON = {"type": strategy_type}
    if strategy_type == "RollingUpdate":
        strategy["rollingUpdate"] = {"rollingUpdateType": "Standard", "maxUnavailable": 1, "maxSurge": 0}
        strategy["rollingUpdate"].update(rolling or {})
    ds: JSON = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "DaemonSet",
        "metadata": {
            "name": "ds",
            "namespace": "ns",
            "uid": UID,
            "generation": 1,
            "annotations": annotations or {},
        },
        "spec": {
            "selector": {"matchLabels": {"app": "ds"}},
            "template": {"metadata": {"labels": {"app": "ds"}}, "spec": pod_spec},
            "updateStrategy": strategy,
            "burstReplicas": 250 if burst is None else burst,
            "revisionHistoryLimit": 10,
            "minReadySeconds": min_ready,
        },
    }
    if lifecycle:
        ds["spec"]["lifecycle"] = lifecycle
    return ds


def with_image(ds: JSON, image: str) -> JSON:
    out = copy.deepcopy(ds)
    out["spec"]["template"]["spec"]["containers"][0]["image"] = image
    return out


def revision(ds: JSON, number: int) -> JSON:
    rev = new_revision(ds, number, None, controller=DAEMONSET_KIND)
    rev["metadata"]["creationTimestamp"] = "2025-01-01T00:00:00Z"
    return rev


def hash_of(rev: JSON) -> str:
    return str(rev["metadata"]["labels"]["controller-revision-hash"])


def node(name: str, labels: JSON | None = None, taints: list[JSON] | None = None, **spec: Any) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": {**({"taints": taints} if taints else {}), **spec},
    }


def nodes(count: int, **kw: Any) -> list[JSON]:
    return [node(f"n{i:02d}", **kw) for i in range(count)]


def ready_condition(since: datetime = LONG_AGO, status: str = "True") -> JSON:
    return {"type": "Ready", "status": status, "lastTransitionTime": since.strftime("%Y-%m-%dT%H:%M:%SZ")}


def pod_on(
    ds: JSON,
    rev: JSON,
    node_name: str,
    *,
    name: str | None = None,
    ready: bool = True,
    ready_since: datetime = LONG_AGO,
    created: datetime = LONG_AGO,
    phase: str = "Running",
    bound: bool = True,
    state: str | None = None,
    extra_labels: JSON | None = None,
) -> JSON:
    """A pod of ``ds`` at revision ``rev`` on ``node_name`` (as the controller creates it)."""
    at = copy.deepcopy(ds)
    at["spec"]["template"] = rev["data"]["spec"]["template"] | {}
    at["spec"]["template"].pop("$patch", None)
    pod = new_pod(at, hash_of(rev), node_name, name or f"ds-{node_name}-{hash_of(rev)[:4]}", NOW)
    pod["metadata"]["uid"] = f"uid-{pod['metadata']['name']}"
    pod["metadata"]["creationTimestamp"] = created.strftime("%Y-%m-%dT%H:%M:%SZ")
    if state:
        pod["metadata"]["labels"]["lifecycle.apps.kruise.io/state"] = state
    pod["metadata"]["labels"].update(extra_labels or {})
    if bound:
        pod["spec"]["nodeName"] = node_name
    conditions = [ready_condition(ready_since, "True" if ready else "False")]
    pod["status"] = {"phase": phase, "conditions": conditions}
    return pod


@dataclass
class World:
    """Nodes, pods and revisions; :meth:`step` plans and applies like an obliging cluster."""

    ds: JSON
    nodes: list[JSON]
    revisions: list[JSON]
    pods: list[JSON] = field(default_factory=list)
    now: datetime = NOW
    ready_on_create: bool = True
    backoff: dict[str, FailedBackoff] = field(default_factory=dict)
    created: int = 0

    def plan(self) -> Plan:
        return plan(self.ds, self.nodes, self.pods, self.revisions, self.now, backoff=self.backoff)

    def step(self) -> Plan:
        decided = self.plan()
        self.apply(decided)
        return decided

    def apply(self, decided: Plan) -> None:
        update = self.revisions[-1]
        by_name = {p["metadata"]["name"]: p for p in self.pods}
        gone = {d.pod for d in decided.delete}
        for name in [d.pod for d in decided.pre_delete]:
            by_name[name]["metadata"]["labels"]["lifecycle.apps.kruise.io/state"] = "PreparingDelete"
        for change in decided.in_place:
            pod = by_name[change.pod]
            pod["metadata"]["labels"]["controller-revision-hash"] = change.spec.revision
            for container in pod["spec"]["containers"]:
                container["image"] = change.spec.container_images.get(container["name"], container["image"])
        self.pods = [p for p in self.pods if p["metadata"]["name"] not in gone]
        for node_name in decided.create:
            self.created += 1
            self.pods.append(
                pod_on(
                    self.ds,
                    update,
                    node_name,
                    name=f"ds-new-{self.created}",
                    ready=self.ready_on_create,
                    ready_since=self.now,
                    created=self.now,
                )
            )

    def live_on(self, node_name: str) -> list[JSON]:
        return [
            p
            for p in self.pods
            if p["spec"].get("nodeName") == node_name and not p["metadata"].get("deletionTimestamp")
        ]

    def updated(self) -> int:
        wanted = hash_of(self.revisions[-1])
        return sum(1 for p in self.pods if p["metadata"]["labels"]["controller-revision-hash"] == wanted)
