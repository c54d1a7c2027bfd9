"""The PodUnavailableBudget validating webhook's rules (pure): upstream's
``pkg/webhook/podunavailablebudget/validating`` (v1.8), messages verbatim.

In order, each adding field errors (answered as one aggregate, HTTP 400, nothing stored):

1. annotations: ``kruise.io/pub-protect-operations`` must list only ``DELETE``, ``UPDATE``,
   ``EVICT`` (one error per bad entry) and ``pub.kruise.io/protect-total-replicas`` must parse as
   an int32 (``metadata: Internal error: annotation[<key>] is invalid``);
2. the spec: exactly one of ``selector``/``targetRef`` (a target needs apiVersion, kind and name;
   a selector must be valid and not empty), exactly one of ``maxUnavailable``/``minAvailable``
   (a non-negative int or a ``<digits>%`` of at most 100%);
3. on UPDATE, ``selector`` and ``targetRef`` unchanged;
4. no other PUB of the namespace with the same target (same API group, kind and name) or a
   selector that loosely overlaps (``util.IsSelectorLooseOverlap``): the first conflict is reported.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kruise.workloads.admission.fielderrors import (
    FieldError,
    GoSyntax,
    aggregate,
    go_label_selector,
    go_quote,
    internal_error,
    invalid,
    required,
)
from kruise.workloads.admission.intstr import validate_positive_int_or_percent
from kruise.workloads.admission.metavalidation import (
    LabelSelectorError,
    selector_requirements,
    validate_label_selector,
)
from kruise.workloads.api.podunavailablebudget import (
    PROTECT_OPERATIONS_ANNOTATION,
    PROTECT_TOTAL_REPLICAS_ANNOTATION,
)
from kruise.workloads.objects import KubeObject, annotations_of, mapping, name, sequence, spec

__all__ = ["api_group", "go_target_reference", "selectors_loosely_overlap", "validate_pub"]

_OPERATIONS = ("UPDATE", "DELETE", "EVICT")
_INT = re.compile(r"^[+-]?[0-9]+$")
_GROUP_VERSION = re.compile(r"^[^/]*(/[^/]*)?$")


def api_group(api_version: str) -> str | None:
    """``schema.ParseGroupVersion(...).Group``: ``"apps/v1"`` -> ``"apps"``, ``"v1"`` -> ``""``;
    ``None`` when it does not parse (more than one ``/``)."""
    if not _GROUP_VERSION.match(api_version):
        return None
    return api_version.split("/", 1)[0] if "/" in api_version else ""


def go_target_reference(ref: Mapping[str, Any]) -> GoSyntax:
    """A ``targetRef`` as Go's ``%#v`` prints ``v1alpha1.TargetReference`` (PUB's and
    PersistentPodState's share the name and fields)."""
    return GoSyntax(
        "v1alpha1.TargetReference{"
        f"APIVersion:{go_quote(str(ref.get('apiVersion') or ''))}, "
        f"Kind:{go_quote(str(ref.get('kind') or ''))}, Name:{go_quote(str(ref.get('name') or ''))}}}"
    )


def _annotation_errors(pub: KubeObject) -> list[FieldError]:
    errs: list[FieldError] = []
    annotations = annotations_of(pub)
    operations = annotations.get(PROTECT_OPERATIONS_ANNOTATION)
    if operations is not None:
        for operation in str(operations).split(","):
            if operation not in _OPERATIONS:
                errs.append(
                    internal_error("metadata", f"annotation[{PROTECT_OPERATIONS_ANNOTATION}] is invalid")
                )
    replicas = annotations.get(PROTECT_TOTAL_REPLICAS_ANNOTATION)
    if replicas is not None:
        text = str(replicas)
        if not _INT.match(text) or not -(2**31) <= int(text) < 2**31:
            errs.append(
                internal_error("metadata", f"annotation[{PROTECT_TOTAL_REPLICAS_ANNOTATION}] is invalid")
            )
    return errs


def _spec_errors(pub_spec: Mapping[str, Any]) -> list[FieldError]:
    errs: list[FieldError] = []
    selector, target = pub_spec.get("selector"), pub_spec.get("targetRef")
    both = "spec.selector, targetRef"
    if selector is None and target is None:
        errs.append(required(both, "no selector or targetRef defined in PodUnavailableBudget"))
    elif selector is not None and target is not None:
        errs.append(required(both, "selector and targetRef are mutually exclusive"))
    elif target is not None:
        ref = mapping(target)
        if not ref.get("apiVersion") or not ref.get("name") or not ref.get("kind"):
            errs.append(
                invalid(
                    "spec.TargetReference",
                    go_target_reference(ref),
                    "empty TargetReference is not valid for PodUnavailableBudget.",
                )
            )
        version = str(ref.get("apiVersion") or "")
        if api_group(version) is None:
            errs.append(
                invalid(
                    "spec.TargetReference",
                    go_target_reference(ref),
                    f"unexpected GroupVersion string: {version}",
                )
            )
    else:
        sel = mapping(selector)
        errs.extend(validate_label_selector(sel, "spec.selector"))
        if not sel.get("matchLabels") and not sel.get("matchExpressions"):
            errs.append(
                invalid(
                    "spec.selector",
                    go_label_selector(sel),
                    "empty selector is not valid for PodUnavailableBudget.",
                )
            )
        try:
            selector_requirements(sel)
        except LabelSelectorError:
            errs.append(invalid("spec.selector", go_label_selector(sel), ""))
    most, least = pub_spec.get("maxUnavailable"), pub_spec.get("minAvailable")
    budgets = "spec.maxUnavailable, minAvailable"
    if most is None and least is None:
        errs.append(required(budgets, "no maxUnavailable or minAvailable defined in PodUnavailableBudget"))
    elif most is not None and least is not None:
        errs.append(required(budgets, "maxUnavailable and minAvailable are mutually exclusive"))
    elif most is not None:
        errs.extend(validate_positive_int_or_percent(most, "spec.maxUnavailable"))
    else:
        errs.extend(validate_positive_int_or_percent(least, "spec.minAvailable"))
    return errs


