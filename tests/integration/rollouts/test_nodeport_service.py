"""Deployment canary rollout with Ingress > V1->V2: Percentage 20%, Succeeded with NodePort-type
service (``KR:test/e2e/rollout_test.go``).

The stable Service is ``NodePort`` with ``nodePort: 30000``. The canary Service is a copy of it,
so it must leave out what the API server allocated to the original (``clusterIP(s)``, each port's
``nodePort``), or creating it fails on the taken port: one step of 2 canary pods at 20%, then the
release completes and the canary Service goes.
"""

from __future__ import annotations

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import INGRESSES, SERVICES
from tests.integration.rollouts.workload_support import (
    DEPLOYMENT_REF,
    V1,
    V2,
    approve,
    canary_strategy,
    canary_weight,
    conditions,
    deployment,
    gone,
    replicaset_hash,
    rollout,
    selector_hash,
    set_image,
    start,
    wait_paused_at,
    wait_phase,
    wait_pods,
)

pytestmark = pytest.mark.usefixtures("manager")


async def test_percentage_20_succeeded_with_node_port_type_service(kube: KubeClient, namespace: str) -> None:
    steps = [{"replicas": 2, "traffic": "20%", "pause": {}}]
    ro = rollout(namespace, DEPLOYMENT_REF, canary_strategy(steps, enableExtraWorkloadForCanary=True))
    await start(kube, namespace, deployment(namespace), ro)
    node_port = {"spec": {"type": "NodePort", "ports": [{"port": 80, "targetPort": 8080, "nodePort": 30000}]}}
    await kube.patch(SERVICES, "web", node_port, namespace, patch_type="merge")
    stable_hash = await replicaset_hash(kube, namespace, "web", V1)
    await set_image(kube, namespace, "Deployment", V2)

    ro = await wait_paused_at(kube, namespace, 1)
    await wait_pods(kube, namespace, {V1: 5, V2: 2})
    stable = await kube.get(SERVICES, "web", namespace)
    canary = await kube.get(SERVICES, "web-canary", namespace)
    assert selector_hash(stable) == stable_hash
    assert stable["spec"]["ports"][0]["nodePort"] == 30000
    assert canary["spec"]["type"] == "NodePort"
    assert canary["spec"]["ports"][0]["nodePort"] not in (None, 30000)
    assert canary["spec"]["clusterIP"] != stable["spec"]["clusterIP"]
    cs = ro["status"]["canaryStatus"]
    assert selector_hash(canary) == cs["podTemplateHash"]
    assert (cs["canaryReplicas"], cs["canaryReadyReplicas"]) == (2, 2)
    assert canary_weight(await kube.get(INGRESSES, "web-canary", namespace)) == "20"

    await approve(kube, namespace)
    ro = await wait_phase(kube, namespace, "Healthy", timeout=60)
    assert conditions(ro)["Succeeded"]["status"] == "True"
    await gone(kube, namespace)
    await wait_pods(kube, namespace, {V2: 5})
    stable = await kube.get(SERVICES, "web", namespace)
    assert selector_hash(stable) is None and stable["spec"]["ports"][0]["nodePort"] == 30000
