"""Set-up and probes for the Deployment and blue-green scenarios.

Upstream's e2e suite (``KR:test/e2e/rollout_test.go``, ``rollout_v1beta1_test.go``) releases an
``echoserver`` Deployment or CloneSet behind a Service and an nginx Ingress; here the workload is
``web`` (5 replicas, pods made Ready by KWOK), its image is what changes, and approvals patch the
Rollout status as ``kubectl kruise rollout approve`` does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, DEPLOYMENTS, INGRESSES, PODS, REPLICASETS, SERVICES
from kruise.rollouts.resources import BATCH_RELEASES, ROLLOUTS
from kruise.rollouts.workloads.deployment.gohash import compute_hash
from tests.support.wait import eventually

JSON = dict[str, Any]
V1 = "registry.example.com/shop/web:1.4.0"
V2 = "registry.example.com/shop/web:1.5.0"
V3 = "registry.example.com/shop/web:1.6.0"
NGINX = "nginx.ingress.kubernetes.io/"
DEPLOYMENT_REF = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
CLONESET_REF = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"}
ROUTING: JSON = {"service": "web", "gracePeriodSeconds": 1, "ingress": {"classType": "nginx", "name": "web"}}


def _pod_template(image: str) -> JSON:
    return {
        "metadata": {"labels": {"app": "web"}},
        "spec": {
            "terminationGracePeriodSeconds": 0,
            "containers": [{"name": "web", "image": image}],
        },
    }


def deployment(namespace: str, replicas: int = 5) -> JSON:
    """``KR:test/e2e/test_data/rollout/deployment.yaml`` in shape: maxSurge 1, maxUnavailable 0."""
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
            "template": _pod_template(V1),
        },
    }


def cloneset(namespace: str, replicas: int = 5) -> JSON:
    """``KR:test/e2e/test_data/rollout/cloneset.yaml`` in shape (ReCreate, as blue-green requires)."""
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "updateStrategy": {"type": "ReCreate"},
            "template": _pod_template(V1),
        },
    }


def service(namespace: str) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]},
    }


def nginx_ingress(namespace: str) -> JSON:
    path = {
        "path": "/",
        "pathType": "Prefix",
        "backend": {"service": {"name": "web", "port": {"number": 80}}},
    }
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {
            "name": "web",
            "namespace": namespace,
            "annotations": {"kubernetes.io/ingress.class": "nginx"},
        },
        "spec": {"rules": [{"host": "web.example.com", "http": {"paths": [path]}}]},
    }


def rollout(namespace: str, ref: Mapping[str, Any], strategy: Mapping[str, Any]) -> JSON:
    return {
        "apiVersion": "rollouts.kruise.io/v1beta1",
        "kind": "Rollout",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {"workloadRef": dict(ref), "strategy": dict(strategy)},
    }


def canary_strategy(steps: Sequence[Mapping[str, Any]], **extra: Any) -> JSON:
    return {"canary": {"steps": [dict(s) for s in steps], "trafficRoutings": [dict(ROUTING)], **extra}}


def blue_green_strategy(steps: Sequence[Mapping[str, Any]]) -> JSON:
    return {"blueGreen": {"steps": [dict(s) for s in steps], "trafficRoutings": [dict(ROUTING)]}}


# ---------------------------------------------------------------------------------------- set-up
async def start(kube: KubeClient, namespace: str, workload: JSON, ro: JSON) -> JSON:
    """Service, Ingress, the settled workload and the Rollout, Healthy."""
    await kube.create(SERVICES, service(namespace), namespace)
    await kube.create(INGRESSES, nginx_ingress(namespace), namespace)
    res = DEPLOYMENTS if workload["kind"] == "Deployment" else CLONESETS
    await kube.create(res, workload, namespace)
    replicas = int(workload["spec"]["replicas"])

    async def settled() -> bool:
        obj = await kube.get(res, "web", namespace)
        st = obj.get("status") or {}
        return (
            st.get("observedGeneration") == obj["metadata"]["generation"]
            and st.get("updatedReplicas") == replicas
            and st.get("readyReplicas") == replicas
        )

    await eventually(settled, timeout=40, what=f"{replicas} ready pods")
    await kube.create(ROLLOUTS, ro, namespace)
    return await wait_phase(kube, namespace, "Healthy")


async def set_image(kube: KubeClient, namespace: str, kind: str, image: str) -> None:
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "web", "image": image}]}}}}
    if kind == "Deployment":  # strategic: the container list is merged by name, so ports stay
        await kube.patch(DEPLOYMENTS, "web", patch, namespace, patch_type="strategic")
    else:
        await kube.patch(CLONESETS, "web", patch, namespace, patch_type="merge")


async def approve(kube: KubeClient, namespace: str) -> None:
    """``kubectl kruise rollout approve``: the paused step becomes StepReady."""
    ro = await kube.get(ROLLOUTS, "web", namespace)
    sub = "blueGreenStatus" if ro["status"].get("blueGreenStatus") else "canaryStatus"
    assert ro["status"][sub]["currentStepState"] == "StepPaused", ro["status"]
    body = {"status": {sub: {"currentStepState": "StepReady"}}}
    await kube.patch(ROLLOUTS, "web", body, namespace, patch_type="merge", subresource="status")


async def jump(kube: KubeClient, namespace: str, step: int) -> None:
    """Patch ``nextStepIndex`` (upstream's ``JumpRolloutStep``)."""
    ro = await kube.get(ROLLOUTS, "web", namespace)
    sub = "blueGreenStatus" if ro["status"].get("blueGreenStatus") else "canaryStatus"
    body = {"status": {sub: {"nextStepIndex": step}}}
    await kube.patch(ROLLOUTS, "web", body, namespace, patch_type="merge", subresource="status")


# ---------------------------------------------------------------------------------------- probes
async def wait_phase(kube: KubeClient, namespace: str, phase: str, timeout: float = 60) -> JSON:
    async def probe() -> JSON | None:
        ro = await kube.get(ROLLOUTS, "web", namespace)
        return ro if (ro.get("status") or {}).get("phase") == phase else None

    return await eventually(probe, timeout=timeout, interval=0.3, what=f"Rollout {phase}")


async def wait_paused_at(kube: KubeClient, namespace: str, step: int, timeout: float = 60) -> JSON:
    async def probe() -> JSON | None:
        ro = await kube.get(ROLLOUTS, "web", namespace)
        st = ro.get("status") or {}
        at = (st.get("currentStepIndex"), st.get("currentStepState"))
        return ro if at == (step, "StepPaused") and st.get("phase") == "Progressing" else None

    return await eventually(probe, timeout=timeout, interval=0.3, what=f"Rollout paused at step {step}")


async def pods_by_image(kube: KubeClient, namespace: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for pod in (await kube.list(PODS, namespace, label_selector="app=web"))["items"]:
        if pod["metadata"].get("deletionTimestamp"):
            continue
        image = pod["spec"]["containers"][0]["image"]
        out[image] = out.get(image, 0) + 1
    return out


async def wait_pods(kube: KubeClient, namespace: str, want: Mapping[str, int], timeout: float = 40) -> None:
    async def probe() -> bool:
        return await pods_by_image(kube, namespace) == dict(want)

    await eventually(probe, timeout=timeout, interval=0.3, what=f"pods {dict(want)}")


async def canary_deployments(kube: KubeClient, namespace: str) -> list[JSON]:
    items = (
        await kube.list(DEPLOYMENTS, namespace, label_selector="rollouts.kruise.io/canary-deployment=web")
    )["items"]
    return [d for d in items if not d["metadata"].get("deletionTimestamp")]


async def replicaset_hash(kube: KubeClient, namespace: str, owner: str, image: str) -> str:
    """``pod-template-hash`` of the ReplicaSet of Deployment ``owner`` running ``image``."""
    for rs in (await kube.list(REPLICASETS, namespace))["items"]:
        owners = [r["name"] for r in rs["metadata"].get("ownerReferences") or []]
        if owner in owners and rs["spec"]["template"]["spec"]["containers"][0]["image"] == image:
            return str(rs["metadata"]["labels"]["pod-template-hash"])
    raise AssertionError(f"no ReplicaSet of {owner} runs {image}")


async def upstream_revision(kube: KubeClient, namespace: str, name: str = "web") -> str:
    """``util.ComputeHash(&workload.Spec.Template, nil)`` over the Deployment as a GET returns it:
    the canary revision upstream's e2e expects (``rollout_v1beta1_test.go:985``, ``:1765``)."""
    return compute_hash((await kube.get(DEPLOYMENTS, name, namespace))["spec"]["template"])


def canary_weight(ingress: Mapping[str, Any]) -> str:
    return str((ingress["metadata"].get("annotations") or {}).get(f"{NGINX}canary-weight"))


def selector_hash(svc: Mapping[str, Any]) -> str | None:
    return (svc["spec"].get("selector") or {}).get("pod-template-hash")


def conditions(ro: Mapping[str, Any]) -> dict[str, JSON]:
    return {c["type"]: c for c in (ro.get("status") or {}).get("conditions") or []}


async def gone(kube: KubeClient, namespace: str) -> None:
    """Canary Service, canary Ingress and BatchRelease removed."""

    async def probe() -> bool:
        return (
            await kube.get_or_none(SERVICES, "web-canary", namespace) is None
            and await kube.get_or_none(INGRESSES, "web-canary", namespace) is None
            and await kube.get_or_none(BATCH_RELEASES, "web", namespace) is None
        )

    await eventually(probe, timeout=20, what="canary Service, canary Ingress and BatchRelease removed")


ROLLOUT_ID_LABEL, BATCH_ID_LABEL = "rollouts.kruise.io/rollout-id", "rollouts.kruise.io/rollout-batch-id"


async def batch_labels(kube: KubeClient, namespace: str, rollout_id: str) -> dict[str, int]:
    """Live ``app=web`` pods carrying ``rollout-id=<rollout_id>``, counted by ``rollout-batch-id``."""
    out: dict[str, int] = {}
    for pod in (await kube.list(PODS, namespace, label_selector="app=web"))["items"]:
        labels = pod["metadata"].get("labels") or {}
        if not pod["metadata"].get("deletionTimestamp") and labels.get(ROLLOUT_ID_LABEL) == rollout_id:
            batch = str(labels.get(BATCH_ID_LABEL, ""))
            out[batch] = out.get(batch, 0) + 1
    return out


async def wait_batch_labels(
    kube: KubeClient, namespace: str, rollout_id: str, want: Mapping[str, int], timeout: float = 30
) -> None:
    """Upstream's ``CheckPodBatchLabelV2`` (15 tries 2 s apart), for every batch at once."""
    assert rollout_id, "the Rollout observed no rollout-id"

    async def probe() -> bool:
        return await batch_labels(kube, namespace, rollout_id) == dict(want)

    await eventually(probe, timeout=timeout, interval=0.3, what=f"pods labelled {rollout_id}: {dict(want)}")