def _requirements(selector: Mapping[str, Any]) -> dict[str, tuple[str, list[str]]]:
    """``convertSelectorToMatchExpressions``: key -> (operator, values); matchLabels win."""
    out: dict[str, tuple[str, list[str]]] = {}
    for entry in sequence(selector.get("matchExpressions")):
        expr = mapping(entry)
        out[str(expr.get("key") or "")] = (
            str(expr.get("operator") or ""),
            [str(v) for v in sequence(expr.get("values"))],
        )
    for key, value in mapping(selector.get("matchLabels")).items():
        out[str(key)] = ("In", [str(value)])
    return out


def _contains(a: Sequence[str], b: Sequence[str]) -> bool:
    return set(b) <= set(a)


def _overlap(first: tuple[str, list[str]], second: tuple[str, list[str]]) -> bool:
    """``isMatchExpOverlap``."""
    (op1, v1), (op2, v2) = first, second
    if op1 == "In":
        return (
            op2 == "Exists"
            or (op2 == "In" and bool(set(v1) & set(v2)))
            or (op2 == "NotIn" and not _contains(v2, v1))
        )
    if op1 == "Exists":
        return op2 in ("In", "NotIn", "Exists")
    if op1 == "NotIn":
        return op2 in ("Exists", "DoesNotExist", "NotIn") or (op2 == "In" and not _contains(v1, v2))
    if op1 == "DoesNotExist":
        return op2 in ("DoesNotExist", "NotIn")
    return False


def selectors_loosely_overlap(first: Mapping[str, Any], second: Mapping[str, Any]) -> bool:
    """``util.IsSelectorLooseOverlap``: both select on exactly the same keys and every key's
    requirements can hold together (so ``{app: a}`` and ``{app: a, tier: b}`` do *not* overlap)."""
    one, two = _requirements(first), _requirements(second)
    if one.keys() != two.keys():
        return False
    return all(_overlap(one[k], two[k]) and _overlap(two[k], one[k]) for k in one)


def _conflict_errors(pub: KubeObject, others: Iterable[KubeObject]) -> list[FieldError]:
    pub_spec = spec(pub)
    for other in others:
        if name(other) == name(pub):
            continue
        other_spec = spec(other)
        mine, theirs = pub_spec.get("targetRef"), other_spec.get("targetRef")
        if mine is not None and theirs is not None:
            a, b = mapping(mine), mapping(theirs)
            if (
                api_group(str(a.get("apiVersion") or "")) == api_group(str(b.get("apiVersion") or ""))
                and a.get("kind") == b.get("kind")
                and a.get("name") == b.get("name")
            ):
                message = (
                    f"pub.spec.targetReference is in conflict with other PodUnavailableBudget {name(other)}"
                )
                return [invalid("spec.targetReference", go_target_reference(a), message)]
        elif pub_spec.get("selector") is not None and other_spec.get("selector") is not None:
            mine_sel = mapping(pub_spec.get("selector"))
            if selectors_loosely_overlap(mine_sel, mapping(other_spec.get("selector"))):
                message = f"pub.spec.selector is in conflict with other PodUnavailableBudget {name(other)}"
                return [invalid("spec.selector", go_label_selector(mine_sel), message)]
    return []


def validate_pub(pub: KubeObject, old: KubeObject | None, others: Iterable[KubeObject]) -> str | None:
    """The webhook's verdict on ``pub`` (``old`` on UPDATE; ``others``: the namespace's PUBs):
    ``None`` to admit, else the aggregated message (``field.ErrorList.ToAggregate``)."""
    errs = _annotation_errors(pub)
    errs.extend(_spec_errors(spec(pub)))
    if old is not None:
        new_spec, old_spec = spec(pub), spec(old)
        if new_spec.get("selector") != old_spec.get("selector") or new_spec.get("targetRef") != old_spec.get(
            "targetRef"
        ):
            errs.append(required("spec.selector, targetRef", "selector and targetRef cannot be modified"))
    errs.extend(_conflict_errors(pub, others))
    return aggregate(errs) or None
