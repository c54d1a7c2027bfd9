"""SidecarSet admission: validation (pure; OpenKruise v1.8 ``pkg/webhook/sidecarset``).

Defaults are in :mod:`.sidecarset_defaults`. Messages and paths are upstream's (Appendix B), in
its order: the name (``^[a-zA-Z0-9\\-]+$``, at most 63), native-sidecar init containers need
``NotUpdate``, the selectors, namespace vs namespaceSelector, ``injectionStrategy.revision`` (at
path ``revision``, as upstream), the update strategy (only for RollingUpdate), containers (inject
and share policies, transferEnv field refs; the pod-level checks are Kubernetes' own, passed in
as ``container_errors`` from a server-side dry run), ``patchPodMetadata`` (whitelist,
duplicates); on UPDATE no container may change its upgrade type or appear anew; then, only if all
that passed, conflicts with the other SidecarSets whose namespaces and selectors overlap
(:mod:`.sidecarset_conflicts`).

Deviation: upstream's namespace-overlap check of another SidecarSet with a ``namespace`` against
this one's ``namespaceSelector`` tests the other's (unset) selector, so it never finds that
overlap; here this one's selector is tested, as the code means to.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kruise.workloads.admission.cloneset_strategy import priority_strategy_error, scatter_strategy_error
from kruise.workloads.admission.fielderrors import (
    FieldError,
    GoSyntax,
    go_int_or_string,
    go_label_selector,
    invalid,
    not_supported,
    required,
)
from kruise.workloads.admission.metavalidation import (
    LabelSelectorError,
    is_qualified_name,
    max_len_error,
    regex_error,
    selector_requirements,
    validate_annotations,
    validate_label_selector,
    validate_object_meta,
)
from kruise.workloads.admission.sidecarset_conflicts import conflict_errors, is_selector_overlapping
from kruise.workloads.selector import SelectorError, selector_matches

__all__ = [
    "NAME_MAX_LENGTH",
    "PatchWhitelist",
    "SidecarSetContext",
    "is_selector_overlapping",
    "sidecarset_name_errors",
    "validate_sidecarset",
]

JSON = dict[str, Any]
NAME_MAX_LENGTH = 63
_NAME_FMT = r"^[a-zA-Z0-9\-]+$"
_NAME_RE = re.compile(_NAME_FMT)
_NAME_MSG = "sidecarset name must consist of alphanumeric characters or '-'"
_PERCENT_RE = re.compile(r"^[0-9]+%$")
_PERCENT_MSG = "a valid percent string must be a numeric string followed by an ending '%'"
_DOWNWARD_PATHS = ("metadata.annotations", "metadata.labels", "metadata.name")
_SUBSCRIPT = re.compile(r"^(.*)\['(.*)'\]$")


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


# --- context the checks read -------------------------------------------------------------------


@dataclass(frozen=True)
class PatchWhitelist:
    """``kruise-configuration`` key ``SidecarSet_PatchPodMetadata_WhiteList``: rules of
    ``{selector (over SidecarSet labels), allowedAnnotationKeyExprs (regexes, unanchored)}``;
    ``None`` rules: the ConfigMap or key is absent."""

    rules: Sequence[Mapping[str, Any]] | None = None
    defaults_allowed: bool = False  # gate SidecarSetPatchPodMetadataDefaultsAllowed


@dataclass(frozen=True)
class SidecarSetContext:
    """What validation reads besides the object.

    ``others``: every SidecarSet in the cluster; ``namespace_labels(ns)``: a namespace's labels
    (``None`` if it does not exist); ``revision_error(obj)``: ``None`` when the revision
    ``injectionStrategy.revision`` names exists, else the lookup's error text;
    ``container_errors``: Kubernetes' verdict on a pod made of the containers and volumes.
    """

    others: Sequence[Mapping[str, Any]] = ()
    namespace_labels: Callable[[str], Mapping[str, str] | None] = lambda _: None
    revision_error: Callable[[Mapping[str, Any]], str | None] = lambda _: None
    container_errors: Sequence[FieldError] = ()
    whitelist: PatchWhitelist = field(default_factory=PatchWhitelist)


# --- checks ------------------------------------------------------------------------------------


def sidecarset_name_errors(name: str, _prefix: bool = False) -> list[str]:
    """``validateSidecarSetName``: alphanumerics and ``-``, at most 63 characters."""
    errs = []
    if not _NAME_RE.match(name):
        errs.append(regex_error(_NAME_MSG, _NAME_FMT, "example-com"))
    if len(name) > NAME_MAX_LENGTH:
        errs.append(max_len_error(NAME_MAX_LENGTH))
    return errs


def _selector_errors(selector: Mapping[str, Any], path: str) -> list[FieldError]:
    """``validateSelector``: valid, and not empty."""
    errs = validate_label_selector(selector, path)
    if not _mapping(selector.get("matchLabels")) and not _list(selector.get("matchExpressions")):
        errs.append(invalid(path, go_label_selector(selector), "empty selector is not valid for sidecarset."))
    try:
        selector_requirements(selector)
    except LabelSelectorError:
        errs.append(invalid(f"{path}.selector", go_label_selector(selector), ""))
    return errs


def _positive_int_or_percent(value: Any, path: str) -> list[FieldError]:
    """``ValidatePositiveIntOrPercent``."""
    if isinstance(value, str):
        if _PERCENT_RE.match(value):
            return []
        return [invalid(path, go_int_or_string(value), regex_error(_PERCENT_MSG, "[0-9]+%", "1%", "93%"))]
    if isinstance(value, int) and not isinstance(value, bool) and value < 0:
        return [invalid(path, value, "must be greater than or equal to 0")]
    return []


def _partition_is_set(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and value != 0)


def _strategy_errors(strategy: Mapping[str, Any]) -> list[FieldError]:
    if strategy.get("type") != "RollingUpdate":
        return []
    path = "spec.updateStrategy"
    errs: list[FieldError] = []
    if _partition_is_set(strategy.get("partition")) and strategy.get("selector") is not None:
        errs.append(
            invalid(
                "updateStrategy",
                GoSyntax(_go_struct(strategy)),
                "Partition and Selector cannot be used together",
            )
        )
    if strategy.get("selector") is not None:
        errs.extend(_selector_errors(_mapping(strategy.get("selector")), f"{path}.selector"))
    for key in ("partition", "maxUnavailable"):
        if strategy.get(key) is not None:
            errs.extend(_positive_int_or_percent(strategy[key], f"{path}.{key}"))
    message = priority_strategy_error(strategy.get("priorityStrategy"))
    if message:
        errs.append(required(f"{path}.priorityStrategy", message))
    message = scatter_strategy_error(strategy.get("scatterStrategy"))
    if message:
        errs.append(required(f"{path}.scatterStrategy", message))
    return errs


def _go_struct(value: Mapping[str, Any]) -> str:
    """An approximation of Go's ``%++v`` of the strategy (upstream prints the struct)."""
    return "&{" + " ".join(f"{k[:1].upper()}{k[1:]}:{value[k]}" for k in value) + "}"


