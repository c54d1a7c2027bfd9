"""The WorkloadSpread validating webhook's rules (pure), after upstream's
``pkg/webhook/workloadspread/validating`` (v1.8); messages as Appendix B of the reference.

Field errors (answered as one aggregate, HTTP 400, nothing stored):

1. ``spec.targetRef``: set (``no targetRef defined in WorkloadSpread``), apiVersion, kind and
   name non-empty (``empty TargetReference is not valid for WorkloadSpread.``), and a supported
   group for its kind: CloneSet ``apps.kruise.io``; Deployment, ReplicaSet ``apps``; Job
   ``batch``; StatefulSet ``apps`` or ``apps.kruise.io``; any other kind must have the group
   and kind of a workload of the custom white list (:mod:`.whitelist`), else ``TargetReference's
   GroupKind is not permitted.`` (a white list that could not be read: an internal error);
2. ``spec.subsets``: at least one; names unique; ``maxReplicas`` all of one type (int or
   percent), Int for a StatefulSet, non-negative, percent sum at most 100% and exactly 100% when
   the last one is capped (each of these stops the subset checks, as upstream);
3. ``spec.scheduleStrategy``: type ``""``, ``Fixed`` or ``Adaptive``; with ``adaptive`` set the
   type must be ``Adaptive``, the last subset (of several) uncapped, and
   ``rescheduleCriticalSeconds`` within ``[0, (300 - 5) / (len(subsets) - 1)]``;
4. ``spec.targetFilter``: its selector must convert (``LabelSelectorAsSelector``; detail Go's
   error text; the value shown is the selector, not upstream's printed struct pointer);
5. on UPDATE the target's group, kind and name unchanged;
6. no other WorkloadSpread of the namespace on the same group, kind and name.

Node selector terms, tolerations and ``patch`` are checked by the CRD schema only (upstream also
runs the core validators on them; not reproduced).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from kruise.workloads.admission.fielderrors import (
    FieldError,
    go_int_or_string,
    go_label_selector,
    internal_error,
    invalid,
    required,
)
from kruise.workloads.admission.metavalidation import LabelSelectorError, selector_requirements
from kruise.workloads.api.workloadspread import ADAPTIVE, FIXED, TargetView, WorkloadSpreadView, WsSpecView
from kruise.workloads.intorpercent import IntOrPercentError, scaled_value
from kruise.workloads.podunavailablebudget.validation import go_target_reference
from kruise.workloads.workloadspread.whitelist import CustomWorkload, group_of, permits

__all__ = [
    "BUILTIN_GROUP_KINDS",
    "MAX_SCHEDULED_FAILED_SECONDS",
    "CustomList",
    "is_builtin_kind",
    "same_target",
    "validate_ws",
]

CustomList = Sequence[CustomWorkload] | str
"""The custom white list, or the text of the error that kept it from being read."""
MAX_SCHEDULED_FAILED_SECONDS = 300
"""Upstream's ``MaxScheduledFailedDuration``: bounds ``rescheduleCriticalSeconds``."""

_GROUPS: dict[str, tuple[str, ...]] = {
    "CloneSet": ("apps.kruise.io",),
    "Deployment": ("apps",),
    "ReplicaSet": ("apps",),
    "Job": ("batch",),
    "StatefulSet": ("apps", "apps.kruise.io"),
}


def same_target(a: TargetView, b: TargetView) -> bool:
    """Same API group, kind and name (versions may differ)."""
    return (group_of(a.get("apiVersion", "")), a.get("kind"), a.get("name")) == (
        group_of(b.get("apiVersion", "")),
        b.get("kind"),
        b.get("name"),
    )


BUILTIN_GROUP_KINDS = frozenset((group, kind) for kind, groups in _GROUPS.items() for group in groups)
"""(group, kind) of the workloads WorkloadSpread targets without the custom white list."""


def is_builtin_kind(kind: str) -> bool:
    """A kind WorkloadSpread targets without the custom white list."""
    return kind in _GROUPS


def _target_errors(target: TargetView | None, custom: CustomList) -> list[FieldError]:
    path = "spec.targetRef"
    if target is None:
        return [required(path, "no targetRef defined in WorkloadSpread")]
    value = go_target_reference(target)
    if not (target.get("apiVersion") and target.get("kind") and target.get("name")):
        return [invalid(path, value, "empty TargetReference is not valid for WorkloadSpread.")]
    kind = str(target.get("kind"))
    groups = _GROUPS.get(kind)
    if groups is None:
        if isinstance(custom, str):
            return [internal_error(path, custom)]
        if permits(custom, str(target.get("apiVersion")), kind):
            return []
        return [invalid(path, value, "TargetReference's GroupKind is not permitted.")]
    if group_of(str(target.get("apiVersion"))) not in groups:
        return [invalid(path, value, f"TargetReference is not valid for {kind}.")]
    return []


