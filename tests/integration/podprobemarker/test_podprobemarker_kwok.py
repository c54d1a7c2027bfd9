"""PodProbeMarker on the real control plane with KWOK nodes (no daemon: the tests write the
NodePodProbe status as the node's kruise-daemon would).

Covers the webhook (upstream's refusals, nothing stored), the aggregation of markers into one
NodePodProbe per node, the finalizer ``kruise.io/node-pod-probe-cleanup``, the pod condition and
marker labels/annotations that follow the probe states, and the cleanup when a marker goes.
"""

from __future__ import annotations

from typing import Any

import pytest

from kruise.core.errors import KruiseError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import PODS
from kruise.daemon.api.podprobe import NODEPODPROBES, PODPROBEMARKERS
from tests.integration.crr.helpers import condition, pod_body
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")
JSON = dict[str, Any]
FINALIZER = "kruise.io/node-pod-probe-cleanup"


def marker(ppm_name: str, **probe: Any) -> JSON:
    base: JSON = {
        "name": "healthy",
        "containerName": "app",
        "probe": {"exec": {"command": ["test", "-f", "/tmp/ready"]}, "periodSeconds": 1},
        "podConditionType": "game.kruise.io/healthy",
        "markerPolicy": [
            {"state": "Succeeded", "labels": {"gameserver": "ready"}, "annotations": {"cost": "10"}},
            {"state": "Failed", "labels": {"gameserver": "notready"}},
        ],
    }
    base.update(probe)
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "PodProbeMarker",
        "metadata": {"name": ppm_name},
        "spec": {"selector": {"matchLabels": {"app": "game"}}, "probes": [base]},
    }


async def test_webhook_refuses_with_upstreams_messages(kube: KubeClient, namespace: str) -> None:
    cases = [
        (marker("a", name="x#y"), "probe name can't contains '#'."),
        (
            marker("b", probe={"httpGet": {"port": 80, "path": "/"}}),
            "Forbidden: current no support http probe",
        ),
        (marker("c", podConditionType=None, markerPolicy=None), "cannot be empty at the same time"),
    ]
    for body, message in cases:
        with pytest.raises(KruiseError) as err:
            await kube.create(PODPROBEMARKERS, body, namespace)
        assert message in str(err.value)
        assert await kube.get_or_none(PODPROBEMARKERS, body["metadata"]["name"], namespace) is None
    await kube.create(PODPROBEMARKERS, marker("ok"), namespace)
    patch = {"spec": {"selector": {"matchLabels": {"app": "other"}}}}
    with pytest.raises(KruiseError) as err:
        await kube.patch(PODPROBEMARKERS, "ok", patch, namespace)
    assert "selector must be immutable" in str(err.value)


async def test_marker_probes_reach_the_nodepodprobe_and_states_mark_the_pod(
    kube: KubeClient, namespace: str
) -> None:
    body = pod_body("game-0")
    body["metadata"]["labels"] = {"app": "game"}
    body["spec"]["containers"] = body["spec"]["containers"][:1]
    await kube.create(PODS, body, namespace)

    async def running() -> Any:
        pod = await kube.get(PODS, "game-0", namespace)
        return pod if pod["status"].get("phase") == "Running" and pod["status"].get("podIP") else None

    pod = await eventually(running, what="game-0 running")
    node = pod["spec"]["nodeName"]
    await kube.create(PODPROBEMARKERS, marker("m"), namespace)

    async def in_npp() -> Any:
        npp = await kube.get_or_none(NODEPODPROBES, node)
        for entry in ((npp or {}).get("spec") or {}).get("podProbes") or ():
            if entry["namespace"] == namespace and entry["name"] == "game-0":
                return npp
        return None

    npp = await eventually(in_npp, timeout=30, what="the pod's probes in its node's NodePodProbe")
    entry = next(e for e in npp["spec"]["podProbes"] if e["namespace"] == namespace)
    assert entry["uid"] == pod["metadata"]["uid"] and entry["IP"] == pod["status"]["podIP"]
    assert [(p["name"], p["containerName"]) for p in entry["probes"]] == [("m#healthy", "app")]
    ppm = await kube.get(PODPROBEMARKERS, "m", namespace)
    assert FINALIZER in ppm["metadata"]["finalizers"]

    async def counted() -> Any:
        current = await kube.get(PODPROBEMARKERS, "m", namespace)
        return current if (current.get("status") or {}).get("matchedPods") == 1 else None

    await eventually(counted, what="status.matchedPods")

    async def write_state(state: str) -> None:
        fresh = await kube.get(NODEPODPROBES, node)
        fresh["status"] = {
            "podProbeStatuses": [
                {
                    "name": "game-0",
                    "namespace": namespace,
                    "uid": pod["metadata"]["uid"],
                    "probeStates": [
                        {
                            "name": "m#healthy",
                            "state": state,
                            "lastProbeTime": "2025-01-01T00:00:00Z",
                            "lastTransitionTime": "2025-01-01T00:00:00Z",
                        }
                    ],
                }
            ]
        }
        await kube.replace(NODEPODPROBES, fresh, subresource="status")

    await write_state("Succeeded")

    async def marked(value: str, status: str) -> Any:
        current = await kube.get(PODS, "game-0", namespace)
        ok = (current["metadata"].get("labels") or {}).get("gameserver") == value
        return (
            current if ok and condition(current, "game.kruise.io/healthy").get("status") == status else None
        )

    current = await eventually(lambda: marked("ready", "True"), timeout=30, what="pod marked ready")
    assert current["metadata"]["annotations"]["cost"] == "10"
    await write_state("Failed")
    current = await eventually(lambda: marked("notready", "False"), timeout=30, what="pod marked notready")
    # the other state's policy keys go (upstream sets them to null in the patch)
    assert "cost" not in (current["metadata"].get("annotations") or {})

    await kube.delete(PODPROBEMARKERS, "m", namespace)

    async def cleaned() -> bool:
        gone = await kube.get_or_none(PODPROBEMARKERS, "m", namespace) is None
        npp = await kube.get(NODEPODPROBES, node)
        left = [e for e in (npp.get("spec") or {}).get("podProbes") or () if e["namespace"] == namespace]
        return gone and not left

    await eventually(cleaned, timeout=30, what="marker deleted and its probes removed")
