"""Lua-driven custom network objects (pure; mirrors upstream ``custom_network_provider.go``).

A ``customNetworkRefs[]`` object (an Istio VirtualService or DestinationRule, or any kind a
user scripts) is edited in place by a Lua script, always starting from the object as it was
before the rollout, so a step never builds on the previous step's edits:

- on the first ``ensure`` its ``spec``, ``labels`` and ``annotations`` are saved as compact JSON
  ``{"spec":..,"labels":..,"annotations":..}`` in the annotation
  ``rollouts.kruise.io/original-spec-configuration``;
- the script gets ``obj.data`` (that saved ``{spec, labels, annotations}``), ``obj.canaryWeight``
  (``-1`` when the step sets only matches), ``obj.stableWeight`` (``100 - canaryWeight``),
  ``obj.matches``, ``obj.canaryService``, ``obj.stableService``, ``obj.requestHeaderModifier``,
  plus what the DestinationRule script needs (``obj.revisionLabelKey``, ``obj.stableRevision``,
  ``obj.canaryRevision``, ``obj.stableName``, ``obj.canaryName`` from the reference's
  ``additionalParams``); it returns the new ``{spec, labels, annotations}``;
- restoring writes the saved spec, labels and annotations back, which also drops the annotation.

Upstream saves the original with one update and applies the script with a second; we do both
in one write, since the original is read from the same object version.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from kruise.traffic.intent import JSON, TrafficIntent
from kruise.traffic.lua import LuaScriptError, run_lua_table

ORIGINAL_SPEC_ANNOTATION = "rollouts.kruise.io/original-spec-configuration"
STABLE_SUBSET_PARAM = "istio.destinationRule.stableSubsetName"
CANARY_SUBSET_PARAM = "istio.destinationRule.canarySubsetName"


def _string_map(value: Any, what: str) -> dict[str, str]:
    if value is None or value == []:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise LuaScriptError(f"{what} returned by the lua script must be a map of strings")
    return dict(value)


def original_data(obj: Mapping[str, Any]) -> JSON:
    """The pre-rollout ``{spec, labels, annotations}``: from the annotation, else from ``obj`` itself.

    Empty parts are left out, as upstream's ``omitempty``.
    """
    meta = obj.get("metadata") or {}
    annotations = dict(meta.get("annotations") or {})
    saved = annotations.pop(ORIGINAL_SPEC_ANNOTATION, None)
    if saved:
        try:
            loaded = json.loads(saved)
        except ValueError as err:
            raise LuaScriptError(f"annotation {ORIGINAL_SPEC_ANNOTATION} is not valid JSON") from err
        return dict(loaded) if isinstance(loaded, dict) else {}
    data: JSON = {}
    if obj.get("spec") is not None:
        data["spec"] = copy.deepcopy(obj["spec"])
    if meta.get("labels"):
        data["labels"] = dict(meta["labels"])
    if annotations:
        data["annotations"] = annotations
    return data


def encode_original(data: Mapping[str, Any]) -> str:
    """Compact JSON of the saved data, object keys sorted below the top level (as Go's encoder)."""
    ordered = {key: data[key] for key in ("spec", "labels", "annotations") if data.get(key)}
    text: str = json.dumps(_sorted(ordered, top=True), separators=(",", ":"), ensure_ascii=False)
    return text


def _sorted(value: Any, top: bool = False) -> Any:
    if isinstance(value, dict):
        keys = list(value) if top else sorted(value)
        return {k: _sorted(value[k]) for k in keys}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


def lua_input(
    data: Mapping[str, Any], intent: TrafficIntent, params: Mapping[str, str] | None = None
) -> JSON:
    """The ``obj`` a custom-provider script sees."""
    weight = -1 if intent.weight is None else intent.weight
    params = params or {}
    out: JSON = {
        "data": copy.deepcopy(dict(data)),
        "canaryWeight": weight,
        "stableWeight": 100 - weight,
        "canaryService": intent.canary_service,
        "stableService": intent.stable_service,
        "revisionLabelKey": intent.revision_key,
        "stableRevision": intent.stable_revision,
        "canaryRevision": intent.canary_revision,
    }
    if intent.matches:
        out["matches"] = [copy.deepcopy(dict(m)) for m in intent.matches]
    if intent.request_header_modifier:
        out["requestHeaderModifier"] = copy.deepcopy(intent.request_header_modifier)
    if params.get(STABLE_SUBSET_PARAM):
        out["stableName"] = params[STABLE_SUBSET_PARAM]
    if params.get(CANARY_SUBSET_PARAM):
        out["canaryName"] = params[CANARY_SUBSET_PARAM]
    return out


def run_script(
    script: str, data: Mapping[str, Any], intent: TrafficIntent, params: Mapping[str, str] | None = None
) -> JSON:
    """Run a custom-provider script; its result as ``{spec, labels, annotations}`` (maps checked)."""
    result = run_lua_table(script, lua_input(data, intent, params))
    if isinstance(result, list):
        if result:
            raise LuaScriptError("custom provider lua script must return {spec, labels, annotations}")
        result = {}
    return {
        "spec": result.get("spec"),
        "labels": _string_map(result.get("labels"), "labels"),
        "annotations": _string_map(result.get("annotations"), "annotations"),
    }


def _with_metadata(
    obj: Mapping[str, Any], spec: Any, labels: Mapping[str, str], annotations: Mapping[str, str]
) -> JSON:
    out = copy.deepcopy(dict(obj))
    out.pop("status", None)
    if spec is None:
        out.pop("spec", None)
    else:
        out["spec"] = copy.deepcopy(spec)
    meta = out.setdefault("metadata", {})
    for key, value in (("labels", labels), ("annotations", annotations)):
        if value:
            meta[key] = dict(value)
        else:
            meta.pop(key, None)
    return out


def desired_object(
    obj: Mapping[str, Any], script: str, intent: TrafficIntent, params: Mapping[str, str] | None = None
) -> JSON:
    """``obj`` as the script wants it for ``intent``, carrying the original-spec annotation."""
    meta = obj.get("metadata") or {}
    saved = (meta.get("annotations") or {}).get(ORIGINAL_SPEC_ANNOTATION)
    data = original_data(obj)
    result = run_script(script, data, intent, params)
    annotations = {**result["annotations"], ORIGINAL_SPEC_ANNOTATION: saved or encode_original(data)}
    return _with_metadata(obj, result["spec"], result["labels"], annotations)


def restored_object(obj: Mapping[str, Any]) -> JSON | None:
    """``obj`` with the saved spec/labels/annotations put back; None when nothing was saved."""
    if not ((obj.get("metadata") or {}).get("annotations") or {}).get(ORIGINAL_SPEC_ANNOTATION):
        return None
    data = original_data(obj)
    labels = _string_map(data.get("labels"), "saved labels")
    annotations = _string_map(data.get("annotations"), "saved annotations")
    return _with_metadata(obj, data.get("spec"), labels, annotations)


def differs(current: Mapping[str, Any], desired: Mapping[str, Any]) -> bool:
    """Whether spec, labels or annotations differ (upstream ``compareAndUpdateObject``)."""
    cur, want = current.get("metadata") or {}, desired.get("metadata") or {}
    return (
        current.get("spec") != desired.get("spec")
        or (cur.get("labels") or {}) != (want.get("labels") or {})
        or (cur.get("annotations") or {}) != (want.get("annotations") or {})
    )
