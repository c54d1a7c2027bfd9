"""SidecarSet defaults (pure; OpenKruise v1.8 ``SetDefaultsSidecarSet``).

``updateStrategy`` type ``RollingUpdate``, ``maxUnavailable`` 1, ``partition`` 0; every container
``podInjectPolicy: BeforeAppContainer`` (init containers ``AfterAppContainer``),
``upgradeStrategy.upgradeType: ColdUpgrade``, ``shareVolumePolicy.type: disabled`` and Kubernetes'
container defaults (``transferEnv`` field refs ``apiVersion: v1``); volume defaults;
``revisionHistoryLimit`` 10; ``patchPodMetadata[].patchPolicy: Retain``;
``injectionStrategy.revision.policy: Always``. The mutating webhook then writes the two hashes
(:mod:`kruise.workloads.sidecarset.hashing`).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from kruise.workloads.admission.pod_defaults import default_container, default_volumes

__all__ = ["default_sidecarset"]

JSON = dict[str, Any]


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _default_sidecar(container: Any, policy: str) -> Any:
    if not isinstance(container, Mapping):
        return container
    out = default_container(container)
    out["podInjectPolicy"] = out.get("podInjectPolicy") or policy
    upgrade = dict(_mapping(out.get("upgradeStrategy")))
    upgrade["upgradeType"] = upgrade.get("upgradeType") or "ColdUpgrade"
    out["upgradeStrategy"] = upgrade
    share = dict(_mapping(out.get("shareVolumePolicy")))
    share["type"] = share.get("type") or "disabled"
    out["shareVolumePolicy"] = share
    for transfer in _list(out.get("transferEnv")):
        ref = _mapping(_mapping(transfer).get("sourceContainerNameFrom")).get("fieldRef")
        if isinstance(ref, dict) and not ref.get("apiVersion"):
            ref["apiVersion"] = "v1"
    return out


def default_sidecarset(obj: Mapping[str, Any]) -> JSON:
    """A copy of the SidecarSet with ``SetDefaultsSidecarSet`` applied (see the module docstring)."""
    out = copy.deepcopy(dict(obj))
    spec = out.setdefault("spec", {})
    if not isinstance(spec, dict):
        return out
    strategy = dict(_mapping(spec.get("updateStrategy")))
    strategy["type"] = strategy.get("type") or "RollingUpdate"
    if strategy.get("maxUnavailable") is None:
        strategy["maxUnavailable"] = 1
    if strategy.get("partition") is None:
        strategy["partition"] = 0
    spec["updateStrategy"] = strategy
    for key, policy in (("initContainers", "AfterAppContainer"), ("containers", "BeforeAppContainer")):
        if isinstance(spec.get(key), list):
            spec[key] = [_default_sidecar(c, policy) for c in spec[key]]
    if isinstance(spec.get("volumes"), list):
        spec["volumes"] = default_volumes(spec["volumes"])
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    for patch in _list(spec.get("patchPodMetadata")):
        if isinstance(patch, dict) and not patch.get("patchPolicy"):
            patch["patchPolicy"] = "Retain"
    revision = _mapping(spec.get("injectionStrategy")).get("revision")
    if isinstance(revision, dict) and not revision.get("policy"):
        revision["policy"] = "Always"
    return out
