"""Template arguments: ``{{args.<name>}}`` placeholders and where argument values come from.

Mirrors Argo Rollouts' ``utils/template`` (fasttemplate with ``{{``/``}}``, the tag trimmed of
spaces, so ``{{ args.x }}`` works) and ``ResolveMetricArgs``: every string of a metric,
conditions and provider fields alike, is resolved before the metric is scheduled or measured. An
argument without a value, or a placeholder naming an unknown argument, is an error that turns
the whole run into an Error. Secret values are redacted from messages as ``*****``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kruise.analysis.api import Argument, Metric

__all__ = [
    "SECRET_PLACEHOLDER",
    "ArgumentError",
    "field_path_value",
    "placeholder_values",
    "redact",
    "resolve_metric",
    "resolve_text",
]

SECRET_PLACEHOLDER = "temp-for-secret"
"""Stands in for a secret's value when a metric is resolved only to be scheduled (Argo does too)."""

_TAG = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)


class ArgumentError(ValueError):
    """An argument that cannot be resolved; the run becomes an Error with this message."""


def resolve_text(text: str, values: Mapping[str, str]) -> str:
    """Replace every ``{{args.<name>}}`` in ``text`` with ``values[name]``.

    Raises :class:`ArgumentError` (``failed to resolve {{args.missing}}``) for a tag that names
    no known argument, and for an opening ``{{`` without a closing ``}}``.
    """
    if "{{" not in text:
        return text
    missing: list[str] = []

    def one(match: re.Match[str]) -> str:
        tag = match.group(1).strip()
        if tag.startswith("args.") and tag[5:] in values:
            return values[tag[5:]]
        missing.append(match.group(1))
        return ""

    resolved = _TAG.sub(one, text)
    if missing:
        raise ArgumentError(f"failed to resolve {{{{{missing[-1]}}}}}")
    if "{{" in _TAG.sub("", text):
        raise ArgumentError(f"cannot find end tag '}}}}' in {text!r}")
    return resolved


def _resolve(node: Any, values: Mapping[str, str]) -> Any:
    if isinstance(node, str):
        return resolve_text(node, values)
    if isinstance(node, list):
        return [_resolve(item, values) for item in node]
    if isinstance(node, dict):
        return {key: _resolve(item, values) for key, item in node.items()}
    return node


def resolve_metric(metric: Metric, values: Mapping[str, str]) -> Metric:
    """A copy of ``metric`` with every placeholder resolved from ``values`` (name -> value).

    Raises :class:`ArgumentError` as :func:`resolve_text`.
    """
    return Metric.from_dict(_resolve(metric.to_dict(), values))


def placeholder_values(args: Sequence[Argument] | None) -> dict[str, str]:
    """Argument values for scheduling: inline values, and a placeholder for each secret.

    Mirrors Argo's ``getResolvedMetricsWithoutSecrets``: secrets are not read to decide *when*
    to measure. An argument with neither ``value`` nor ``valueFrom`` raises
    :class:`ArgumentError` (``argument "x" was not supplied``); a ``fieldRef`` that was not
    resolved by the creator is resolved by the controller and gets a placeholder here.
    """
    values: dict[str, str] = {}
    for arg in args or []:
        if arg.value is not None:
            values[arg.name] = arg.value
        elif arg.value_from is not None and (arg.value_from.secret_key_ref or arg.value_from.field_ref):
            values[arg.name] = SECRET_PLACEHOLDER
        else:
            raise ArgumentError(f'argument "{arg.name}" was not supplied')
    return values


_SEGMENT = re.compile(r"\.?([^.\[\]]+)|\[['\"]?([^\]'\"]*)['\"]?\]")


def field_path_value(obj: Mapping[str, Any], path: str) -> str:
    """The value at a ``fieldRef.fieldPath`` of ``obj`` as text.

    Supports ``metadata.name``, ``metadata.labels['env']``, ``metadata.annotations['a/b']`` and
    plain paths into spec/status (``status.stableRS``, ``spec.replicas``, ``a.b[0].c``), as
    Argo's ``fieldpath.ExtractFieldPathAsString`` and ``extractValueFromRollout``. Raises
    :class:`ArgumentError` when the path is missing or ends in an object or list.
    """
    node: Any = obj
    for match in _SEGMENT.finditer(path):
        key = match.group(1) if match.group(1) is not None else match.group(2)
        if isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        elif isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, dict) and path.startswith("metadata.") and match.group(2) is not None:
            return ""  # a missing label or annotation is empty, as in Kubernetes' downward API
        else:
            raise ArgumentError(f"invalid path {path}")
    if node is None or isinstance(node, dict | list):
        raise ArgumentError(f"path {path} must terminate in a primitive value")
    if isinstance(node, bool):
        return "true" if node else "false"
    return str(node)


def redact(message: str | None, secrets: Iterable[str]) -> str | None:
    """``message`` with every non-empty secret value replaced by ``*****`` (Argo's redaction)."""
    if not message:
        return message
    for secret in secrets:
        if secret:
            message = message.replace(secret, "*****")
    return message
