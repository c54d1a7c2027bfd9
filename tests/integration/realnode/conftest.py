"""The real-node group: a kubelet and containerd joined to the session's control plane.

``real_node`` adds one real node to the shared session cluster for this package only and
removes it afterwards (undoing its host changes), so the other suites see the same three
KWOK nodes as always and pay nothing. It never skips: a node that cannot start is an error
of every test here (``make test`` fails), with the component's log tail in the message.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import PODS
from kruise.core.localcluster import LocalCluster
from kruise.core.localcluster.realnode import busybox, pod_placement
from tests.support.cluster import TestCluster
from tests.support.wait import eventually

JSON = dict[str, Any]
HOST_WAIT_SECONDS = 900


@dataclass
class RealNode:
    """The node under test and the cluster running it."""

    name: str
    node_ip: str
    local: LocalCluster

    def crictl_json(self, *args: str) -> Any:
        return json.loads(self.local.crictl(self.name, *args, "-o", "json"))

    def sandboxes(self, pod_uid: str) -> list[JSON]:
        """CRI pod sandboxes of the pod ``pod_uid`` (ready or not)."""
        items = self.crictl_json("pods", "--label", f"io.kubernetes.pod.uid={pod_uid}")["items"]
        return list(items)

    def containers(self, sandbox_id: str, name: str | None = None) -> list[JSON]:
        """Every container (every attempt, exited ones too) of a sandbox, oldest attempt first."""
        args = ["ps", "--all", "--pod", sandbox_id] + (["--name", f"^{name}$"] if name else [])
        items = self.crictl_json(*args)["containers"]
        return sorted(items, key=lambda c: int(c["metadata"].get("attempt") or 0))


@pytest.fixture(scope="package")
def real_node(cluster: TestCluster) -> Iterator[RealNode]:
    """One real node (kubelet + containerd) in the session cluster while this package runs."""
    if cluster.local is None:
        pytest.fail("the real-node group needs the embedded cluster (it starts a kubelet on this machine)")
    t0 = time.monotonic()
    # another test session on this machine may hold the real nodes for a while: take turns
    (name,) = cluster.local.add_real_nodes(1, wait_for_host=HOST_WAIT_SECONDS)
    (plan,) = cluster.local.real_node_plans()
    timings = cluster.local.state.real_node_timings if cluster.local.state else {}
    print(f"\n[kruise] real node {name} Ready after {time.monotonic() - t0:.1f}s ({timings})")
    try:
        yield RealNode(name=name, node_ip=plan.node_ip, local=cluster.local)
    finally:
        cluster.local.remove_real_nodes()
        assert cluster.local.undo_problems == [], cluster.local.undo_problems


def web_container(name: str = "web", tag: str = "v1", port: int = 8080, **extra: Any) -> JSON:
    """A busybox container serving HTTP on ``port``, Ready when it answers."""
    return {
        "name": name,
        "image": busybox(tag),
        "env": [{"name": "PORT", "value": str(port)}],
        "readinessProbe": {"httpGet": {"path": "/", "port": port}, "periodSeconds": 1, "failureThreshold": 1},
        **extra,
    }


def real_pod_spec(*containers: JSON, grace: int = 5) -> JSON:
    """A pod spec placed on the real node."""
    return {**pod_placement(), "terminationGracePeriodSeconds": grace, "containers": list(containers)}


def condition(pod: JSON, ctype: str) -> str | None:
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == ctype:
            return str(cond.get("status"))
    return None


def container_status(pod: JSON, name: str) -> JSON:
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        if status.get("name") == name:
            return dict(status)
    return {}


async def wait_pod(kube: KubeClient, namespace: str, name: str, timeout: float = 60) -> JSON:
    """The pod once Running and Ready."""

    async def probe() -> JSON | None:
        pod = await kube.get(PODS, name, namespace)
        ok = (pod.get("status") or {}).get("phase") == "Running" and condition(pod, "Ready") == "True"
        return pod if ok else None

    return await eventually(probe, timeout=timeout, what=f"pod {name} Running and Ready")