def _field_ref_errors(ref: Mapping[str, Any], path: str) -> list[FieldError]:
    """``validateObjectFieldSelector`` for ``transferEnv[].sourceContainerNameFrom.fieldRef``."""
    if not ref.get("apiVersion"):
        return [required(f"{path}.apiVersion")]
    field_path = str(ref.get("fieldPath") or "")
    if not field_path:
        return [required(f"{path}.fieldPath")]
    if ref.get("apiVersion") != "v1":
        return [
            invalid(
                f"{path}.fieldPath",
                field_path,
                f"error converting fieldPath: unsupported pod version: {ref.get('apiVersion')}",
            )
        ]
    found = _SUBSCRIPT.match(field_path)
    if found is None:
        if field_path in _DOWNWARD_PATHS:
            return [
                invalid(
                    f"{path}.fieldPath",
                    field_path,
                    f"error converting fieldPath: field label not supported: {field_path}",
                )
            ]
        return [not_supported(f"{path}.fieldPath", field_path, sorted(_DOWNWARD_PATHS))]
    base, subscript = found.groups()
    if base not in ("metadata.annotations", "metadata.labels"):
        return [
            invalid(
                f"{path}.fieldPath",
                field_path,
                f"error converting fieldPath: field path not supported: {base}",
            )
        ]
    key = subscript.lower() if base == "metadata.annotations" else subscript
    return [invalid(path, subscript, msg) for msg in is_qualified_name(key)]


