"""The canary Service and the stable Service's selector (pure; mirrors ``KR:pkg/trafficrouting/manager.go``).

During a canary step the stable Service ``<svc>`` must select only stable pods and a canary
Service ``<svc>-canary`` only canary pods, so the routers can weigh one against the other:

- ``<svc>-canary`` is a copy of ``<svc>`` (labels, annotations, spec) with the fields the API
  server allocates cleared, so it can be created next to it: ``clusterIP``/``clusterIPs``,
  ``externalIPs``, ``ipFamilyPolicy``/``ipFamilies``, ``loadBalancerIP``, every port's
  ``nodePort`` (upstream ``createCanaryService``; we also clear ``healthCheckNodePort``, which
  collides the same way), and ``selector[revisionKey] = canaryRevision``;
- the stable Service's selector is pinned with ``selector[revisionKey] = stableRevision`` and
  unpinned at the end by setting that key to null.

Patches are JSON merge patches built as data, carrying the read ``resourceVersion`` as an
optimistic-concurrency precondition. ``None`` means "already so, nothing to write".
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from kruise.traffic.intent import JSON

CANARY_SERVICE_SUFFIX = "-canary"
_ALLOCATED_SPEC_FIELDS = (
    "clusterIP",
    "clusterIPs",
    "externalIPs",
    "ipFamilyPolicy",
    "ipFamilies",
    "loadBalancerIP",
    "healthCheckNodePort",
)


def canary_service_name(stable_service: str) -> str:
    """``<svc>-canary`` (``getCanaryServiceName``)."""
    return f"{stable_service}{CANARY_SERVICE_SUFFIX}"


def canary_service(
    stable_svc: Mapping[str, Any],
    canary_revision: str,
    revision_key: str,
    owner: Mapping[str, Any] | None = None,
    name: str | None = None,
) -> JSON:
    """The canary Service to create for ``stable_svc``, selecting ``revision_key=canary_revision``."""
    meta = stable_svc.get("metadata") or {}
    spec = copy.deepcopy(dict(stable_svc.get("spec") or {}))
    for key in _ALLOCATED_SPEC_FIELDS:
        spec.pop(key, None)
    ports = []
    for port in spec.get("ports") or []:
        port = dict(port)
        port.pop("nodePort", None)
        ports.append(port)
    if ports:
        spec["ports"] = ports
    spec["selector"] = {**(spec.get("selector") or {}), revision_key: canary_revision}
    metadata: JSON = {
        "name": name or canary_service_name(str(meta.get("name"))),
        "namespace": meta.get("namespace"),
    }
    if meta.get("labels"):
        metadata["labels"] = dict(meta["labels"])
    if meta.get("annotations"):
        metadata["annotations"] = dict(meta["annotations"])
    if owner:
        metadata["ownerReferences"] = [dict(owner)]
    return {"apiVersion": "v1", "kind": "Service", "metadata": metadata, "spec": spec}


def _selector_patch(svc: Mapping[str, Any], key: str, value: str | None) -> JSON:
    rv = (svc.get("metadata") or {}).get("resourceVersion")
    patch: JSON = {"spec": {"selector": {key: value}}}
    if rv:
        patch["metadata"] = {"resourceVersion": rv}
    return patch


def selector_patch(svc: Mapping[str, Any], revision_key: str, revision: str) -> JSON | None:
    """Merge patch setting ``selector[revision_key] = revision`` (pin the stable or retarget the
    canary Service); None when the selector already says so."""
    selector = (svc.get("spec") or {}).get("selector") or {}
    if selector.get(revision_key) == revision:
        return None
    return _selector_patch(svc, revision_key, revision)


def selector_restore_patch(svc: Mapping[str, Any], revision_key: str) -> JSON | None:
    """Merge patch removing ``revision_key`` from the selector (``RestoreStableService``); None if absent."""
    selector = (svc.get("spec") or {}).get("selector") or {}
    if not selector.get(revision_key):
        return None
    return _selector_patch(svc, revision_key, None)
