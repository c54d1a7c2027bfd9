"""Shared set-up and probes for the Rollout scenarios (the example CloneSet ``web`` behind a Service).

Each scenario module builds what upstream's e2e suite builds (``KR:test/e2e/test_data``): a
Service ``web``, optionally an nginx Ingress, a Gateway API HTTPRoute or an Istio
VirtualService/DestinationRule in front of it, the CloneSet and a Rollout; then it changes the
CloneSet's image and follows the Rollout step by step.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, PODS, SERVICES
from kruise.rollouts.resources import ROLLOUTS
from kruise.traffic.resources import DESTINATIONRULES, HTTPROUTES, INGRESSES, VIRTUALSERVICES
from tests.integration.cloneset.test_cloneset_inplace import web_cloneset
from tests.support.cluster import TestCluster
from tests.support.wait import eventually

JSON = dict[str, Any]
KRUISE = str(Path(sys.executable).parent / "kruise")
V1 = "registry.example.com/shop/web:1.4.0"
V2 = "registry.example.com/shop/web:1.5.0"
V3 = "registry.example.com/shop/web:1.6.0"
NGINX = "nginx.ingress.kubernetes.io/"
CLONESET_API = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"}

# the reference release: 20% / 50% / 100% of the pods, 5% / 50% / 100% of the traffic
REFERENCE_STEPS: list[JSON] = [
    {"replicas": "20%", "traffic": "5%", "pause": {}},
    {"replicas": "50%", "traffic": "50%", "pause": {}},
    {"replicas": "100%", "traffic": "100%"},
]


# ---------------------------------------------------------------------------------------- objects
def service(namespace: str) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]},
    }


def nginx_ingress(namespace: str) -> JSON:
    """The stable Ingress (``KR:test/e2e/test_data/rollout/nginx_ingress.yaml`` shape)."""
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {
            "name": "web",
            "namespace": namespace,
            "annotations": {"kubernetes.io/ingress.class": "nginx"},
        },
        "spec": {
            "rules": [
                {
                    "host": "web.example.com",
                    "http": {
                        "paths": [
                            {
                                "path": "/",
                                "pathType": "Prefix",
                                "backend": {"service": {"name": "web", "port": {"number": 80}}},
                            }
                        ]
                    },
                }
            ]
        },
    }


def httproute(namespace: str) -> JSON:
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {
            "parentRefs": [{"name": "shop-gateway"}],
            "rules": [{"backendRefs": [{"name": "web", "port": 80}]}],
        },
    }


def virtual_service(namespace: str) -> JSON:
    return {
        "apiVersion": "networking.istio.io/v1",
        "kind": "VirtualService",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {
            "hosts": ["web.example.com"],
            "http": [{"route": [{"destination": {"host": "web"}}]}],
        },
    }


def destination_rule(namespace: str) -> JSON:
    return {
        "apiVersion": "networking.istio.io/v1",
        "kind": "DestinationRule",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {
            "host": "web",
            "trafficPolicy": {"loadBalancer": {"simple": "ROUND_ROBIN"}},
            "subsets": [{"name": "web", "labels": {"app": "web"}}],
        },
    }


ROUTING_GATEWAY: JSON = {"service": "web", "gracePeriodSeconds": 1, "gateway": {"httpRouteName": "web"}}
ROUTING_INGRESS: JSON = {"service": "web", "gracePeriodSeconds": 1, "ingress": {"name": "web"}}
ROUTING_ISTIO: JSON = {
    "service": "web",
    "gracePeriodSeconds": 1,
    "customNetworkRefs": [
        {"apiVersion": "networking.istio.io/v1", "kind": "VirtualService", "name": "web"},
        {"apiVersion": "networking.istio.io/v1", "kind": "DestinationRule", "name": "web"},
    ],
}


def rollout(
    namespace: str,
    steps: Sequence[Mapping[str, Any]],
    routing: Mapping[str, Any] | None = None,
    **strategy: Any,
) -> JSON:
    canary: JSON = {"steps": [dict(s) for s in steps]}
    if routing is not None:
        canary["trafficRoutings"] = [dict(routing)]
    return {
        "apiVersion": "rollouts.kruise.io/v1beta1",
        "kind": "Rollout",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {"workloadRef": dict(CLONESET_API), "strategy": {"canary": canary, **strategy}},
    }


# ---------------------------------------------------------------------------------------- set-up
async def create_network(kube: KubeClient, namespace: str, *kinds: str) -> None:
    """The stable Service plus the named front objects: ``ingress``, ``httproute``, ``istio``."""
    await kube.create(SERVICES, service(namespace), namespace)
    if "ingress" in kinds:
        await kube.create(INGRESSES, nginx_ingress(namespace), namespace)
    if "httproute" in kinds:
        await kube.create(HTTPROUTES, httproute(namespace), namespace)
    if "istio" in kinds:
        await kube.create(VIRTUALSERVICES, virtual_service(namespace), namespace)
        await kube.create(DESTINATIONRULES, destination_rule(namespace), namespace)


async def create_web(
    kube: KubeClient, namespace: str, replicas: int = 10, labels: Mapping[str, str] | None = None
) -> JSON:
    """The example CloneSet (with extra metadata ``labels``), every pod Ready on v1 (no partition)."""
    body = web_cloneset(namespace, replicas=replicas, partition=0)
    body["metadata"].setdefault("labels", {}).update(labels or {})
    body["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = 0
    await kube.create(CLONESETS, body, namespace)
    return await wait_settled(kube, namespace, replicas)


async def wait_settled(kube: KubeClient, namespace: str, replicas: int, timeout: float = 60) -> JSON:
    """Every pod of the CloneSet updated and ready, on a status that observed the spec."""

    async def probe() -> JSON | None:
        cs = await kube.get(CLONESETS, "web", namespace)
        st = cs.get("status") or {}
        done = (
            st.get("observedGeneration") == cs["metadata"]["generation"]
            and st.get("replicas") == replicas
            and st.get("updatedReplicas") == replicas
            and st.get("readyReplicas") == replicas
        )
        return cs if done else None

    return await eventually(probe, timeout=timeout, what=f"{replicas} updated ready pods")


async def wait_settled_replicas(kube: KubeClient, namespace: str, replicas: int, timeout: float = 60) -> JSON:
    """``replicas`` pods, all ready (some may still run the old revision)."""

    async def probe() -> JSON | None:
        cs = await kube.get(CLONESETS, "web", namespace)
        st = cs.get("status") or {}
        done = (
            st.get("observedGeneration") == cs["metadata"]["generation"]
            and st.get("replicas") == replicas
            and st.get("readyReplicas") == replicas
        )
        return cs if done else None

    return await eventually(probe, timeout=timeout, what=f"{replicas} ready pods")


async def start(
    kube: KubeClient,
    namespace: str,
    ro: JSON,
    *network: str,
    replicas: int = 10,
    labels: Mapping[str, str] | None = None,
) -> JSON:
    """Network objects, the settled CloneSet (with metadata ``labels``) and the Rollout, Healthy."""
    await create_network(kube, namespace, *network)
    await create_web(kube, namespace, replicas, labels)
    await kube.create(ROLLOUTS, ro, namespace)
    return await wait_phase(kube, namespace, "Healthy")


async def set_image(kube: KubeClient, namespace: str, image: str) -> None:
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "web", "image": image}]}}}}
    await kube.patch(CLONESETS, "web", patch, namespace, patch_type="merge")


# ---------------------------------------------------------------------------------------- probes
async def get_rollout(kube: KubeClient, namespace: str) -> JSON:
    return await kube.get(ROLLOUTS, "web", namespace)


def canary_status(ro: Mapping[str, Any]) -> JSON:
    return dict((ro.get("status") or {}).get("canaryStatus") or {})


def condition(ro: Mapping[str, Any], ctype: str) -> JSON:
    for cond in (ro.get("status") or {}).get("conditions") or []:
        if cond.get("type") == ctype:
            return dict(cond)
    return {}


async def conflict(kube: KubeClient, namespace: str) -> JSON | None:
    """The Rollout's ``Conflict`` condition while it is True (a GitOps fight named), else None."""
    cond = condition(await get_rollout(kube, namespace), "Conflict")
    return cond if cond.get("status") == "True" else None


