"""Set-up and probes for the native StatefulSet scenarios.

Upstream's e2e group "Native StatefulSet rollout canary with Ingress"
(``KR:test/e2e/rollout_v1beta1_test.go``, ``test_data/rollout/native_statefulset.yaml``) releases a
5-replica ``echoserver`` StatefulSet behind a headless Service, a Service and an nginx Ingress;
here it is ``web`` (kube-controller-manager's statefulset controller, pods made Ready by KWOK), its
image is what changes, and approvals patch the Rollout status as ``kubectl kruise rollout approve``.
"Advanced StatefulSet rollout canary with Ingress" runs the same cases on an ``apps.kruise.io``
StatefulSet of the same template (kruise's controller, upstream's ``advanced_statefulset.yaml``
with its defaults: ordered, ``ReCreate``): every helper takes the :class:`Kind` to release.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import NATIVE_STATEFULSETS, PODS, SERVICES, STATEFULSETS, Resource
from kruise.rollouts.resources import ROLLOUTS
from kruise.traffic.resources import INGRESSES
from tests.integration.rollouts import helpers as h
from tests.support.wait import eventually

JSON = dict[str, Any]
V1, V2, V3 = h.V1, h.V2, h.V3


@dataclass(frozen=True)
class Kind:
    """The StatefulSet a scenario releases: ``resource`` and how the user's image change is sent
    (``strategic``, as ``kubectl set image``; a custom resource takes a ``merge`` patch, so the
    container is sent whole)."""

    id: str
    resource: Resource
    patch_type: str

    @property
    def api_version(self) -> str:
        return self.resource.api_version

    def __str__(self) -> str:
        return self.id


NATIVE = Kind("native", NATIVE_STATEFULSETS, "strategic")
ADVANCED = Kind("advanced", STATEFULSETS, "merge")


def container(image: str) -> JSON:
    return {"name": "web", "image": image, "ports": [{"containerPort": 8080}]}


def statefulset(namespace: str, replicas: int = 5, *, kind: Kind = NATIVE) -> JSON:
    return {
        "apiVersion": kind.api_version,
        "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "serviceName": "web-headless",
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "terminationGracePeriodSeconds": 0,
                    "containers": [container(V1)],
                },
            },
        },
    }


def headless_service(namespace: str) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web-headless", "namespace": namespace},
        "spec": {"clusterIP": "None", "selector": {"app": "web"}, "ports": [{"port": 8080, "name": "web"}]},
    }


def rollout(
    namespace: str,
    steps: Sequence[Mapping[str, Any]],
    *,
    routing: bool = True,
    kind: Kind = NATIVE,
    **canary: Any,
) -> JSON:
    strategy: JSON = {"steps": [dict(s) for s in steps], **canary}
    if routing:
        strategy["trafficRoutings"] = [dict(h.ROUTING_INGRESS)]
    return {
        "apiVersion": "rollouts.kruise.io/v1beta1",
        "kind": "Rollout",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {
            "workloadRef": {"apiVersion": kind.api_version, "kind": "StatefulSet", "name": "web"},
            "strategy": {"canary": strategy},
        },
    }


async def wait_settled(
    kube: KubeClient, namespace: str, replicas: int, timeout: float = 90, *, kind: Kind = NATIVE
) -> JSON:
    """Every pod updated and Ready, on a status that observed the spec (upstream's
    ``WaitNativeStatefulSetPodsReady``)."""

    async def probe() -> JSON | None:
        sts = await get(kube, namespace, kind=kind)
        st = sts.get("status") or {}
        done = (
            st.get("observedGeneration") == sts["metadata"]["generation"]
            and st.get("replicas") == replicas
            and st.get("updatedReplicas") == replicas
            and st.get("readyReplicas") == replicas
        )
        return sts if done else None

    return await eventually(probe, timeout=timeout, interval=0.5, what=f"{replicas} updated ready pods")


async def start(
    kube: KubeClient,
    namespace: str,
    ro: JSON,
    *,
    replicas: int = 5,
    ingress: bool = True,
    kind: Kind = NATIVE,
) -> JSON:
    """Headless Service, Service (and Ingress), the settled StatefulSet and the Rollout, Healthy."""
    await kube.create(SERVICES, headless_service(namespace), namespace)
    await kube.create(SERVICES, h.service(namespace), namespace)
    if ingress:
        await kube.create(INGRESSES, h.nginx_ingress(namespace), namespace)
    await kube.create(kind.resource, statefulset(namespace, replicas, kind=kind), namespace)
    await wait_settled(kube, namespace, replicas, kind=kind)
    await kube.create(ROLLOUTS, ro, namespace)

    async def described() -> JSON | None:  # Healthy, and the settled release described
        got = await h.get_rollout(kube, namespace)
        healthy = (got.get("status") or {}).get("phase") == "Healthy"
        return got if healthy and h.canary_status(got).get("stableRevision") else None

    return await eventually(described, timeout=60, interval=0.3, what="Rollout Healthy")


async def set_image(
    kube: KubeClient, namespace: str, image: str, *, kind: Kind = NATIVE, **template_spec: Any
) -> None:
    """The user's release: the container on ``image`` and other template fields (``None``
    removes one)."""
    patch = {"spec": {"template": {"spec": {"containers": [container(image)], **template_spec}}}}
    await kube.patch(kind.resource, "web", patch, namespace, patch_type=kind.patch_type)


async def get(kube: KubeClient, namespace: str, *, kind: Kind = NATIVE) -> JSON:
    return await kube.get(kind.resource, "web", namespace)


def partition(sts: Mapping[str, Any]) -> int | None:
    return ((sts["spec"].get("updateStrategy") or {}).get("rollingUpdate") or {}).get("partition")


async def pods_by_ordinal(kube: KubeClient, namespace: str) -> dict[int, str]:
    """Ordinal -> image of the live pods."""
    out: dict[int, str] = {}
    for pod in (await kube.list(PODS, namespace, label_selector="app=web"))["items"]:
        if pod["metadata"].get("deletionTimestamp"):
            continue
        out[int(pod["metadata"]["name"].rsplit("-", 1)[1])] = pod["spec"]["containers"][0]["image"]
    return out


async def wait_ordinals(
    kube: KubeClient, namespace: str, want: Mapping[int, str], timeout: float = 60
) -> None:
    """The pods run exactly these images by ordinal (a StatefulSet updates the highest first)."""

    async def probe() -> bool:
        return await pods_by_ordinal(kube, namespace) == dict(want)

    await eventually(probe, timeout=timeout, interval=0.5, what=f"pods {dict(want)}")


def ordinals(v1: int, v2: int, *, old: str = V1, new: str = V2) -> dict[int, str]:
    """``v1`` pods on ``old`` below ``v2`` pods on ``new`` (the shape a partition leaves)."""
    return {i: old for i in range(v1)} | {v1 + i: new for i in range(v2)}


async def selector(kube: KubeClient, namespace: str, name: str = "web") -> dict[str, str] | None:
    return await h.selector(kube, namespace, name)
