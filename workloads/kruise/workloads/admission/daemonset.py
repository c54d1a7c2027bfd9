"""Advanced DaemonSet admission: defaulting (mutating webhook) and validation (validating webhook).

Pure functions over DaemonSet dicts, mirroring OpenKruise ``pkg/webhook/daemonset`` and
``SetDefaultsDaemonSet`` (v1.8; ``partition`` an int-or-percent as on master), messages verbatim.

Defaults: ``burstReplicas: 250``, ``updateStrategy.type: RollingUpdate``, an empty
``rollingUpdate`` block, the deprecated ``Surging`` rewritten as ``Standard`` with ``maxSurge: 1``
and ``maxUnavailable: 0`` unless set, ``rollingUpdateType: Standard``, ``maxUnavailable: 1`` and
``maxSurge: 0`` when neither is set, ``revisionHistoryLimit: 10``. The pod template is *not*
defaulted (upstream's DaemonSet webhook leaves it as written); when anything changed, the template
gets what Go's re-marshalling adds (``metadata.creationTimestamp: null``, containers'
``resources: {}``), so the stored object looks like upstream's.

Validation (on the defaulted object): metadata; the selector valid, non-empty ("empty selector is
invalid for daemonset") and matching the template labels; the pod template as the API server
judges it (a dry-run Pod, see :mod:`.podtemplate`; upstream runs ``ValidatePodTemplateSpec``);
``restartPolicy`` Always (an empty one counts as Always, as upstream defaults the template it
checks); no ``activeDeadlineSeconds``; ``minReadySeconds`` and ``revisionHistoryLimit`` not
negative; no ``lifecycle.inPlaceUpdate``; the update strategy:

- ``type`` RollingUpdate (with a ``rollingUpdate`` block) or OnDelete;
- a non-zero maxUnavailable / maxSurge must be a non-negative int or ``<n>%`` of at most 100%;
  a value that reads as 0 (``0``, ``"0%"``, or a string that is neither a percentage nor a
  number, as Go's ``IntValue`` reads it) counts as unset;
- "may not be set when maxUnavailable is non-zero" (maxSurge), "cannot be 0 when maxSurge is 0"
  (maxUnavailable), "must be 0 for InPlaceIfPossible type" (maxSurge);
- ``rollingUpdateType`` Standard, Surging or InPlaceIfPossible; ``partition`` a non-negative int
  or a percentage of at most 100%. Both are reported under ``rollingUpdate.rollingUpdate.<field>``,
  the path upstream builds.

On UPDATE only ``burstReplicas``, ``template``, ``lifecycle``, ``updateStrategy``,
``minReadySeconds`` and ``revisionHistoryLimit`` may change.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from kruise.core.api.pod import PodTemplateSpec
from kruise.workloads.admission.fielderrors import (
    FieldError,
    GoSyntax,
    forbidden,
    go_int_or_string,
    go_label_selector,
    invalid,
    not_supported,
    required,
)
from kruise.workloads.admission.intstr import percent_value, validate_positive_int_or_percent
from kruise.workloads.admission.jsondiff import semantic_view
from kruise.workloads.admission.metavalidation import (
    IS_NEGATIVE_ERROR_MSG,
    validate_label_selector,
    validate_object_meta,
)
from kruise.workloads.admission.pod_defaults import add_marshal_artifacts, default_pod_template
from kruise.workloads.admission.podtemplate import validate_template
from kruise.workloads.api.daemonset import DEFAULT_BURST_REPLICAS, DaemonSet

__all__ = [
    "MUTABLE_SPEC_FIELDS",
    "SPEC_UPDATE_FORBIDDEN_MESSAGE",
    "default_daemonset",
    "is_well_typed",
    "validate_daemonset_create",
    "validate_daemonset_update",
]

SPEC_UPDATE_FORBIDDEN_MESSAGE = (
    "updates to daemonset spec for fields other than 'BurstReplicas', 'template', 'lifecycle',  "
    "'updateStrategy', 'minReadySeconds', and 'revisionHistoryLimit' are forbidden"
)
"""Upstream's text, two spaces after ``'lifecycle',`` included."""
MUTABLE_SPEC_FIELDS = frozenset(
    {"burstReplicas", "template", "lifecycle", "updateStrategy", "minReadySeconds", "revisionHistoryLimit"}
)
_ATOI = re.compile(r"^[+-]?[0-9]+$")
_ROLLING_TYPES = ("Standard", "Surging", "InPlaceIfPossible")


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _spec(obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return _mapping(_mapping(obj).get("spec"))


def is_well_typed(obj: Mapping[str, Any]) -> bool:
    """Whether every field has its schema's JSON type (the template too); a wrongly typed object
    is left to the CRD schema, which refuses it naming the field (see the CloneSet's rule)."""
    try:
        PodTemplateSpec.model_validate(DaemonSet.from_dict(obj).spec.template)
    except ValidationError:
        return False
    return True


def default_daemonset(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The DaemonSet as the mutating webhook leaves it (``SetDefaultsDaemonSet``); input untouched.

    Unchanged input comes back as an equal copy (upstream then answers "allowed" without a patch).
    """
    out = copy.deepcopy(dict(obj))
    spec = dict(_spec(out))
    out["spec"] = spec
    if spec.get("burstReplicas") is None:
        spec["burstReplicas"] = DEFAULT_BURST_REPLICAS
    strategy = dict(_mapping(spec.get("updateStrategy")))
    spec["updateStrategy"] = strategy
    if strategy.get("type") in (None, ""):
        strategy["type"] = "RollingUpdate"
    if strategy["type"] == "RollingUpdate":
        rolling = dict(_mapping(strategy.get("rollingUpdate")))
        strategy["rollingUpdate"] = rolling
        if rolling.get("rollingUpdateType") == "Surging":
            if rolling.get("maxSurge") is None:
                rolling["maxSurge"] = 1
            if rolling.get("maxUnavailable") is None:
                rolling["maxUnavailable"] = 0
        if rolling.get("rollingUpdateType") in (None, "", "Surging"):
            rolling["rollingUpdateType"] = "Standard"
        if rolling.get("maxUnavailable") is None and rolling.get("maxSurge") is None:
            rolling["maxUnavailable"] = 1
            rolling["maxSurge"] = 0
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    if out == obj:
        return out
    spec["template"] = add_marshal_artifacts(_mapping(spec.get("template")))
    return out


def _int_or_percent_value(value: Any) -> int:
    """``getIntOrPercentValue``: a percentage's number, an int, or ``Atoi`` of any other string
    (0 when it does not parse, as ``IntOrString.IntValue``)."""
    percent = percent_value(value)
    if percent is not None:
        return percent
    if isinstance(value, str):
        return int(value) if _ATOI.match(value) else 0
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _validate_rolling_update(rolling: Mapping[str, Any], path: str) -> list[FieldError]:
    """``validateRollingUpdateDaemonSet``."""
    errs: list[FieldError] = []
    unavailable, surge = rolling.get("maxUnavailable"), rolling.get("maxSurge")
    has_unavailable = unavailable is not None and _int_or_percent_value(unavailable) != 0
    has_surge = surge is not None and _int_or_percent_value(surge) != 0
    if has_unavailable:
        errs += validate_positive_int_or_percent(unavailable, f"{path}.maxUnavailable")
    if has_surge:
        errs += validate_positive_int_or_percent(surge, f"{path}.maxSurge")
    if has_unavailable and has_surge:
        detail = "may not be set when maxUnavailable is non-zero"
        errs.append(invalid(f"{path}.maxSurge", go_int_or_string(surge), detail))
    elif not has_unavailable and not has_surge:
        errs.append(required(f"{path}.maxUnavailable", "cannot be 0 when maxSurge is 0"))
    kind = rolling.get("rollingUpdateType") or ""
    if kind == "InPlaceIfPossible" and has_surge:
        errs.append(required(f"{path}.maxSurge", "must be 0 for InPlaceIfPossible type"))
    elif kind == "Surging" and has_unavailable:
        errs.append(required(f"{path}.maxUnavailable", "must be 0 for Surging type"))
    elif kind not in ("", *_ROLLING_TYPES):
        errs.append(not_supported(f"{path}.rollingUpdate.type", kind, _ROLLING_TYPES))
    partition = rolling.get("partition")
    if partition is not None:
        partition_path = f"{path}.rollingUpdate.partition"
        if isinstance(partition, str):
            errs += validate_positive_int_or_percent(partition, partition_path, max_100=False)
        elif isinstance(partition, int) and partition < 0:
            errs.append(invalid(partition_path, partition, IS_NEGATIVE_ERROR_MSG))
        percent = percent_value(partition)
        if percent is not None and percent > 100:
            shown = go_int_or_string(partition)
            errs.append(invalid(partition_path, shown, "must not be greater than 100%"))
    return errs


def _go_strategy(strategy: Mapping[str, Any]) -> GoSyntax:
    """``%#v`` of a ``DaemonSetUpdateStrategy`` (a set ``rollingUpdate`` pointer as JSON)."""
    rolling = strategy.get("rollingUpdate")
    shown = (
        "(*v1alpha1.RollingUpdateDaemonSet)(nil)" if rolling is None else json.dumps(rolling, sort_keys=True)
    )
    kind = json.dumps(str(strategy.get("type") or ""))
    return GoSyntax(f"v1alpha1.DaemonSetUpdateStrategy{{Type:{kind}, RollingUpdate:{shown}}}")


def _validate_update_strategy(strategy: Mapping[str, Any]) -> list[FieldError]:
    """``validateDaemonSetUpdateStrategy``."""
    path = "spec.updateStrategy"
    kind = strategy.get("type")
    if kind == "OnDelete":
        return []
    if kind == "RollingUpdate":
        rolling = strategy.get("rollingUpdate")
        if not isinstance(rolling, Mapping):
            return [required(f"{path}.rollingUpdate")]
        return _validate_rolling_update(rolling, f"{path}.rollingUpdate")
    return [not_supported(path, _go_strategy(strategy), ("RollingUpdate", "OnDelete"))]


def _non_negative(spec: Mapping[str, Any], key: str) -> list[FieldError]:
    value = spec.get(key)
    if isinstance(value, int) and not isinstance(value, bool) and value < 0:
        return [invalid(f"spec.{key}", value, IS_NEGATIVE_ERROR_MSG)]
    return []


def _validate_spec(spec: Mapping[str, Any], template_errors: Sequence[FieldError]) -> list[FieldError]:
    """``validateDaemonSetSpec``."""
    errs: list[FieldError] = []
    selector = spec.get("selector")
    if isinstance(selector, Mapping):
        errs += validate_label_selector(selector, "spec.selector")
        if not _mapping(selector.get("matchLabels")) and not selector.get("matchExpressions"):
            detail = "empty selector is invalid for daemonset"
            errs.append(invalid("spec.selector", go_label_selector(selector), detail))
    selecting = selector if isinstance(selector, Mapping) else None
    errs += validate_template(spec, selecting, "spec", template_errors)
    pod_spec = _mapping(default_pod_template(_mapping(spec.get("template"))).get("spec"))
    restart = str(pod_spec.get("restartPolicy") or "")
    if restart != "Always":
        errs.append(not_supported("spec.template.spec.restartPolicy", restart, ["Always"]))
    if pod_spec.get("activeDeadlineSeconds") is not None:
        detail = "activeDeadlineSeconds in DaemonSet is not Supported"
        errs.append(forbidden("spec.template.spec.activeDeadlineSeconds", detail))
    errs += _non_negative(spec, "minReadySeconds")
    errs += _validate_update_strategy(_mapping(spec.get("updateStrategy")))
    errs += _non_negative(spec, "revisionHistoryLimit")
    if _mapping(spec.get("lifecycle")).get("inPlaceUpdate") is not None:
        errs.append(forbidden("spec.lifecycle.inPlaceUpdate", "inPlaceUpdate hook has not supported yet"))
    return errs


def validate_daemonset_create(
    obj: Mapping[str, Any], *, template_errors: Sequence[FieldError] = ()
) -> list[FieldError]:
    """Validating webhook on CREATE (``validateDaemonSet``); ``[]`` means admitted.

    ``template_errors`` is the API server's verdict on a Pod made from the template
    (:func:`~kruise.workloads.admission.dryrun.template_verdict`).
    """
    errs = validate_object_meta(_mapping(obj.get("metadata")), requires_namespace=True)
    return errs + _validate_spec(_spec(obj), template_errors)


def validate_daemonset_update(
    obj: Mapping[str, Any], old: Mapping[str, Any], *, template_errors: Sequence[FieldError] = ()
) -> list[FieldError]:
    """Validating webhook on UPDATE (``validateDaemonSetUpdate``): ``spec: Forbidden: updates to
    daemonset spec for fields other than ...`` when an immutable field changed (the selector),
    then every create check. Metadata immutability is left to the API server."""
    errs: list[FieldError] = []
    new_rest = {k: v for k, v in _spec(obj).items() if k not in MUTABLE_SPEC_FIELDS}
    old_rest = {k: v for k, v in _spec(old).items() if k not in MUTABLE_SPEC_FIELDS}
    if semantic_view(new_rest) != semantic_view(old_rest):
        errs.append(forbidden("spec", SPEC_UPDATE_FORBIDDEN_MESSAGE))
    return errs + validate_daemonset_create(obj, template_errors=template_errors)
