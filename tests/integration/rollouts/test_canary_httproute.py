"""A canary release of the example CloneSet steered by a Rollout over a Gateway API HTTPRoute.

Upstream scenario group: "CloneSet canary rollout with Ingress > CloneSet V1->V2:
Percentage, 20%,60% Succeeded" and "Canary rollout with Gateway API", here with the
issue's steps 20% / 50% / 100% and traffic 5% / 50% / 100%, approved step by step
with ``kruise rollout approve`` as a user would.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kruise.core.kube import KubeClient, Resource
from kruise.core.kube.resources import CLONESETS, PODS, SERVICES
from kruise.rollouts.resources import BATCH_RELEASES, ROLLOUTS
from tests.integration.cloneset.test_cloneset_inplace import web_cloneset
from tests.support.cluster import TestCluster
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")
HTTPROUTES = Resource("gateway.networking.k8s.io", "v1", "httproutes", "HTTPRoute")
KRUISE = str(Path(sys.executable).parent / "kruise")


def service(namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]},
    }


def httproute(namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {
            "parentRefs": [{"name": "shop-gateway"}],
            "rules": [{"backendRefs": [{"name": "web", "port": 80}]}],
        },
    }


def rollout(namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "rollouts.kruise.io/v1beta1",
        "kind": "Rollout",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {
            "workloadRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"},
            "strategy": {
                "canary": {
                    "steps": [
                        {"replicas": "20%", "traffic": "5%", "pause": {}},
                        {"replicas": "50%", "traffic": "50%", "pause": {}},
                        {"replicas": "100%", "traffic": "100%"},
                    ],
                    "trafficRoutings": [
                        {"service": "web", "gracePeriodSeconds": 1, "gateway": {"httpRouteName": "web"}}
                    ],
                }
            },
        },
    }


def weights(route: dict[str, Any]) -> dict[str, int]:
    refs = route["spec"]["rules"][0]["backendRefs"]
    return {r["name"]: int(r.get("weight", 1)) for r in refs}


async def pods_by_image(kube: KubeClient, namespace: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for pod in (await kube.list(PODS, namespace, label_selector="app=web"))["items"]:
        if pod["metadata"].get("deletionTimestamp"):
            continue
        image = pod["status"].get("containerStatuses", [{}])[0].get("image", "")
        out[image] = out.get(image, 0) + 1
    return out


def kruise(*args: str, cluster: TestCluster, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [KRUISE, *args, f"--kubeconfig={cluster.kubeconfig}"], capture_output=True, text=True, timeout=timeout
    )


async def wait_paused_at(kube: KubeClient, namespace: str, step: int) -> dict[str, Any]:
    async def probe() -> dict[str, Any] | None:
        ro = await kube.get(ROLLOUTS, "web", namespace)
        cs = (ro.get("status") or {}).get("canaryStatus") or {}
        return (
            ro if (cs.get("currentStepIndex"), cs.get("currentStepState")) == (step, "StepPaused") else None
        )

    return await eventually(probe, timeout=90, interval=0.5, what=f"rollout paused at step {step}")


async def test_canary_release_over_httproute_with_approvals(
    kube: KubeClient, namespace: str, cluster: TestCluster
) -> None:
    v1, v2 = "registry.example.com/shop/web:1.4.0", "registry.example.com/shop/web:1.5.0"
    await kube.create(SERVICES, service(namespace), namespace)
    await kube.create(HTTPROUTES, httproute(namespace), namespace)
    await kube.create(CLONESETS, web_cloneset(namespace, partition=0), namespace)

    async def all_ready() -> bool:
        st = (await kube.get(CLONESETS, "web", namespace)).get("status") or {}
        return st.get("readyReplicas") == 10

    await eventually(all_ready, timeout=60, what="10 ready pods")
    await kube.create(ROLLOUTS, rollout(namespace), namespace)

    async def healthy() -> dict[str, Any] | None:
        ro = await kube.get(ROLLOUTS, "web", namespace)
        return ro if (ro.get("status") or {}).get("phase") == "Healthy" else None

    await eventually(healthy, timeout=30, what="Rollout Healthy")
    plan = kruise("rollout", "plan", "rollout/web", "-n", namespace, "-o", "json", cluster=cluster)
    assert plan.returncode == 0, plan.stderr
    assert [(s["canaryPods"], s["stablePods"], s["canaryWeight"]) for s in json.loads(plan.stdout)] == [
        (2, 8, 5),
        (5, 5, 50),
        (10, 0, 100),
    ]

    patch = {"spec": {"template": {"spec": {"containers": [{"name": "web", "image": v2}]}}}}
    await kube.patch(CLONESETS, "web", patch, namespace, patch_type="merge")

    # step 1: 2 canary pods, 5% of the traffic
    await wait_paused_at(kube, namespace, 1)
    assert await pods_by_image(kube, namespace) == {v1: 8, v2: 2}
    assert weights(await kube.get(HTTPROUTES, "web", namespace)) == {"web": 95, "web-canary": 5}
    canary_svc = await kube.get(SERVICES, "web-canary", namespace)
    stable_svc = await kube.get(SERVICES, "web", namespace)
    cs = await kube.get(CLONESETS, "web", namespace)
    new_hash = cs["status"]["updateRevision"].rsplit("-", 1)[1]
    old_hash = cs["status"]["currentRevision"].rsplit("-", 1)[1]
    assert canary_svc["spec"]["selector"] == {"app": "web", "pod-template-hash": new_hash}
    assert stable_svc["spec"]["selector"] == {"app": "web", "pod-template-hash": old_hash}
    assert (await kube.get(BATCH_RELEASES, "web", namespace))["spec"]["releasePlan"]["batchPartition"] == 0

    approved = kruise("rollout", "approve", "rollout/web", "-n", namespace, cluster=cluster)
    assert approved.returncode == 0, approved.stdout + approved.stderr

    # step 2: half the pods, half the traffic
    await wait_paused_at(kube, namespace, 2)
    assert await pods_by_image(kube, namespace) == {v1: 5, v2: 5}
    assert weights(await kube.get(HTTPROUTES, "web", namespace)) == {"web": 50, "web-canary": 50}
    assert kruise("rollout", "approve", "rollout/web", "-n", namespace, cluster=cluster).returncode == 0

    # step 3 (100%) continues by itself, then finalises: traffic back on the (now new) stable
    watched = kruise(
        "rollout", "status", "rollout/web", "-n", namespace, "--timeout", "120", cluster=cluster, timeout=150
    )
    assert watched.returncode == 0, watched.stdout + watched.stderr
    ro = await kube.get(ROLLOUTS, "web", namespace)
    conds = {c["type"]: c for c in ro["status"]["conditions"]}
    assert conds["Succeeded"]["status"] == "True"
    assert await pods_by_image(kube, namespace) == {v2: 10}
    route = await kube.get(HTTPROUTES, "web", namespace)
    assert [r["name"] for r in route["spec"]["rules"][0]["backendRefs"]] == ["web"]
    assert await kube.get_or_none(SERVICES, "web-canary", namespace) is None
    assert "pod-template-hash" not in (await kube.get(SERVICES, "web", namespace))["spec"]["selector"]
    assert await kube.get_or_none(BATCH_RELEASES, "web", namespace) is None
    cs = await kube.get(CLONESETS, "web", namespace)
    assert cs["spec"]["updateStrategy"].get("partition") in (None, 0)  # null is defaulted to 0
    assert "rollouts.kruise.io/in-progressing" not in (cs["metadata"].get("annotations") or {})
