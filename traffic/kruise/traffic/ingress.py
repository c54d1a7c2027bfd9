"""The canary Ingress of an Ingress-class provider (pure; mirrors ``KR:.../network/ingress/ingress.go``).

Kruise never edits the user's Ingress. It creates ``<ingress>-canary`` next to it:

- metadata: the stable Ingress's labels and annotations, owned by the Rollout;
- spec: the same ``ingressClassName`` and ``tls``, and only the rules/paths whose backend is the
  stable Service, rewritten to the canary Service (rules without such a path are left out);
- annotations: whatever the class's Lua script returns. Its input is upstream's ``LuaData``:
  ``annotations`` (the canary Ingress's current annotations), ``weight`` (a string, ``"-1"`` when
  the step sets no traffic), ``matches``, ``stableService``, ``canaryService``,
  ``requestHeaderModifier``. For ``nginx`` that yields ``nginx.ingress.kubernetes.io/canary*``.

Upstream builds the rules only when it creates the canary Ingress; we recompute them on every
``ensure`` (level-triggered), so a rule added to the stable Ingress mid-rollout reaches the
canary too. Restoring deletes the canary Ingress.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from kruise.traffic.intent import JSON, TrafficIntent
from kruise.traffic.lua import LuaScriptError, run_lua_table

CANARY_SUFFIX = "-canary"


def canary_ingress_name(ingress_name: str) -> str:
    """``<ingress>-canary`` (``defaultCanaryIngressName``)."""
    return f"{ingress_name}{CANARY_SUFFIX}"


def canary_rules(stable_ingress: Mapping[str, Any], stable_service: str, canary_service: str) -> list[JSON]:
    """The stable Ingress's rules reduced to paths backed by ``stable_service``, pointed at the canary."""
    out: list[JSON] = []
    for rule in (stable_ingress.get("spec") or {}).get("rules") or []:
        paths: list[JSON] = []
        for path in (rule.get("http") or {}).get("paths") or []:
            service = (path.get("backend") or {}).get("service") or {}
            if service.get("name") != stable_service:
                continue
            canary_path = copy.deepcopy(path)
            canary_path["backend"]["service"]["name"] = canary_service
            paths.append(canary_path)
        if not paths:
            continue
        canary_rule: JSON = {"http": {"paths": paths}}
        if rule.get("host"):
            canary_rule["host"] = rule["host"]
        out.append(canary_rule)
    return out


def canary_spec(stable_ingress: Mapping[str, Any], stable_service: str, canary_service: str) -> JSON:
    """``spec`` of the canary Ingress: class, TLS and the rewritten rules (``buildCanaryIngress``)."""
    stable_spec = stable_ingress.get("spec") or {}
    spec: JSON = {}
    if stable_spec.get("ingressClassName"):
        spec["ingressClassName"] = stable_spec["ingressClassName"]
    if stable_spec.get("tls"):
        spec["tls"] = copy.deepcopy(stable_spec["tls"])
    rules = canary_rules(stable_ingress, stable_service, canary_service)
    if rules:
        spec["rules"] = rules
    return spec


def lua_input(annotations: Mapping[str, str], intent: TrafficIntent) -> JSON:
    """The ``obj`` an Ingress-class script sees (upstream ``LuaData``, field names lower-camel)."""
    data: JSON = {
        "annotations": dict(annotations),
        "weight": str(-1 if intent.weight is None else intent.weight),
        "stableService": intent.stable_service,
        "canaryService": intent.canary_service,
    }
    if intent.matches:
        data["matches"] = [copy.deepcopy(dict(m)) for m in intent.matches]
    if intent.request_header_modifier:
        data["requestHeaderModifier"] = copy.deepcopy(intent.request_header_modifier)
    return data


def canary_annotations(script: str, annotations: Mapping[str, str], intent: TrafficIntent) -> dict[str, str]:
    """Run the class script; the returned table is the new annotation map.

    Numbers and booleans in the result are written as strings; anything else is a
    :class:`~kruise.traffic.lua.LuaScriptError` (upstream fails to decode it into a string map).
    """
    result = run_lua_table(script, lua_input(annotations, intent))
    if isinstance(result, list):
        if result:
            raise LuaScriptError("ingress lua script must return a table of annotations, not a list")
        return {}
    out: dict[str, str] = {}
    for key, value in result.items():
        if isinstance(value, bool):
            out[key] = "true" if value else "false"
        elif isinstance(value, str | int | float):
            out[key] = str(value)
        else:
            raise LuaScriptError(f"annotation {key!r} from the ingress lua script is not a string")
    return out


def desired_canary_ingress(
    stable_ingress: Mapping[str, Any],
    current: Mapping[str, Any] | None,
    intent: TrafficIntent,
    script: str,
    owner: Mapping[str, Any] | None = None,
) -> JSON:
    """The whole canary Ingress for ``intent``.

    ``current`` is the existing canary Ingress, if any: its annotations are the script's input,
    as upstream feeds back the canary's own annotations; a new one starts from the stable's.
    """
    meta = stable_ingress.get("metadata") or {}
    name = canary_ingress_name(str(meta.get("name")))
    source_meta = (current.get("metadata") or {}) if current is not None else meta
    annotations = canary_annotations(script, dict(source_meta.get("annotations") or {}), intent)
    metadata: JSON = {"name": name, "namespace": meta.get("namespace") or intent.namespace}
    if meta.get("labels"):
        metadata["labels"] = dict(meta["labels"])
    if annotations:
        metadata["annotations"] = annotations
    if owner:
        metadata["ownerReferences"] = [dict(owner)]
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": metadata,
        "spec": canary_spec(stable_ingress, intent.stable_service, intent.canary_service),
    }


def needs_update(current: Mapping[str, Any], desired: Mapping[str, Any]) -> bool:
    """Whether the canary Ingress's annotations or spec differ from ``desired``."""
    current_annotations = (current.get("metadata") or {}).get("annotations") or {}
    desired_annotations = (desired.get("metadata") or {}).get("annotations") or {}
    return current_annotations != desired_annotations or (current.get("spec") or {}) != desired.get("spec")


def updated_canary_ingress(current: Mapping[str, Any], desired: Mapping[str, Any]) -> JSON:
    """``current`` with ``desired``'s annotations and spec (keeps resourceVersion as the precondition)."""
    out = copy.deepcopy(dict(current))
    out.pop("status", None)
    annotations = (desired.get("metadata") or {}).get("annotations")
    if annotations:
        out["metadata"]["annotations"] = dict(annotations)
    else:
        out["metadata"].pop("annotations", None)
    out["spec"] = copy.deepcopy(desired["spec"])
    return out
