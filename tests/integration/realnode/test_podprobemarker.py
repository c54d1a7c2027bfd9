"""PodProbeMarker on the real node: the node's ``kruise daemon`` runs the probes of its
NodePodProbe against a real container and the manager marks the pod.

Named after upstream's ``It``\\ s (``test/e2e/apps/podprobemarker.go``: "pod probe marker exec
test", "pod probe marker tcpCheck test"; the httpCheck one is newer than v1.8, whose webhook
refuses httpGet probes). The exec probe is ``test -f /tmp/ready``: the file is created and
removed through ``crictl exec``, and the pod condition and marker label follow.
"""

from __future__ import annotations

from typing import Any

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import PODS
from kruise.daemon.api.podprobe import NODEPODPROBES, PODPROBEMARKERS
from tests.integration.realnode.conftest import RealNode, condition, real_pod_spec, wait_pod, web_container
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")
JSON = dict[str, Any]
HEALTHY = "game.kruise.io/healthy"
IDLE = "gameserver-idle"
COST = "controller.kubernetes.io/pod-deletion-cost"


def marker_body(*probes: JSON) -> JSON:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "PodProbeMarker",
        "metadata": {"name": "game"},
        "spec": {"selector": {"matchLabels": {"app": "game"}}, "probes": list(probes)},
    }


async def game_pod(kube: KubeClient, namespace: str) -> JSON:
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "game-0", "labels": {"app": "game"}},
        "spec": real_pod_spec(web_container("main", port=8080)),
    }
    await kube.create(PODS, body, namespace)
    return await wait_pod(kube, namespace, "game-0", timeout=120)


async def marked(kube: KubeClient, namespace: str, ctype: str, status: str, label: str | None = None) -> JSON:
    async def probe() -> Any:
        pod = await kube.get(PODS, "game-0", namespace)
        if condition(pod, ctype) != status:
            return None
        if label is not None and (pod["metadata"].get("labels") or {}).get(IDLE) != label:
            return None
        return pod

    pod: JSON = await eventually(probe, timeout=60, what=f"pod condition {ctype}={status}, {IDLE}={label}")
    return pod


def main_container_id(real_node: RealNode, pod: JSON) -> str:
    (sandbox,) = [s for s in real_node.sandboxes(pod["metadata"]["uid"]) if s["state"] == "SANDBOX_READY"]
    running = [c for c in real_node.containers(sandbox["id"], "main") if c["state"] == "CONTAINER_RUNNING"]
    return str(running[-1]["id"])


async def test_pod_probe_marker_exec_test(kube: KubeClient, namespace: str, real_node: RealNode) -> None:
    pod = await game_pod(kube, namespace)
    probe = {
        "name": "healthy",
        "containerName": "main",
        "probe": {"exec": {"command": ["test", "-f", "/tmp/ready"]}, "periodSeconds": 1},
        "podConditionType": HEALTHY,
        "markerPolicy": [
            {"state": "Succeeded", "labels": {IDLE: "true"}, "annotations": {COST: "-10"}},
            {"state": "Failed", "labels": {IDLE: "false"}},
        ],
    }
    await kube.create(PODPROBEMARKERS, marker_body(probe), namespace)
    await marked(kube, namespace, HEALTHY, "False", "false")
    npp = await kube.get(NODEPODPROBES, real_node.name)
    (state,) = [
        s
        for status in npp["status"]["podProbeStatuses"]
        if status["uid"] == pod["metadata"]["uid"]
        for s in status["probeStates"]
    ]
    assert (state["name"], state["state"]) == ("game#healthy", "Failed")
    assert state["lastProbeTime"] and state["lastTransitionTime"]

    container = main_container_id(real_node, pod)
    real_node.local.crictl(real_node.name, "exec", container, "mkdir", "-p", "/tmp")
    real_node.local.crictl(real_node.name, "exec", container, "touch", "/tmp/ready")
    pod = await marked(kube, namespace, HEALTHY, "True", "true")
    assert pod["metadata"]["annotations"][COST] == "-10"

    real_node.local.crictl(real_node.name, "exec", container, "rm", "-f", "/tmp/ready")
    pod = await marked(kube, namespace, HEALTHY, "False", "false")
    assert COST not in (pod["metadata"].get("annotations") or {})

    await kube.delete(PODPROBEMARKERS, "game", namespace)

    async def cleaned() -> bool:
        npp = await kube.get(NODEPODPROBES, real_node.name)
        entries = [e for e in (npp.get("spec") or {}).get("podProbes") or () if e["namespace"] == namespace]
        return not entries and await kube.get_or_none(PODPROBEMARKERS, "game", namespace) is None

    await eventually(cleaned, timeout=30, what="the marker's probes removed from the node's NodePodProbe")


async def test_pod_probe_marker_tcpcheck_test(kube: KubeClient, namespace: str, real_node: RealNode) -> None:
    await game_pod(kube, namespace)
    open_port = {
        "name": "serving",
        "containerName": "main",
        "probe": {"tcpSocket": {"port": 8080}, "periodSeconds": 1},
        "podConditionType": "game.kruise.io/serving",
    }
    closed_port = {
        "name": "admin",
        "containerName": "main",
        "probe": {"tcpSocket": {"port": 9099}, "periodSeconds": 1, "timeoutSeconds": 1},
        "podConditionType": "game.kruise.io/admin",
    }
    await kube.create(PODPROBEMARKERS, marker_body(open_port, closed_port), namespace)
    await marked(kube, namespace, "game.kruise.io/serving", "True")
    await marked(kube, namespace, "game.kruise.io/admin", "False")