async def wait_phase(kube: KubeClient, namespace: str, phase: str, timeout: float = 60) -> JSON:
    async def probe() -> JSON | None:
        ro = await get_rollout(kube, namespace)
        return ro if (ro.get("status") or {}).get("phase") == phase else None

    return await eventually(probe, timeout=timeout, interval=0.3, what=f"Rollout phase {phase}")


async def wait_paused_at(kube: KubeClient, namespace: str, step: int, timeout: float = 60) -> JSON:
    async def probe() -> JSON | None:
        ro = await get_rollout(kube, namespace)
        cs = canary_status(ro)
        at = (cs.get("currentStepIndex"), cs.get("currentStepState"))
        return ro if at == (step, "StepPaused") else None

    return await eventually(probe, timeout=timeout, interval=0.3, what=f"Rollout paused at step {step}")


async def wait_completed(kube: KubeClient, namespace: str, timeout: float = 60) -> JSON:
    """Phase Healthy with the Progressing condition Completed (a release finished either way)."""

    async def probe() -> JSON | None:
        ro = await get_rollout(kube, namespace)
        done = (ro.get("status") or {}).get("phase") == "Healthy" and condition(ro, "Progressing").get(
            "reason"
        ) == "Completed"
        return ro if done else None

    return await eventually(probe, timeout=timeout, interval=0.3, what="Rollout completed")


