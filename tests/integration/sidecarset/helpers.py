"""Small helpers for the SidecarSet scenarios (upstream's ``SidecarSetTester``).

Every SidecarSet here is named ``test-sidecarset-<namespace's random suffix>`` (plus a suffix of
its own when a test has several) and scoped to
the test's namespace (``spec.namespace``), as upstream's base SidecarSet; being cluster-scoped, the
``sidecarsets`` fixture deletes them after the test. Pods come from Deployments (kube-controller-
manager), CloneSets (our controller) or bare creates, are placed by kube-scheduler and run by KWOK.
"""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import AsyncIterator
from typing import Any

from kruise.core.errors import ConflictError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CONFIGMAPS, DEPLOYMENTS, PODS, SIDECARSETS
from tests.support.wait import eventually

JSON = dict[str, Any]
NGINX = "registry.example.com/nginx:1.25"
NEW_NGINX = "registry.example.com/nginx:1.26"
BUSYBOX = "registry.example.com/busybox:1.36"
INVALID = "invalid.registry.k8s.io/invalid/alpine:3.1"
SELECTOR = {"app": "sidecarset"}


def sidecarset_name(namespace: str, suffix: str = "") -> str:
    """``test-sidecarset-<the namespace's 5 random characters><suffix>`` (names stay under 63)."""
    return f"test-sidecarset-{namespace[-5:]}{suffix}"


def base_sidecarset(namespace: str, suffix: str = "") -> JSON:
    """``NewBaseSidecarSet``: an init container, ``nginx-sidecar`` (before the app, sharing its
    volumes) and ``busybox-sidecar`` (after it), selecting ``app=sidecarset`` in ``namespace``."""
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "SidecarSet",
        "metadata": {"name": sidecarset_name(namespace, suffix), "labels": {"app": "sidecar"}},
        "spec": {
            "initContainers": [
                {"name": "init-sidecar", "command": ["/bin/sh", "-c", "sleep 1"], "image": BUSYBOX}
            ],
            "containers": [
                {
                    "name": "nginx-sidecar",
                    "image": NGINX,
                    "imagePullPolicy": "IfNotPresent",
                    "command": ["tail", "-f", "/dev/null"],
                    "podInjectPolicy": "BeforeAppContainer",
                    "shareVolumePolicy": {"type": "enabled"},
                },
                {
                    "name": "busybox-sidecar",
                    "image": BUSYBOX,
                    "command": ["/bin/sh", "-c", "sleep 10000000"],
                    "podInjectPolicy": "AfterAppContainer",
                },
            ],
            "selector": {"matchLabels": dict(SELECTOR)},
            "namespace": namespace,
        },
    }


def base_deployment(namespace: str, replicas: int = 1, name: str = "deployment-test") -> JSON:
    """``NewBaseDeployment``: one ``main`` container labelled ``app=sidecarset``."""
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": dict(SELECTOR)},
            "template": {
                "metadata": {"labels": dict(SELECTOR)},
                "spec": {
                    "terminationGracePeriodSeconds": 0,
                    "containers": [
                        {
                            "name": "main",
                            "image": "busybox:latest",
                            "command": ["/bin/sh", "-c", "sleep 10000000"],
                        }
                    ],
                },
            },
        },
    }


async def create_sidecarset(kube: KubeClient, body: JSON) -> JSON:
    """Create, then wait until the controller has observed it (status written, which the
    controller does only once the pod webhook's scope covers the SidecarSet)."""
    created = await kube.create(SIDECARSETS, copy.deepcopy(body))
    return await wait_observed(kube, created["metadata"]["name"])


async def wait_observed(kube: KubeClient, name: str) -> JSON:
    async def observed() -> JSON | None:
        obj = await kube.get(SIDECARSETS, name)
        status = obj.get("status") or {}
        done = status.get("observedGeneration") == obj["metadata"]["generation"]
        return obj if done and status.get("latestRevision") else None

    return await eventually(observed, timeout=30, what=f"sidecarset {name} observed")


