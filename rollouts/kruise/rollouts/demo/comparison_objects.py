"""The comparison act's objects: one pod template (``app: web``, HTTP on 8080, spread over the
real nodes) under a Deployment, a CloneSet, a prepull-next-batch Rollout, a Service and an
ImagePullJob. Plain manifests, no API calls; the act (:mod:`.comparison`) applies them."""

from __future__ import annotations

from typing import Any

from kruise.core.localcluster.realnode.plan import NODE_SELECTOR, TOLERATION
from kruise.rollouts.rollout.prepull import PREPULL_ANNOTATION

JSON = dict[str, Any]

REPLICAS = 3
PORT = 8080
ROLLOUT_STEPS: list[JSON] = [
    {"replicas": 1, "pause": {}},
    {"replicas": 2, "pause": {}},
    {"replicas": "100%"},
]


def pod_template(image: str) -> JSON:
    """Labels ``app: web``; one container ``web`` (HTTP on 8080, Ready when it answers, 2 s
    preStop), IfNotPresent, spread over the real nodes."""
    container = {
        "name": "web",
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "readinessProbe": {"httpGet": {"path": "/", "port": PORT}, "periodSeconds": 1, "failureThreshold": 1},
        "lifecycle": {"preStop": {"exec": {"command": ["sleep", "2"]}}},
    }
    spread = {
        "maxSkew": 1,
        "topologyKey": "kubernetes.io/hostname",
        "whenUnsatisfiable": "ScheduleAnyway",
        "labelSelector": {"matchLabels": {"app": "web"}},
    }
    spec = {
        "nodeSelector": dict(NODE_SELECTOR),
        "tolerations": [dict(TOLERATION)],
        "topologySpreadConstraints": [spread],
        "terminationGracePeriodSeconds": 5,
        "containers": [container],
    }
    return {"metadata": {"labels": {"app": "web"}}, "spec": spec}


def deployment(image: str) -> JSON:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": REPLICAS,
            "selector": {"matchLabels": {"app": "web"}},
            "template": pod_template(image),
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
        },
    }


def cloneset(image: str) -> JSON:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": REPLICAS,
            "selector": {"matchLabels": {"app": "web"}},
            "template": pod_template(image),
            "updateStrategy": {"type": "InPlaceIfPossible", "maxUnavailable": 1},
        },
    }


def rollout() -> JSON:
    return {
        "apiVersion": "rollouts.kruise.io/v1beta1",
        "kind": "Rollout",
        "metadata": {"name": "web", "annotations": {PREPULL_ANNOTATION: "true"}},
        "spec": {
            "workloadRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"},
            "strategy": {"canary": {"steps": [dict(s) for s in ROLLOUT_STEPS]}},
        },
    }


def service() -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": PORT}]},
    }


def pull_job(image: str, nodes: list[str]) -> JSON:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ImagePullJob",
        "metadata": {"name": "web-v2"},
        "spec": {
            "image": image,
            "selector": {"names": list(nodes)},
            "parallelism": len(nodes),
            "completionPolicy": {"type": "Always"},
        },
    }