def _container_errors(spec: Mapping[str, Any], context: SidecarSetContext) -> list[FieldError]:
    """``validateContainersForSidecarSet`` (the Kubernetes part comes from ``context``)."""
    errs: list[FieldError] = []
    for i, raw in enumerate(_list(spec.get("containers"))):
        container = _mapping(raw)
        policy = container.get("podInjectPolicy")
        if policy not in ("BeforeAppContainer", "AfterAppContainer"):
            errs.append(
                invalid(
                    "spec.container.podInjectPolicy",
                    str(policy or ""),
                    "unsupported pod inject policy",
                )
            )
        share = _mapping(container.get("shareVolumePolicy"))
        if share.get("type") not in ("enabled", "disabled"):
            shown = GoSyntax(f'v1alpha1.ShareVolumePolicy{{Type:"{share.get("type") or ""}"}}')
            errs.append(invalid("spec.container.shareVolumePolicy", shown, "unsupported share volume policy"))
        for transfer in _list(container.get("transferEnv")):
            ref = _mapping(_mapping(_mapping(transfer).get("sourceContainerNameFrom")).get("fieldRef"))
            if ref:
                errs.extend(_field_ref_errors(ref, f"spec[{i}].transferEnv.fieldRef"))
    errs.extend(context.container_errors)
    return errs


def _whitelist_error(obj: Mapping[str, Any], whitelist: PatchWhitelist) -> str | None:
    """``ValidateSidecarSetPatchMetadataWhitelist``: the first problem, or ``None``."""
    patches = _list(_mapping(obj.get("spec")).get("patchPodMetadata"))
    if not patches:
        return None
    if whitelist.rules is None:
        return None if whitelist.defaults_allowed else "SidecarSet patch metadata whitelist not found"
    own_labels = _mapping(_mapping(obj.get("metadata")).get("labels"))
    patterns: list[re.Pattern[str]] = []
    for rule in whitelist.rules:
        selector = _mapping(rule).get("selector")
        if selector is not None:
            try:
                if not selector_matches(_mapping(selector), own_labels):
                    continue
            except SelectorError as err:
                return str(err)
        try:
            patterns.extend(
                re.compile(str(e)) for e in _list(_mapping(rule).get("allowedAnnotationKeyExprs"))
            )
        except re.error as err:
            return str(err)
    if not patterns:
        return None if whitelist.defaults_allowed else "sidecarSet patch metadata annotation is not allowed"
    for patch in patches:
        for key in _mapping(_mapping(patch).get("annotations")):
            if not any(p.search(key) for p in patterns):
                return f"sidecarSet patch metadata annotation({key}) is not allowed"
    return None


def _patch_metadata_errors(obj: Mapping[str, Any], whitelist: PatchWhitelist) -> list[FieldError]:
    path = "spec.patchPodMetadata"
    errs: list[FieldError] = []
    message = _whitelist_error(obj, whitelist)
    if message:
        errs.append(required(path, message))
    seen: set[str] = set()
    for patch in map(_mapping, _list(_mapping(obj.get("spec")).get("patchPodMetadata"))):
        annotations = _mapping(patch.get("annotations"))
        if not annotations:
            errs.append(required(path, "no annotations defined for SidecarSet"))
        else:
            errs.extend(validate_annotations(annotations, "patchPodMetadata.annotations"))
        if not patch.get("patchPolicy"):
            errs.append(required(path, "no patchPolicy defined for patchPodMetadata"))
        for key in annotations:
            if key in seen:
                errs.append(required(path, f"patch annotation[{key}] already exist"))
            seen.add(key)
    return errs