async def update_sidecarset(kube: KubeClient, name: str, mutate: Any) -> JSON:
    """Read, apply ``mutate(obj)``, replace; again on a conflict (the controller writes the status
    meanwhile), as upstream's tester's ``RetryOnConflict``."""
    for _ in range(10):
        obj = await kube.get(SIDECARSETS, name)
        mutate(obj)
        try:
            return await kube.replace(SIDECARSETS, obj)
        except ConflictError:
            continue
    raise AssertionError(f"sidecarset {name} kept conflicting")


async def create_deployment(kube: KubeClient, body: JSON) -> list[JSON]:
    """Create the Deployment; wait until its pods run and are ready; return them."""
    namespace, spec = body["metadata"]["namespace"], body["spec"]
    await kube.create(DEPLOYMENTS, copy.deepcopy(body), namespace)
    return await wait_pods(kube, namespace, spec["replicas"], spec["selector"]["matchLabels"])


async def wait_pods(kube: KubeClient, namespace: str, count: int, selector: JSON | None = None) -> list[JSON]:
    async def running() -> list[JSON] | None:
        items = await selector_pods(kube, namespace, selector)
        ready = [p for p in items if _ready(p)]
        return ready if len(items) == count and len(ready) == count else None

    return await eventually(running, timeout=60, what=f"{count} ready pods in {namespace}")


def _ready(pod: JSON) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return (pod.get("status") or {}).get("phase") == "Running" and any(
        c["type"] == "Ready" and c["status"] == "True" for c in conditions
    )


async def selector_pods(kube: KubeClient, namespace: str, selector: JSON | None = None) -> list[JSON]:
    """Active pods matching ``selector`` (default ``app=sidecarset``), by name."""
    wanted = selector or SELECTOR
    label = ",".join(f"{k}={v}" for k, v in wanted.items())
    items = (await kube.list(PODS, namespace, label_selector=label))["items"]
    return sorted(
        (p for p in items if not p["metadata"].get("deletionTimestamp")), key=lambda p: p["metadata"]["name"]
    )


def container(pod: JSON, name: str) -> JSON:
    return next(c for c in pod["spec"]["containers"] if c["name"] == name)


def container_status(pod: JSON, name: str) -> JSON:
    return next(s for s in pod["status"]["containerStatuses"] if s["name"] == name)


def env_value(c: JSON, name: str) -> Any:
    for env in c.get("env") or []:
        if env["name"] == name:
            return env.get("value", env.get("valueFrom"))
    return None


def annotation_json(pod: JSON, key: str) -> Any:
    return json.loads(pod["metadata"]["annotations"][key])


async def wait_status(kube: KubeClient, name: str, **expected: int) -> JSON:
    """Wait until the SidecarSet's status, for its current generation, has these counters
    (``matchedPods=5, updatedPods=3``...)."""

    async def reached() -> JSON | None:
        obj = await kube.get(SIDECARSETS, name)
        status = obj.get("status") or {}
        seen = {k: status.get(k, 0) for k in expected}
        current = status.get("observedGeneration") == obj["metadata"]["generation"]
        return obj if current and seen == expected else None

    return await eventually(reached, timeout=60, what=f"sidecarset {name} status {expected}")


@contextlib.asynccontextmanager
async def patch_whitelist(kube: KubeClient, *exprs: str, selector: JSON | None = None) -> AsyncIterator[None]:
    """``kruise-configuration`` in the manager's namespace allowing these annotation keys in
    ``patchPodMetadata`` (removed afterwards)."""
    rule: JSON = {"allowedAnnotationKeyExprs": list(exprs)}
    if selector is not None:
        rule["selector"] = selector
    config = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "kruise-configuration"},
        "data": {"SidecarSet_PatchPodMetadata_WhiteList": json.dumps({"rules": [rule]})},
    }
    await kube.create(CONFIGMAPS, config, "kruise-system")
    try:
        yield
    finally:
        await kube.delete(CONFIGMAPS, "kruise-configuration", "kruise-system", missing_ok=True)
