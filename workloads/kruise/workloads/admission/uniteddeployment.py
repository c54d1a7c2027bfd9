"""UnitedDeployment validation (validating webhook ``vuniteddeployment.kb.io``), pure.

Mirrors OpenKruise v1.8's ``pkg/webhook/uniteddeployment/validating``: messages and field paths
verbatim (Appendix B of the reference), upstream's slips kept (an Advanced StatefulSet template's
labels are reported at ``template.statefulSetTemplate.metadata.labels``). On CREATE:

- metadata; ``replicas`` not negative; the selector valid and not empty ("empty selector is
  invalid for statefulset"); when it converts, the template: exactly one of the four kinds
  (Required / "should provide only one of ..."), and for a StatefulSet, Advanced StatefulSet or
  Deployment template its labels matched by the selector, no ``replicas`` and (StatefulSets) no
  ``rollingUpdate.partition`` ("... will not be used"), and its pod template as the API server
  judges it (``template_errors``, a dry-run Pod; upstream runs ``ValidatePodTemplateSpecFor*``);
- the topology (:mod:`.uniteddeployment_topology`): replicas and bounds, subset names, each
  subset's nodeSelectorTerm and tolerations (``topology_errors``, the API server's verdict),
  partitions naming existing subsets.

On UPDATE, every CREATE check, then: a StatefulSet or Advanced StatefulSet template may change
only ``replicas``, ``template`` and ``updateStrategy``; a subset that keeps its name may not
change its ``nodeSelectorTerm`` or ``tolerations`` ("may not be changed in an update").

As upstream (whose mutating webhook does not default a template's update strategy), a
``rollingUpdate.partition`` is refused only beside an explicit ``type: RollingUpdate``. The
"Convert_v1_*_To_core_* failed" errors cannot occur (those conversions never fail) and are not
produced.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kruise.workloads.admission.deletion_protection import validate_workload_deletion
from kruise.workloads.admission.fielderrors import (
    FieldError,
    forbidden,
    go_label_selector,
    go_string_map,
    invalid,
    required,
)
from kruise.workloads.admission.jsondiff import semantic_view
from kruise.workloads.admission.metavalidation import (
    IS_NEGATIVE_ERROR_MSG,
    LabelSelectorError,
    selector_matches,
    selector_requirements,
    validate_label_selector,
    validate_object_meta,
)
from kruise.workloads.admission.uniteddeployment_topology import (
    validate_partitions,
    validate_subset_names,
    validate_subset_replicas,
)

__all__ = [
    "TEMPLATE_KINDS",
    "pod_template_base",
    "validate_uniteddeployment_create",
    "validate_uniteddeployment_delete",
    "validate_uniteddeployment_update",
]

TEMPLATE_KINDS = (
    "statefulSetTemplate",
    "advancedStatefulSetTemplate",
    "cloneSetTemplate",
    "deploymentTemplate",
)
"""The four subset template kinds, in upstream's order."""
_KIND_LIST = "statefulSetTemplate, advancedStatefulSetTemplate, cloneSetTemplate, or deploymentTemplate"
_MUTABLE_TEXT = "'template', and 'updateStrategy'"
_JUDGED = ("statefulSetTemplate", "advancedStatefulSetTemplate", "deploymentTemplate")
"""Template kinds whose pod template upstream validates (not the CloneSet's)."""
_LABELS_AT = {
    "statefulSetTemplate": "statefulSetTemplate",
    "advancedStatefulSetTemplate": "statefulSetTemplate",  # upstream's path slip
    "deploymentTemplate": "deploymentTemplate",
}


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _spec(obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return _mapping(_mapping(obj).get("spec"))


def _non_negative(value: Any, path: str) -> list[FieldError]:
    if isinstance(value, int) and not isinstance(value, bool) and value < 0:
        return [invalid(path, value, IS_NEGATIVE_ERROR_MSG)]
    return []


def pod_template_base(obj: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]] | None:
    """Where the pod template to judge lives: ``(field path, workload spec)`` of the one
    StatefulSet, Advanced StatefulSet or Deployment template, else ``None``."""
    template = _mapping(_spec(obj).get("template"))
    for kind in _JUDGED:
        if template.get(kind) is not None:
            return f"spec.template.{kind}.spec.template", _spec(template[kind])
    return None


def _workload_checks(kind: str, workload: Mapping[str, Any]) -> list[FieldError]:
    """``validateStatefulSet`` / ``validateAdvancedStatefulSet`` / ``validateDeployment``."""
    base = f"spec.template.{kind}.spec"
    spec = _spec(workload)
    label = {
        "statefulSetTemplate": "statefulSetTemplate",
        "advancedStatefulSetTemplate": "advancedStatefulSetTemplate",
    }
    errs: list[FieldError] = []
    if spec.get("replicas") is not None:
        name = label.get(kind, "deploymentTemplate")
        errs.append(invalid(f"{base}.replicas", spec["replicas"], f"replicas in {name} will not be used"))
    if kind in label:
        strategy = _mapping(spec.get("updateStrategy"))
        partition = _mapping(strategy.get("rollingUpdate")).get("partition")
        if strategy.get("type") == "RollingUpdate" and partition is not None:
            detail = f"partition in {label[kind]} will not be used"
            errs.append(invalid(f"{base}.updateStrategy.rollingUpdate.partition", partition, detail))
    return errs