async def wait_restarted(kube: KubeClient, namespace: str, previous: str, timeout: float = 60) -> JSON:
    """A continuous release started over (``handleContinuousRelease``): step 1 paused on a canary
    revision other than ``previous`` (the one the reset release ran)."""

    async def probe() -> JSON | None:
        ro = await get_rollout(kube, namespace)
        cs = canary_status(ro)
        at = (cs.get("currentStepIndex"), cs.get("currentStepState"))
        return (
            ro if at == (1, "StepPaused") and cs.get("canaryRevision") not in (None, "", previous) else None
        )

    return await eventually(
        probe, timeout=timeout, interval=0.3, what=f"step 1 paused on a revision after {previous}"
    )


async def delete_rollout(
    kube: KubeClient, namespace: str, timeout: float = 60, propagation: str = "Background"
) -> None:
    """Delete the Rollout (``propagation``: ``Foreground`` has the garbage collector delete its
    BatchRelease first, as upstream's e2e ``DeleteAllOf`` does) and wait until it is gone (its
    finalizer removed once it finalised)."""
    await kube.delete(ROLLOUTS, "web", namespace, propagation=propagation)

    async def gone() -> bool:
        return await kube.get_or_none(ROLLOUTS, "web", namespace) is None

    await eventually(gone, timeout=timeout, interval=0.3, what="Rollout deleted")


async def approve(kube: KubeClient, namespace: str) -> None:
    """What ``kubectl kruise rollout approve`` sends (merge patch on the status subresource)."""
    patch = {"status": {"canaryStatus": {"currentStepState": "StepReady"}}}
    await kube.patch(ROLLOUTS, "web", patch, namespace, patch_type="merge", subresource="status")


async def pods_by_image(kube: KubeClient, namespace: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for pod in (await kube.list(PODS, namespace, label_selector="app=web"))["items"]:
        if pod["metadata"].get("deletionTimestamp"):
            continue
        statuses = (pod.get("status") or {}).get("containerStatuses") or [{}]
        image = statuses[0].get("image") or pod["spec"]["containers"][0]["image"]
        out[image] = out.get(image, 0) + 1
    return out


async def wait_pods(kube: KubeClient, namespace: str, want: Mapping[str, int], timeout: float = 30) -> None:
    async def probe() -> bool:
        return await pods_by_image(kube, namespace) == dict(want)

    await eventually(probe, timeout=timeout, what=f"pods {dict(want)}")


async def revisions(kube: KubeClient, namespace: str) -> tuple[str, str]:
    """Short (stable, canary) revisions of the CloneSet, as the Service selectors carry them."""
    st = (await kube.get(CLONESETS, "web", namespace)).get("status") or {}
    return st["currentRevision"].rsplit("-", 1)[1], st["updateRevision"].rsplit("-", 1)[1]


async def selector(kube: KubeClient, namespace: str, name: str = "web") -> dict[str, str] | None:
    svc = await kube.get_or_none(SERVICES, name, namespace)
    return None if svc is None else dict(svc["spec"].get("selector") or {})


def route_weights(route: Mapping[str, Any]) -> dict[str, int]:
    """Backend weights of an HTTPRoute's first rule."""
    refs = route["spec"]["rules"][0]["backendRefs"]
    return {r["name"]: int(r.get("weight", 1)) for r in refs}


def vs_weights(vs: Mapping[str, Any]) -> dict[str, int | None]:
    """Destination weights of a VirtualService's last http rule (the unmatched default route)."""
    route = vs["spec"]["http"][-1]["route"]
    return {r["destination"]["host"]: r.get("weight") for r in route}


def canary_ingress_annotations(ingress: Mapping[str, Any] | None) -> dict[str, str]:
    annotations = ((ingress or {}).get("metadata") or {}).get("annotations") or {}
    return {k[len(NGINX) :]: v for k, v in annotations.items() if k.startswith(NGINX)}


def kruise(*args: str, cluster: TestCluster, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run the ``kruise`` CLI as a user would."""
    return subprocess.run(
        [KRUISE, *args, f"--kubeconfig={cluster.kubeconfig}"], capture_output=True, text=True, timeout=timeout
    )
