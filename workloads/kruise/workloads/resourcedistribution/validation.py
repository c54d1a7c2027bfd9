"""ResourceDistribution admission rules (pure): upstream's ``validateResourceDistribution``
(``pkg/webhook/resourcedistribution/validating``, v1.8), messages from Appendix B.

- ``spec.resource``: empty -> ``Invalid value: "null": empty resource is not allowed``; not a
  ``v1`` Secret or ConfigMap -> ``unknown or unsupported resource GroupKind, only support
  [Secret ConfigMap]``; on UPDATE a different apiVersion, kind or name ->
  ``resource apiVersion, kind, and name are immutable``; then the API server's verdict on a
  dry-run create of the resource (``failed to dry-run to validate spec.resource, error: ...``,
  an Internal error; AlreadyExists is fine);
- ``spec.targets``: every listed namespace must be a DNS-1123 label; a namespace both included
  and excluded -> ``ambiguous targets because namespace [a b] is in both IncludedNamespaces.List
  and ExcludedNamespaces.List``; a malformed ``namespaceLabelSelector`` ->
  ``labelSelectorAsSelector error: ...``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kruise.workloads.admission.fielderrors import FieldError, GoSyntax, internal_error, invalid
from kruise.workloads.admission.metavalidation import is_dns1123_label
from kruise.workloads.objects import mapping, name
from kruise.workloads.resourcedistribution.plan import SUPPORTED_KINDS, listed_names
from kruise.workloads.selector import SelectorError, compile_selector

__all__ = ["needs_dry_run", "validate_resourcedistribution"]

SUPPORTED_GK_TEXT = "[Secret ConfigMap]"
"""``%v`` of upstream's ``supportedGKList`` (``GroupKind.String()`` of core kinds)."""


def _resource(obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return mapping(mapping(mapping(obj).get("spec")).get("resource"))


def _identity(resource: Mapping[str, Any]) -> tuple[str, str, str]:
    return (str(resource.get("apiVersion", "")), str(resource.get("kind", "")), name(resource))


def _resource_errors(obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[FieldError]:
    path = "spec.resource"
    resource = _resource(obj)
    if not resource:
        return [invalid(path, None, "empty resource is not allowed")]
    if resource.get("apiVersion") != "v1" or resource.get("kind") not in SUPPORTED_KINDS:
        kind = str(resource.get("kind", ""))
        group = str(resource.get("apiVersion", "")).rpartition("/")[0]
        bad = GoSyntax(f"{kind}.{group}" if group else kind)
        return [
            invalid(path, bad, f"unknown or unsupported resource GroupKind, only support {SUPPORTED_GK_TEXT}")
        ]
    if old is not None and _resource(old) and _identity(_resource(old)) != _identity(resource):
        return [invalid(path, None, "resource apiVersion, kind, and name are immutable")]
    return []


def needs_dry_run(obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> bool:
    """Whether the resource got past the kind and immutability checks (upstream then dry-runs it)."""
    return not _resource_errors(obj, old)


def _target_errors(targets: Mapping[str, Any]) -> list[FieldError]:
    path = "spec.targets"
    errors: list[FieldError] = []
    included = listed_names(targets, "includedNamespaces")
    for ns in included:
        errors.extend(invalid(f"{path}.includedNamespaces", ns, m) for m in is_dns1123_label(ns))
    conflicted: list[str] = []
    for ns in listed_names(targets, "excludedNamespaces"):
        errors.extend(invalid(f"{path}.excludedNamespaces", ns, m) for m in is_dns1123_label(ns))
        if ns in included:
            conflicted.append(ns)
    if conflicted:
        detail = (
            f"ambiguous targets because namespace [{' '.join(conflicted)}] is in both "
            "IncludedNamespaces.List and ExcludedNamespaces.List"
        )
        errors.append(invalid(path, dict(targets), detail))
    selector = mapping(targets.get("namespaceLabelSelector"))
    try:
        compile_selector(selector)
    except SelectorError as err:
        errors.append(
            invalid(f"{path}.namespaceLabelSelector", dict(selector), f"labelSelectorAsSelector error: {err}")
        )
    return errors


def validate_resourcedistribution(
    obj: Mapping[str, Any], old: Mapping[str, Any] | None = None, *, dry_run_error: str | None = None
) -> list[FieldError]:
    """The field errors of ``obj`` (``old`` on UPDATE); ``dry_run_error`` is the API server's
    error for a dry-run create of ``spec.resource`` (``None``: accepted or not tried)."""
    errors = _resource_errors(obj, old)
    if not errors and dry_run_error is not None:
        errors.append(
            internal_error(
                "spec.resource", f"failed to dry-run to validate spec.resource, error: {dry_run_error}"
            )
        )
    if not _resource(obj):
        return errors  # upstream returns before the targets when the resource does not decode
    return [*errors, *_target_errors(mapping(mapping(obj.get("spec")).get("targets")))]
