"""The ComputeHash port at k8s.io/api v0.37.2 names ReplicaSets as kube-controller-manager 1.37 does.

kube-controller-manager labels a Deployment's ReplicaSet ``pod-template-hash`` =
``controller.ComputeHash(&deployment.Spec.Template, deployment.Status.CollisionCount)`` over the
template the API server stores. The port, given that template as a GET returns it and the
v0.37.2 type schema, must print the same label: this checks the port against Kubernetes itself
(the oracle test checks it against Go over a corpus, for v0.28.9 too).
"""

from __future__ import annotations

from typing import Any

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import DEPLOYMENTS, REPLICASETS
from kruise.rollouts.workloads.deployment.gohash import KCM_K8S_API, compute_hash
from tests.conformance.gohash_corpus import templates
from tests.support.wait import eventually

JSON = dict[str, Any]
CASES = [
    "ours-workload-support",
    "upstream-rollout-deployment",
    "rich",
    "quantities-sizelimits",
    "upstream-deployment-deployment",
]


def _deployment(name: str, template: JSON) -> JSON:
    template = {**template, "metadata": {**(template.get("metadata") or {}), "labels": {"case": name}}}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"case": name}}, "template": template},
    }


async def test_port_names_the_replicaset_as_kube_controller_manager(kube: KubeClient, namespace: str) -> None:
    corpus = templates()
    for case in CASES:
        await kube.create(DEPLOYMENTS, _deployment(case, corpus[case]), namespace)
    for case in CASES:

        async def labelled(case: str = case) -> str | None:
            for rs in (await kube.list(REPLICASETS, namespace, label_selector=f"case={case}"))["items"]:
                return str(rs["metadata"]["labels"]["pod-template-hash"])
            return None

        label = await eventually(labelled, timeout=30, what=f"the ReplicaSet of {case}")
        stored = await kube.get(DEPLOYMENTS, case, namespace)
        count = (stored.get("status") or {}).get("collisionCount")
        assert compute_hash(stored["spec"]["template"], count, version=KCM_K8S_API) == label, case