def _revision_errors(obj: Mapping[str, Any], context: SidecarSetContext) -> list[FieldError]:
    info = _mapping(_mapping(_mapping(obj.get("spec")).get("injectionStrategy")).get("revision"))
    if not _mapping(_mapping(obj.get("spec")).get("injectionStrategy")).get("revision"):
        return []
    errs: list[FieldError] = []
    if info.get("revisionName") is None and info.get("customVersion") is None:
        errs.append(
            invalid(
                "revision",
                GoSyntax(_go_struct(info)),
                "revisionName and customVersion cannot be empty simultaneously",
            )
        )
    else:
        error = context.revision_error(obj)
        if error is not None:
            errs.append(invalid("revision", None, f"Cannot find specific ControllerRevision, err: {error}"))
    policy = info.get("policy")
    if policy not in (None, "", "Always", "Partial"):
        errs.append(
            invalid(
                "revision.policy",
                GoSyntax(_go_struct(info)),
                f"Invalid policy {policy}, supported: [Always, Partial]",
            )
        )
    return errs


def _spec_errors(obj: Mapping[str, Any], context: SidecarSetContext) -> list[FieldError]:
    """``validateSidecarSetSpec``."""
    spec = _mapping(obj.get("spec"))
    strategy = _mapping(spec.get("updateStrategy"))
    errs: list[FieldError] = []
    for container in map(_mapping, _list(spec.get("initContainers"))):
        if container.get("restartPolicy") == "Always" and strategy.get("type") == "RollingUpdate":
            errs.append(
                required(
                    "spec.updateStrategy", "The initContainer in-place upgrade is not currently supported."
                )
            )
    if spec.get("selector") is None:
        errs.append(required("spec.selector", "no selector defined for SidecarSet"))
    else:
        errs.extend(_selector_errors(_mapping(spec.get("selector")), "spec.selector"))
    if spec.get("namespace") and spec.get("namespaceSelector") is not None:
        errs.append(
            required(
                "spec.namespace, namespaceSelector", "namespace and namespaceSelector are mutually exclusive"
            )
        )
    elif spec.get("namespaceSelector") is not None:
        errs.extend(_selector_errors(_mapping(spec.get("namespaceSelector")), "spec.namespaceSelector"))
    errs.extend(_revision_errors(obj, context))
    errs.extend(_strategy_errors(strategy))
    if not _list(spec.get("initContainers")) and not _list(spec.get("containers")):
        errs.append(required("spec", "no initContainer or container defined for SidecarSet"))
    else:
        errs.extend(_container_errors(spec, context))
    errs.extend(_patch_metadata_errors(obj, context.whitelist))
    return errs


def _upgrade_type_errors(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    """``validateSidecarContainerConflict``: no new container, no changed upgrade type."""
    before = {
        _mapping(c).get("name"): _mapping(_mapping(c).get("upgradeStrategy")).get("upgradeType")
        for c in _list(_mapping(old.get("spec")).get("containers"))
    }
    errs: list[FieldError] = []
    for container in map(_mapping, _list(_mapping(new.get("spec")).get("containers"))):
        name = str(container.get("name") or "")
        if name not in before:
            errs.append(invalid("spec.containers.name", name, f"container {name} is not found"))
            continue
        upgrade = _mapping(container.get("upgradeStrategy")).get("upgradeType")
        if before[name] and upgrade != before[name]:
            errs.append(
                invalid(
                    "spec.containers.upgradeStrategy.upgradeType",
                    name,
                    f"container {name} upgradeType is immutable",
                )
            )
    return errs


def validate_sidecarset(
    obj: Mapping[str, Any], old: Mapping[str, Any] | None, context: SidecarSetContext
) -> list[FieldError]:
    """Every error of the (defaulted) SidecarSet ``obj`` (``old`` on UPDATE); see the module docstring."""
    errs = validate_object_meta(
        obj.get("metadata"), requires_namespace=False, name_validator=sidecarset_name_errors
    )
    errs.extend(_spec_errors(obj, context))
    if old is not None:
        errs.extend(_upgrade_type_errors(obj, old))
    if errs:
        return errs
    return conflict_errors(obj, context.others, context.namespace_labels)
