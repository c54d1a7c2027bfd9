"""Deletion protection webhooks (gate ``ResourcesDeletionProtection``, upstream default off):
the AdmissionReview adapter around :func:`kruise.workloads.admission.deletion_protection.decide`.

Names and paths are OpenKruise v1.8's, all validating and DELETE-only:

===============================  ===============================  =============================
webhook                          path                             resources
===============================  ===============================  =============================
``vbuiltindeployment.kb.io``     ``/validate-apps-deployment``    ``apps/v1 deployments``
``vbuiltinreplicaset.kb.io``     ``/validate-apps-replicaset``    ``apps/v1 replicasets``
``vbuiltinstatefulset.kb.io``    ``/validate-apps-statefulset``   ``apps/v1 statefulsets``
``vcustomresourcedefinition...`` ``/validate-customresource...``  ``customresourcedefinitions``
``vnamespace.kb.io``             ``/validate-namespace``          ``v1 namespaces``
``vingress.kb.io``               ``/validate-ingress``            ``networking.k8s.io ingresses``
``vservice.kb.io``               ``/validate-service``            ``v1 services``
===============================  ===============================  =============================

Scope: beyond upstream, each has an ``objectSelector`` on the ``policy.kruise.io/delete-protection``
label (``Exists``; for DELETE the API server matches the stored object), so deleting anything
unlabelled never waits for (or fails with) the manager. CloneSets, Advanced StatefulSets and
UnitedDeployments are judged by their own validating webhooks with the same decision.

A denial is HTTP 403 with upstream's text, logged to the ``kruise.protection`` logger as a JSON
line (upstream's ``protection.log`` fields) and counted (:func:`record_denial`). A DELETE without
``oldObject`` is allowed (as upstream, for API servers < 1.16).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from prometheus_client import Counter

from kruise.core.errors import KruiseError
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import PODS, PVCS, Resource
from kruise.core.webhook import AdmissionRequest, AdmissionResponse
from kruise.core.webhook.configuration import Rule, WebhookSettings, WebhookSpec
from kruise.workloads.admission.deletion_protection import (
    DELETION_PROTECTION_KEY,
    Facts,
    active_count,
    bound_pvc_count,
    decide,
    needs_facts,
)
from kruise.workloads.objects import mapping, name, namespace, sequence

__all__ = [
    "CRD_DENIALS",
    "NAMESPACE_DENIALS",
    "WORKLOAD_DENIALS",
    "DeletionProtectionWebhooks",
    "deletion_protection_webhook_specs",
    "protection_denied",
    "record_denial",
]

log = logging.getLogger(__name__)
protection_log = logging.getLogger("kruise.protection")

NAMESPACE_DENIALS = Counter(
    "namespace_deletion_protection", "Namespace Deletion Protection", ["name", "username"]
)
CRD_DENIALS = Counter(
    "crd_deletion_protection", "CustomResourceDefinition Deletion Protection", ["name", "username"]
)
WORKLOAD_DENIALS = Counter(
    "workload_deletion_protection", "Workload Deletion Protection", ["kind_namespace_name", "username"]
)

_HOOKS: tuple[tuple[str, str, Rule], ...] = (
    ("vbuiltindeployment.kb.io", "/validate-apps-deployment", Rule("apps", "v1", "deployments", ("DELETE",))),
    ("vbuiltinreplicaset.kb.io", "/validate-apps-replicaset", Rule("apps", "v1", "replicasets", ("DELETE",))),
    (
        "vbuiltinstatefulset.kb.io",
        "/validate-apps-statefulset",
        Rule("apps", "v1", "statefulsets", ("DELETE",)),
    ),
    (
        "vcustomresourcedefinition.kb.io",
        "/validate-customresourcedefinition",
        Rule("apiextensions.k8s.io", "v1", "customresourcedefinitions", ("DELETE",)),
    ),
    ("vnamespace.kb.io", "/validate-namespace", Rule("", "v1", "namespaces", ("DELETE",))),
    ("vingress.kb.io", "/validate-ingress", Rule("networking.k8s.io", "v1", "ingresses", ("DELETE",))),
    ("vservice.kb.io", "/validate-service", Rule("", "v1", "services", ("DELETE",))),
)
FORBIDDEN = "forbidden by ResourcesProtectionDeletion"
LABELLED = {"matchExpressions": [{"key": DELETION_PROTECTION_KEY, "operator": "Exists"}]}
"""The ``objectSelector``: only labelled objects reach the webhooks."""


def deletion_protection_webhook_specs(settings: WebhookSettings = WebhookSettings()) -> list[WebhookSpec]:
    """The seven DELETE webhooks above (register them only with the gate on)."""
    return [
        WebhookSpec(
            name=hook,
            path=path,
            mutating=False,
            rules=(rule,),
            failure_policy=settings.failure_policy,
            timeout_seconds=settings.timeout_seconds,
            object_selector=LABELLED,
        )
        for hook, path, rule in _HOOKS
    ]


def record_denial(kind: str, obj: Mapping[str, Any], user: str) -> None:
    """Count and log one refused deletion (upstream's metrics and ``LoggerProtectionInfo``):
    namespaces and CRDs by name, everything else as ``<kind>_<namespace>_<name>``."""
    if kind == "Namespace":
        NAMESPACE_DENIALS.labels(name(obj), user).inc()
    elif kind == "CustomResourceDefinition":
        CRD_DENIALS.labels(name(obj), user).inc()
    else:
        WORKLOAD_DENIALS.labels(f"{kind}_{namespace(obj)}_{name(obj)}", user).inc()
    entry = {
        "Event": "DeletionProtection",
        "Kind": kind,
        "Namespace": namespace(obj),
        "Name": name(obj),
        "UserAgent": user,
    }
    protection_log.warning("%s", json.dumps(entry))


def protection_denied(kind: str, obj: Mapping[str, Any], user: str, message: str) -> AdmissionResponse:
    """The HTTP 403 answer for a refused deletion, recorded (:func:`record_denial`)."""
    record_denial(kind, obj, user)
    return AdmissionResponse.deny(message, code=403, reason="Forbidden")


def _crd_resource(crd: Mapping[str, Any]) -> Resource | None:
    """The storage version of the CRD's kind (upstream lists the kind of the storage version)."""
    spec = mapping(crd.get("spec"))
    names = mapping(spec.get("names"))
    for version in sequence(spec.get("versions")):
        version = mapping(version)
        if version.get("storage"):
            return Resource(
                str(spec.get("group", "")),
                str(version.get("name", "")),
                str(names.get("plural", "")),
                str(names.get("kind", "")),
                namespaced=spec.get("scope") != "Cluster",
            )
    return None


class DeletionProtectionWebhooks:
    """Handlers bound to a client (the namespace's pods and PVCs, a CRD's objects) and the gates."""

    def __init__(self, kube: KubeClient, *, enabled: bool, crd_cascading: bool) -> None:
        self.kube = kube
        self.enabled = enabled
        self.crd_cascading = crd_cascading

    def handlers(self) -> dict[str, Any]:
        """Every path -> :meth:`validate` (the kind comes from the request)."""
        return {path: self.validate for _, path, _ in _HOOKS}

    async def validate(self, req: AdmissionRequest) -> AdmissionResponse:
        if req.operation != "DELETE" or req.raw.get("subResource") or req.old_object is None:
            return AdmissionResponse.allow()
        obj = req.old_object
        try:
            facts = (
                await self._facts(req.kind, obj) if self.enabled and needs_facts(req.kind, obj) else Facts()
            )
        except _LookupFailed as err:
            return protection_denied(req.kind, obj, req.user, str(err))
        message = decide(req.kind, obj, facts, gate_enabled=self.enabled)
        if message is None:
            return AdmissionResponse.allow()
        log.info(
            "refused deleting %s %s/%s for %s: %s", req.kind, namespace(obj), name(obj), req.user, message
        )
        return protection_denied(req.kind, obj, req.user, message)

    async def _facts(self, kind: str, obj: Mapping[str, Any]) -> Facts:
        """The counts :func:`decide` needs; raises :class:`_LookupFailed` with upstream's text
        (``... for list pods error: ...``, ``failed to list CRs of ...: ...``) when a list fails."""
        if kind == "Namespace":
            pods = await _listing(self.kube, PODS, name(obj), f"{FORBIDDEN} for list pods")
            pvcs = await _listing(self.kube, PVCS, name(obj), f"{FORBIDDEN} for list pvc")
            return Facts(active_pods=active_count(pods, pods=True), bound_pvcs=bound_pvc_count(pvcs))
        if not self.crd_cascading:
            return Facts()
        res = _crd_resource(obj)
        if res is None:
            return Facts(active_crs=0, crd_cascading_gate=True)
        what = f"failed to list CRs of {res.group}/{res.version}, Kind={res.kind}List"
        items = await _listing(self.kube, res, None, what, sep=": ")
        return Facts(active_crs=active_count(items), crd_cascading_gate=True)


class _LookupFailed(Exception):
    """A list a ``Cascading`` decision needs failed; the message is the denial."""


async def _listing(
    kube: KubeClient, res: Resource, ns: str | None, what: str, sep: str = " error: "
) -> list[Any]:
    try:
        return list((await kube.list(res, ns)).get("items") or [])
    except KruiseError as err:
        raise _LookupFailed(f"{what}{sep}{err}") from err
