"""EphemeralJob admission: validation (validating webhook; upstream has no defaulting one).

Pure functions over EphemeralJob dicts, mirroring OpenKruise ``pkg/webhook/ephemeraljob/validating``
(v1.8): ``validateEphemeralContainers`` over ``spec.template.ephemeralContainers`` as written (no
defaults are applied first, so ``imagePullPolicy`` and ``terminationMessagePolicy`` must be
given), paths rooted at ``ephemeralContainers`` as upstream's. Per container, in upstream's order:

1. ``name`` required and an RFC 1123 label; ``image`` required; ``terminationMessagePolicy`` File
   or FallbackToLogsOnError; ``imagePullPolicy`` Always, IfNotPresent or Never;
2. ``image`` without leading or trailing whitespace;
3. ``name`` unique in the list;
4. fields an ephemeral container may not set (ports, resources, resizePolicy, restartPolicy, the
   probes, lifecycle): "cannot be set for an Ephemeral Container";
5. ``volumeMounts[].subPath`` and ``subPathExpr``: the same message.

What ``validateContainerCommon`` further checks inside ``env``, ``envFrom``, ``securityContext``
and ``ports`` (ports are refused by step 4 anyway) is left to the API server, which runs the same
rules on the pod's ``ephemeralcontainers`` subresource when the controller injects them (a refusal
is then a ``CreateFailed`` event on the job).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kruise.workloads.admission.fielderrors import (
    FieldError,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
)
from kruise.workloads.admission.metavalidation import is_dns1123_label

__all__ = ["FORBIDDEN_DETAIL", "validate_ephemeraljob"]

FORBIDDEN_DETAIL = "cannot be set for an Ephemeral Container"
_ROOT = "ephemeralContainers"
_TERMINATION_POLICIES = ("File", "FallbackToLogsOnError")
_PULL_POLICIES = ("Always", "IfNotPresent", "Never")
_DISALLOWED = (
    "ports",
    "resources",
    "resizePolicy",
    "restartPolicy",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
)
"""``EphemeralContainerCommon`` fields outside upstream's allow-list, in the struct's order."""


def _is_set(key: str, value: Any) -> bool:
    """Go's "not the zero value" for these fields: pointers and slices are set by any non-null
    value (``[]`` included); ``resources`` is a struct, set when one of its fields is."""
    if value is None:
        return False
    if key == "resources" and isinstance(value, Mapping):
        return any(v is not None for v in value.values())
    return True


def _enum_errors(path: str, value: Any, allowed: Sequence[str]) -> list[FieldError]:
    if value in (None, ""):
        return [required(path)]
    if value not in allowed:
        return [not_supported(path, value, allowed)]
    return []


def _container_errors(i: int, container: Mapping[str, Any], seen: set[str]) -> list[FieldError]:
    path = f"{_ROOT}[{i}]"
    errs: list[FieldError] = []
    name = str(container.get("name") or "")
    if not name:
        errs.append(required(f"{path}.name"))
    else:
        errs.extend(invalid(f"{path}.name", name, m) for m in is_dns1123_label(name))
    image = str(container.get("image") or "")
    if not image:
        errs.append(required(f"{path}.image"))
    errs.extend(
        _enum_errors(
            f"{path}.terminationMessagePolicy",
            container.get("terminationMessagePolicy"),
            _TERMINATION_POLICIES,
        )
    )
    errs.extend(_enum_errors(f"{path}.imagePullPolicy", container.get("imagePullPolicy"), _PULL_POLICIES))
    if image != image.strip():
        errs.append(invalid(f"{path}.image", image, "must not have leading or trailing whitespace"))
    if name in seen:
        errs.append(duplicate(f"{path}.name", name))
    seen.add(name)
    errs.extend(
        forbidden(f"{path}.{key}", FORBIDDEN_DETAIL)
        for key in _DISALLOWED
        if _is_set(key, container.get(key))
    )
    for j, mount in enumerate(container.get("volumeMounts") or ()):
        if not isinstance(mount, Mapping):
            continue
        for key in ("subPath", "subPathExpr"):
            if mount.get(key):
                errs.append(forbidden(f"{path}.volumeMounts[{j}].{key}", FORBIDDEN_DETAIL))
    return errs


def validate_ephemeraljob(obj: Mapping[str, Any]) -> list[FieldError]:
    """Validating webhook on CREATE and UPDATE (``validate``); ``[]`` means admitted. An entry that
    is not an object is refused as an invalid value (upstream fails to decode it)."""
    spec = obj.get("spec")
    template = spec.get("template") if isinstance(spec, Mapping) else None
    containers = template.get("ephemeralContainers") if isinstance(template, Mapping) else None
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, container in enumerate(containers if isinstance(containers, list) else ()):
        if not isinstance(container, Mapping):
            errs.append(invalid(f"{_ROOT}[{i}]", container, "must be an object"))
            continue
        errs.extend(_container_errors(i, container, seen))
    return errs