def _subset_errors(spec: WsSpecView) -> list[FieldError]:
    subsets = spec.get("subsets") or []
    if not subsets:
        return [required("spec.subsets", "subsets number must >= 1 in WorkloadSpread")]
    errs: list[FieldError] = []
    names: set[str] = set()
    first_type: type | None = None
    percent_sum = 0
    statefulset = (spec.get("targetRef") or {}).get("kind") == "StatefulSet"
    for i, subset in enumerate(subsets):
        path = f"spec.subsets[{i}]"
        name = subset.get("name", "")
        if not name:
            errs.append(invalid(f"{path}.name", name, ""))
        elif name in names:
            errs.append(invalid(f"{path}.name", name, f"duplicated subset name {name}"))
        names.add(name)
        cap: Any = subset.get("maxReplicas")
        if cap is None:
            continue
        shown = go_int_or_string(cap)
        kind = str if isinstance(cap, str) else int
        if first_type is None:
            first_type = kind
        elif kind is not first_type:
            return [
                *errs,
                invalid(f"{path}.maxReplicas", shown, "the maxReplicas type of all subsets must be the same"),
            ]
        if statefulset and kind is str:
            return [
                *errs,
                invalid(f"{path}.maxReplicas", shown, "the maxReplicas type must be Int for StatefulSet"),
            ]
        try:
            value = scaled_value(cap, 100, round_up=True)
        except IntOrPercentError:
            value = -1
        if value < 0:
            return [*errs, invalid(f"{path}.maxReplicas", shown, "maxReplicas is not valid for subset")]
        if kind is str:
            percent_sum += value
            if percent_sum > 100:
                return [
                    *errs,
                    invalid(
                        f"{path}.maxReplicas",
                        shown,
                        "the sum of all subset's maxReplicas exceeds 100% is no permitted",
                    ),
                ]
    if first_type is str and percent_sum < 100 and subsets[-1].get("maxReplicas") is not None:
        errs.append(
            invalid(
                "spec.subsets[0].maxReplicas",
                go_int_or_string(subsets[0].get("maxReplicas")),
                "maxReplicas sum of all subsets must equal 100% when type is specified as percent",
            )
        )
    return errs


def _strategy_errors(spec: WsSpecView) -> list[FieldError]:
    strategy = spec.get("scheduleStrategy") or {}
    subsets = spec.get("subsets") or []
    errs: list[FieldError] = []
    kind = strategy.get("type", "")
    path = "spec.scheduleStrategy"
    if kind not in ("", FIXED, ADAPTIVE):
        errs.append(invalid(f"{path}.type", kind, "ScheduleStrategy's type is not valid"))
    adaptive = strategy.get("adaptive")
    if adaptive is None:
        return errs
    seconds = adaptive.get("rescheduleCriticalSeconds")
    if kind != ADAPTIVE:
        errs.append(
            invalid(
                f"{path}.type",
                seconds,
                "the scheduleStrategy's type must be adaptive when using adaptive scheduleStrategy",
            )
        )
    if len(subsets) > 1 and subsets[-1].get("maxReplicas") is not None:
        errs.append(
            invalid(
                f"{path}.adaptive",
                seconds,
                "the last subset's maxReplicas must be not specified when using adaptive scheduleStrategy",
            )
        )
    allowed = 2**31 - 1
    if len(subsets) > 1:
        allowed = (MAX_SCHEDULED_FAILED_SECONDS - 5) // (len(subsets) - 1)
    if seconds is not None and (seconds < 0 or seconds > allowed):
        errs.append(
            invalid(
                f"{path}.adaptive.rescheduleCriticalSeconds",
                seconds,
                f"rescheduleCriticalSeconds < 0 or rescheduleCriticalSeconds > {allowed} is not permitted",
            )
        )
    return errs


def _filter_errors(spec: WsSpecView) -> list[FieldError]:
    target_filter = spec.get("targetFilter")
    if target_filter is None:
        return []
    selector = target_filter.get("selector")
    try:
        selector_requirements(selector)
    except LabelSelectorError as err:
        return [invalid("spec.targetFilter", go_label_selector(selector or {}), str(err))]
    return []


def validate_ws(
    ws: WorkloadSpreadView,
    old: WorkloadSpreadView | None,
    others: Iterable[WorkloadSpreadView],
    custom: CustomList = (),
) -> list[FieldError]:
    """The field errors of a WorkloadSpread being created (``old`` ``None``) or updated, given the
    other WorkloadSpreads of its namespace and the custom white list ``custom`` (the read error's
    text when it could not be read; see the module doc for the order and messages)."""
    spec: WsSpecView = ws.get("spec") or {}
    target = spec.get("targetRef")
    errs = _target_errors(target, custom)
    errs += _subset_errors(spec)
    errs += _strategy_errors(spec)
    errs += _filter_errors(spec)
    if old is not None:
        old_target = (old.get("spec") or {}).get("targetRef")
        if target is not None and old_target is not None and not same_target(target, old_target):
            errs.append(
                invalid(
                    "spec.targetRef",
                    go_target_reference(target),
                    "change TargetReference is not permitted for WorkloadSpread",
                )
            )
    name = (ws.get("metadata") or {}).get("name")
    if target is not None:
        for other in others:
            other_target = (other.get("spec") or {}).get("targetRef")
            if (other.get("metadata") or {}).get("name") == name or other_target is None:
                continue
            if same_target(target, other_target):
                other_name = (other.get("metadata") or {}).get("name")
                errs.append(
                    invalid(
                        "spec.targetRef",
                        go_target_reference(target),
                        f"ws.spec.targetRef is in conflict with other WorkloadSpread {other_name}",
                    )
                )
                break
    return errs
