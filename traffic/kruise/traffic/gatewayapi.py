"""Gateway API HTTPRoute rules for a canary step (pure; mirrors ``KR:.../network/gateway/gateway.go``).

Kruise edits the user's HTTPRoute in place; nothing else is created.

- **Weight**: every rule that has a backendRef to the stable Service gets the canary Service as a
  second backendRef (added, or overwritten where present) with weights ``stable = 100 - w`` and
  ``canary = w``.
- **Matches** (take precedence over weight, as the Gateway API cannot weigh and match in one
  rule): each stable rule is cloned into a canary-only rule whose matches are the original
  matches with the step's headers/queryParams added; matches that carry a ``path`` replace the
  original matches of the first stable rule's clone. The clones go after the original rules.
- **Restore**: canary backendRefs are removed, the stable weight is set to 1 and rules left
  without backends (the canary clones) are dropped.

Where we deliberately differ from upstream, in ways that only matter on transitions:
a weight step first drops the canary clones of an earlier match step, and a match step first
strips the canary backendRef of an earlier weight step (upstream drops such rules entirely);
restore keeps the user's rules that never had a backend (redirects); match-only steps use the
``nonPathMatches`` themselves (upstream indexes the full match list); a clone of a named rule
is named ``<name>-canary`` because rule names must be unique; ``requestHeaderModifier``
(ignored by upstream's gateway provider) becomes a ``RequestHeaderModifier`` filter on the
canary clone (matches) or on the canary backendRef (weights).

All functions take and return JSON dicts and never mutate their input. Missing fields read as
the API server's defaults (backendRef ``kind: Service``, ``group: ""``; match ``path`` ``PathPrefix
/``; header/query ``type: Exact``), and the step's matches are written with those defaults
filled in, so that what we write reads back equal and a second ``ensure`` finds nothing to do.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from kruise.traffic.intent import JSON

HEADER_MODIFIER = "RequestHeaderModifier"
_DEFAULT_PATH: JSON = {"type": "PathPrefix", "value": "/"}


def _is_service_ref(ref: Mapping[str, Any], service: str) -> bool:
    return (
        (ref.get("kind") or "Service") == "Service"
        and (ref.get("group") or "") == ""
        and ref.get("name") == service
    )


def _ref_index(rule: Mapping[str, Any], service: str) -> int | None:
    for index, ref in enumerate(rule.get("backendRefs") or []):
        if _is_service_ref(ref, service):
            return index
    return None


def _with_header_modifier(filters: Sequence[JSON] | None, modifier: JSON | None) -> list[JSON]:
    """``filters`` with the RequestHeaderModifier replaced by ``modifier`` (or kept when None)."""
    out = [copy.deepcopy(f) for f in filters or []]
    if modifier is None:
        return out
    wanted = {"type": HEADER_MODIFIER, "requestHeaderModifier": copy.deepcopy(dict(modifier))}
    for index, item in enumerate(out):
        if item.get("type") == HEADER_MODIFIER:
            out[index] = wanted
            return out
    out.append(wanted)
    return out


def _set_filters(target: JSON, filters: list[JSON]) -> None:
    if filters:
        target["filters"] = filters
    else:
        target.pop("filters", None)


def normalise_match(match: Mapping[str, Any]) -> JSON:
    """A Kruise ``HttpRouteMatch`` with the Gateway API defaults filled in.

    ``path`` gets ``type: PathPrefix``/``value: /``, headers and queryParams ``type: Exact``.
    """
    out: JSON = {}
    if match.get("path") is not None:
        path = dict(match["path"])
        out["path"] = {"type": path.get("type") or "PathPrefix", "value": path.get("value") or "/"}
    for key in ("headers", "queryParams"):
        items = match.get(key) or []
        if items:
            out[key] = [{**dict(item), "type": item.get("type") or "Exact"} for item in items]
    return out


def restored_rules(rules: Sequence[JSON], stable: str, canary: str) -> list[JSON]:
    """Rules with every canary backendRef removed, stable weight 1, emptied canary rules dropped."""
    out: list[JSON] = []
    for original in rules:
        rule = copy.deepcopy(original)
        refs = list(rule.get("backendRefs") or [])
        kept = [r for r in refs if not _is_service_ref(r, canary)]
        had_canary = len(kept) != len(refs)
        for ref in kept:
            if _is_service_ref(ref, stable):
                ref["weight"] = 1
        if had_canary and not kept:
            continue
        if "backendRefs" in rule:
            rule["backendRefs"] = kept
        out.append(rule)
    return out


def weighted_rules(
    rules: Sequence[JSON], stable: str, canary: str, weight: int, modifier: JSON | None = None
) -> list[JSON]:
    """Rules sending ``weight`` percent of each stable rule's traffic to ``canary``.

    Mirrors ``buildCanaryWeightHttpRoutes``; ``modifier`` goes on the canary backendRef.
    """
    out: list[JSON] = []
    for original in rules:
        stable_at = _ref_index(original, stable)
        canary_at = _ref_index(original, canary)
        if stable_at is None:
            if canary_at is None:
                out.append(copy.deepcopy(original))
            continue  # a canary-only clone of an earlier match step
        rule = copy.deepcopy(original)
        refs: list[JSON] = rule["backendRefs"]
        stable_ref = refs[stable_at]
        stable_ref["weight"] = 100 - weight
        canary_ref = copy.deepcopy(refs[canary_at]) if canary_at is not None else copy.deepcopy(stable_ref)
        canary_ref["name"] = canary
        canary_ref["weight"] = weight
        _set_filters(canary_ref, _with_header_modifier(stable_ref.get("filters"), modifier))
        if canary_at is None:
            refs.append(canary_ref)
        else:
            refs[canary_at] = canary_ref
        out.append(rule)
    return out


def matched_rules(
    rules: Sequence[JSON],
    stable: str,
    canary: str,
    matches: Sequence[Mapping[str, Any]],
    modifier: JSON | None = None,
) -> list[JSON]:
    """The stable rules plus canary-only clones matching ``matches`` (``buildCanaryHeaderHttpRoutes``)."""
    wanted = [normalise_match(m) for m in matches]
    path_matches = [m for m in wanted if "path" in m]
    other_matches = [m for m in wanted if "path" not in m]
    base = restored_rules(rules, stable, canary)
    clones: list[JSON] = []
    for rule in base:
        stable_at = _ref_index(rule, stable)
        if stable_at is None:
            continue
        new_matches: list[JSON] = [copy.deepcopy(m) for m in path_matches]
        path_matches = []  # upstream: only the first stable rule's clone gets the path matches
        for current in rule.get("matches") or [{"path": dict(_DEFAULT_PATH)}]:
            for extra in other_matches:
                combined = copy.deepcopy(current)
                for key in ("headers", "queryParams"):
                    if extra.get(key):
                        combined[key] = [*(combined.get(key) or []), *copy.deepcopy(extra[key])]
                new_matches.append(combined)
        if not new_matches:
            continue
        clone = copy.deepcopy(rule)
        canary_ref = copy.deepcopy(rule["backendRefs"][stable_at])
        canary_ref["name"] = canary
        clone["backendRefs"] = [canary_ref]
        clone["matches"] = new_matches
        _set_filters(clone, _with_header_modifier(rule.get("filters"), modifier))
        if clone.get("name"):
            clone["name"] = f"{clone['name']}-canary"
        clones.append(clone)
    return base + clones


def desired_rules(
    rules: Sequence[JSON],
    stable: str,
    canary: str,
    intent_weight: int | None,
    matches: Sequence[Mapping[str, Any]],
    modifier: JSON | None = None,
) -> list[JSON]:
    """The rules an HTTPRoute should have for one step (``buildDesiredHTTPRoute``).

    ``matches`` win over ``intent_weight``; with neither the rules are returned unchanged.
    """
    if matches:
        return matched_rules(rules, stable, canary, matches, modifier)
    if intent_weight is not None:
        return weighted_rules(rules, stable, canary, intent_weight, modifier)
    return [copy.deepcopy(r) for r in rules]
