"""PodProbeMarker validation (pure): upstream's ``pkg/webhook/podprobemarker/validating`` (v1.8.4).

Upstream has only a validating webhook for the kind (no defaulting: a probe is stored as written
and the daemon reads a zero ``periodSeconds``, ``timeoutSeconds``, ``initialDelaySeconds``,
``successThreshold`` or ``failureThreshold`` as 1). :func:`validate_ppm` returns the text of
``field.ErrorList.ToAggregate()`` (one error bare, several as ``[a, b]``), answered with HTTP 400;
``None`` admits. Upstream's rules, in its order (several return at the first error):

- ``spec.selector`` present (``empty Selector is not valid for PodProbeMarker.``), a valid label
  selector with at least one term (``empty selector is not valid for podProbeMarker.``);
- ``spec.probes`` not empty; per probe: no ``#`` in the name, a name, a containerName, a name that
  is not a native/kruise pod condition, a unique name (each of these ends validation); the handler:
  exactly one of exec (a command) / tcpSocket (no host, a valid port) — httpGet is refused in
  v1.8 (``current no support http probe``); non-negative timings; ``podConditionType`` or
  ``markerPolicy`` given, ``podConditionType`` unique and a qualified name; marker policy states
  unique, ``Succeeded``/``Failed``, with labels or annotations (valid ones);
- on UPDATE the selector is immutable (``selector: Invalid value: ...: selector must be immutable``).

Values print as Go would for strings (quoted) and integers; objects print as compact JSON where
Go prints ``%#v`` of its own type (documented, not guessed).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["NATIVE_CONDITIONS", "validate_ppm"]

NATIVE_CONDITIONS = frozenset(
    {"PodScheduled", "Initialized", "Ready", "ContainersReady", "KruisePodReady", "InPlaceUpdateReady"}
)
"""Probe names refused: the pod conditions Kubernetes and Kruise own."""

_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_DNS1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_PORT_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def _value(value: Any) -> str:
    if value is None:
        return '"null"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def _invalid(path: str, value: Any, detail: str) -> str:
    return (
        f"{path}: Invalid value: {_value(value)}: {detail}"
        if detail
        else f"{path}: Invalid value: {_value(value)}"
    )


def _required(path: str, detail: str = "") -> str:
    return f"{path}: Required value: {detail}" if detail else f"{path}: Required value"


def _forbidden(path: str, detail: str) -> str:
    return f"{path}: Forbidden: {detail}"


def qualified_name_errors(value: str) -> list[str]:
    """``validation.IsQualifiedName``'s messages (empty: valid)."""
    errs: list[str] = []
    prefix, _, name = value.rpartition("/")
    if value.count("/") > 1:
        return [
            "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and "
            "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used "
            "for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain "
            "prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if "/" in value:
        if not prefix:
            errs.append("prefix part must be non-empty")
        elif len(prefix) > 253 or not _DNS1123.match(prefix):
            errs.append(
                "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
                "'example.com', regex used for validation is "
                "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
            )
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part must be no more than 63 characters")
    elif not _NAME.match(name):
        errs.append(
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
            "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
            "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
        )
    return errs


def _label_value_errors(value: str) -> list[str]:
    if not value:
        return []
    errs = []
    if len(value) > 63:
        errs.append("must be no more than 63 characters")
    if not _NAME.match(value):
        errs.append(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
            "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
            "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
        )
    return errs


def _selector_errors(selector: Mapping[str, Any], path: str) -> list[str]:
    errs: list[str] = []
    for i, expr in enumerate(selector.get("matchExpressions") or ()):
        at = f"{path}.matchExpressions[{i}]"
        op, values = expr.get("operator"), expr.get("values") or []
        if op in ("In", "NotIn") and not values:
            errs.append(_required(f"{at}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
        elif op in ("Exists", "DoesNotExist") and values:
            errs.append(
                _forbidden(
                    f"{at}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
                )
            )
        elif op not in _OPERATORS:
            errs.append(_invalid(f"{at}.operator", op, "not a valid selector operator"))
        errs += [
            _invalid(f"{at}.key", expr.get("key"), m)
            for m in qualified_name_errors(str(expr.get("key") or ""))
        ]
    for key, value in (selector.get("matchLabels") or {}).items():
        errs += [_invalid(f"{path}.matchLabels", key, m) for m in qualified_name_errors(key)]
        errs += [_invalid(f"{path}.matchLabels", value, m) for m in _label_value_errors(str(value))]
    if not (selector.get("matchLabels") or selector.get("matchExpressions")):
        errs.append(_invalid(path, selector, "empty selector is not valid for podProbeMarker."))
    return errs


def _port_errors(port: Any, path: str) -> list[str]:
    if isinstance(port, int) and not isinstance(port, bool):
        return [] if 1 <= port <= 65535 else [_invalid(path, port, "must be between 1 and 65535, inclusive")]
    if isinstance(port, str):
        errs = []
        if len(port) > 15:
            errs.append("must be no more than 15 characters")
        if not _PORT_NAME.match(port):
            errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
        elif not re.search("[a-z]", port):
            errs.append("must contain at least one letter (a-z)")
        if "--" in port:
            errs.append("must not contain consecutive hyphens")
        return [_invalid(path, port, m) for m in errs]
    return [f"{path}: Internal error: unknown type: {port!r}"]


def _handler_errors(probe: Mapping[str, Any], path: str) -> list[str]:
    errs: list[str] = []
    handlers = 0
    if probe.get("exec") is not None:
        handlers += 1
        if not (probe["exec"] or {}).get("command"):
            errs.append(_required(f"{path}.exec.command"))
    if probe.get("httpGet") is not None:
        if handlers:
            errs.append(_forbidden(f"{path}.httpGet", "may not specify more than 1 handler type"))
        else:
            handlers += 1
            errs.append(_forbidden(f"{path}.probe", "current no support http probe"))
    if probe.get("tcpSocket") is not None:
        if handlers:
            errs.append(_forbidden(f"{path}.tcpSocket", "may not specify more than 1 handler type"))
        else:
            handlers += 1
            tcp = probe["tcpSocket"] or {}
            if tcp.get("host"):
                errs.append(
                    _invalid(f"{path}.tcpSocket.host", tcp["host"], "host field in probes is not allowed")
                )
            errs += _port_errors(tcp.get("port", 0), f"{path}.tcpSocket.port")
    if not handlers:
        errs.append(_required(path, "must specify a handler type"))
    return errs


def _probe_errors(probe: Any, path: str) -> list[str]:
    if not isinstance(probe, Mapping):
        return [_invalid(path, probe, "probe can't be empty in podProbeMarker.")]
    errs = _handler_errors(probe, path)
    for key in (
        "initialDelaySeconds",
        "timeoutSeconds",
        "periodSeconds",
        "successThreshold",
        "failureThreshold",
    ):
        value = probe.get(key) or 0
        if value < 0:
            errs.append(_invalid(f"{path}.{key}", value, "must be greater than or equal to 0"))
    return errs


def _policy_errors(policy: Mapping[str, Any], path: str) -> list[str]:
    if policy.get("state") not in ("Succeeded", "Failed"):
        return [_required(f"{path}.state", "marker policy state must be 'True' or 'False'")]
    labels, annotations = policy.get("labels") or {}, policy.get("annotations") or {}
    if not labels and not annotations:
        return [_required(path, "marker policy annotations or labels can't be both empty")]
    errs: list[str] = []
    for key, value in labels.items():
        errs += [_invalid(f"{path}.labels", key, m) for m in qualified_name_errors(key)]
        errs += [_invalid(f"{path}.labels", value, m) for m in _label_value_errors(str(value))]
    for key in annotations:
        errs += [_invalid(f"{path}.annotations", key, m) for m in qualified_name_errors(key.lower())]
    return errs


def _spec_errors(spec: Mapping[str, Any]) -> list[str]:
    errs: list[str] = []
    selector = spec.get("selector")
    if selector is None:
        errs.append(_invalid("spec.selector", None, "empty Selector is not valid for PodProbeMarker."))
    else:
        errs += _selector_errors(selector, "spec.selector")
    probes = spec.get("probes") or []
    if not probes:
        errs.append(_invalid("spec.probes", None, "empty probes is not valid for PodProbeMarker."))
        return errs
    names: set[str] = set()
    conditions: set[str] = set()
    for probe in probes:
        name, container = str(probe.get("name") or ""), str(probe.get("containerName") or "")
        if "#" in name:
            return [*errs, _invalid("spec.probes", name, "probe name can't contains '#'.")]
        if not name:
            return [*errs, _invalid("spec.probes", name, "probe name can't be empty in PodProbeMarker.")]
        if not container:
            return [
                *errs,
                _invalid("spec.probes", container, "probe containerName can't be empty in PodProbeMarker."),
            ]
        if name in NATIVE_CONDITIONS:
            return [*errs, _invalid("spec.probes", name, f"probe name can't be {name}")]
        if name in names:
            return [*errs, _invalid("spec.probes", name, "probe name must be unique in PodProbeMarker.")]
        names.add(name)
        errs += _probe_errors(probe.get("probe"), "spec.probe")
        condition = str(probe.get("podConditionType") or "")
        policies = probe.get("markerPolicy") or []
        if not condition and not policies:
            return [
                *errs,
                _invalid(
                    "spec.probes",
                    dict(probe),
                    "podConditionType and markerPolicy cannot be empty at the same time",
                ),
            ]
        if condition and condition in conditions:
            return [
                *errs,
                _invalid(
                    "spec.probes", condition, f"podConditionType {condition} must be unique in podProbeMarker"
                ),
            ]
        if condition:
            conditions.add(condition)
            errs += [_invalid("spec", condition, m) for m in qualified_name_errors(condition)]
        states: set[str] = set()
        for policy in policies:
            state = str(policy.get("state") or "")
            if state in states:
                return [*errs, _invalid("spec.markerPolicy", state, "marker policy state must be unique.")]
            states.add(state)
            errs += _policy_errors(policy, "spec.markerPolicy")
    return errs


def _aggregate(errs: list[str]) -> str | None:
    if not errs:
        return None
    return errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]"


def validate_ppm(obj: Mapping[str, Any], old: Mapping[str, Any] | None = None) -> str | None:
    """The refusal text for ``obj`` (``old`` on UPDATE), or None to admit."""
    spec = obj.get("spec") or {}
    errs = _spec_errors(spec)
    if old is not None and (old.get("spec") or {}).get("selector") != spec.get("selector"):
        errs.append(_invalid("selector", spec.get("selector"), "selector must be immutable"))
    return _aggregate(errs)