def _validate_template(
    template: Mapping[str, Any], requirements: Any, template_errors: Sequence[FieldError]
) -> list[FieldError]:
    """``validateSubsetTemplate``."""
    errs: list[FieldError] = []
    count = sum(1 for kind in TEMPLATE_KINDS if template.get(kind) is not None)
    if count < 1:
        errs.append(required("spec.template", f"should provide one of {_KIND_LIST}"))
    elif count > 1:
        shown = {k: v for k, v in template.items() if k in TEMPLATE_KINDS}
        errs.append(invalid("spec.template", shown, f"should provide only one of {_KIND_LIST}"))
    for kind in _JUDGED:
        workload = template.get(kind)
        if workload is None:
            continue
        labels = _mapping(_mapping(workload).get("metadata")).get("labels")
        if not selector_matches(requirements, labels):
            shown_labels = go_string_map(labels if isinstance(labels, Mapping) else None)
            path = f"spec.template.{_LABELS_AT[kind]}.metadata.labels"
            errs.append(invalid(path, shown_labels, "`selector` does not match template `labels`"))
        errs.extend(_workload_checks(kind, _mapping(workload)))
        errs.extend(template_errors)
        break  # upstream's if / else-if: only the first kind present is judged
    return errs


def validate_uniteddeployment_create(
    obj: Mapping[str, Any],
    *,
    template_errors: Sequence[FieldError] = (),
    topology_errors: Sequence[FieldError] = (),
) -> list[FieldError]:
    """Validating webhook on CREATE (``validateUnitedDeployment``); ``[]`` means admitted.

    ``template_errors`` is the API server's verdict on a Pod made from the judged pod template
    (:func:`pod_template_base`), ``topology_errors`` its verdict on the subsets' node selector
    terms and tolerations (:mod:`.uniteddeployment_topology`).
    """
    errs = validate_object_meta(_mapping(obj.get("metadata")), requires_namespace=True)
    spec = _spec(obj)
    errs += _non_negative(spec.get("replicas"), "spec.replicas")
    selector = spec.get("selector")
    if not isinstance(selector, Mapping):
        errs.append(required("spec.selector"))
    else:
        errs += validate_label_selector(selector, "spec.selector")
        if not _mapping(selector.get("matchLabels")) and not selector.get("matchExpressions"):
            shown = go_label_selector(selector)
            errs.append(invalid("spec.selector", shown, "empty selector is invalid for statefulset"))
    try:
        requirements = selector_requirements(selector)
    except LabelSelectorError:
        shown_selector = go_label_selector(selector) if isinstance(selector, Mapping) else None
        errs.append(invalid("spec.selector", shown_selector, ""))
    else:
        errs += _validate_template(_mapping(spec.get("template")), requirements, template_errors)
    errs += validate_subset_replicas(spec)
    errs += validate_subset_names(spec)
    errs += topology_errors
    errs += validate_partitions(spec)
    return errs


def _template_update(template: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    """``validateSubsetTemplateUpdate``: the first kind present in both is checked."""
    mutable = ("replicas", "template", "updateStrategy")
    for kind, name in (
        ("statefulSetTemplate", "statefulsetTemplate"),
        ("advancedStatefulSetTemplate", "advancedStatefulsetTemplate"),
        ("deploymentTemplate", None),
    ):
        if template.get(kind) is None or old.get(kind) is None:
            continue
        new_spec, old_spec = _spec(template[kind]), _spec(old[kind])
        errs: list[FieldError] = []
        if name is not None:
            rest = {k: v for k, v in new_spec.items() if k not in mutable}
            old_rest = {k: v for k, v in old_spec.items() if k not in mutable}
            if semantic_view(rest) != semantic_view(old_rest):
                detail = f"updates to {name} spec for fields other than {_MUTABLE_TEXT} are forbidden"
                errs.append(forbidden(f"spec.template.{kind}.spec", detail))
        errs += _non_negative(new_spec.get("replicas"), f"spec.template.{kind}.spec.replicas")
        return errs
    return []


def _topology_update(spec: Mapping[str, Any], old_spec: Mapping[str, Any]) -> list[FieldError]:
    """``validateUnitedDeploymentTopology``: a kept subset's node selector and tolerations are fixed."""

    def subsets(s: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        items = _mapping(s.get("topology")).get("subsets")
        return [_mapping(i) for i in items] if isinstance(items, list) else []

    before = {str(s.get("name") or ""): s for s in subsets(old_spec)}
    errs: list[FieldError] = []
    for index, subset in enumerate(subsets(spec)):
        previous = before.get(str(subset.get("name") or ""))
        if previous is None:
            continue
        for key in ("nodeSelectorTerm", "tolerations"):
            if semantic_view(subset.get(key)) != semantic_view(previous.get(key)):
                errs.append(
                    forbidden(f"spec.topology.subsets[{index}].{key}", "may not be changed in an update")
                )
    return errs


def validate_uniteddeployment_update(
    obj: Mapping[str, Any],
    old: Mapping[str, Any],
    *,
    template_errors: Sequence[FieldError] = (),
    topology_errors: Sequence[FieldError] = (),
) -> list[FieldError]:
    """Validating webhook on UPDATE: the CREATE checks, then ``ValidateUnitedDeploymentUpdate``
    (metadata immutability is left to the API server)."""
    errs = validate_uniteddeployment_create(
        obj, template_errors=template_errors, topology_errors=topology_errors
    )
    spec, old_spec = _spec(obj), _spec(old)
    errs += _template_update(_mapping(spec.get("template")), _mapping(old_spec.get("template")))
    errs += _topology_update(spec, old_spec)
    errs += _non_negative(spec.get("replicas"), "spec.replicas")
    return errs


def validate_uniteddeployment_delete(old: Mapping[str, Any], *, gate_enabled: bool) -> str | None:
    """Validating webhook on DELETE: ``ValidateWorkloadDeletion(obj, spec.replicas)`` (HTTP 403)."""
    return validate_workload_deletion(old, _spec(old).get("replicas"), gate_enabled=gate_enabled)
