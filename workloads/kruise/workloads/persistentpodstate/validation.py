"""The PersistentPodState validating webhook's rules (pure): upstream's
``pkg/webhook/persistentpodstate/validating`` (v1.8), messages verbatim.

Field errors, in order (answered as one aggregate, HTTP 400, nothing stored):

1. ``spec.TargetReference``: apiVersion, kind and name all set
   (``empty TargetReference is not valid for PersistentPodState.``) and a StatefulSet of
   ``apps`` or ``apps.kruise.io`` (``TargetReference.Kind must be StatefulSet or in
   PPS_Watch_Custom_Workload_WhiteList``; the custom white list is not supported, so it is empty);
2. ``spec``: a required or a preferred topology (``TopologyConstraint and TopologyPreference
   cannot be empty at the same time``);
3. on UPDATE, ``spec.targetRef`` unchanged (``Required value: targetRef cannot be modified``);
4. no other PersistentPodState of the namespace on the same workload (same API group, kind,
   name): ``spec.targetReference: ... targetReference is in conflict with other
   PersistentPodState <name>`` (the first one found).

The bad values print as Go's ``%#v`` of upstream's structs (:func:`go_spec`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kruise.workloads.admission.fielderrors import FieldError, GoSyntax, go_quote, invalid, required
from kruise.workloads.api.persistentpodstate import PersistentPodStateView, PpsSpecView
from kruise.workloads.persistentpodstate.core import is_statefulset, same_target
from kruise.workloads.podunavailablebudget.validation import go_target_reference

__all__ = ["go_spec", "validate_pps"]


def go_spec(spec: PpsSpecView) -> GoSyntax:
    """``%#v`` of a ``PersistentPodStateSpec`` without topologies (the only one reported):
    the target, the annotation keys, nil topologies and the retention policy."""
    target = go_target_reference(spec.get("targetRef") or {}).text
    keys = spec.get("persistentPodAnnotations")
    if keys is None:
        annotations = "[]v1alpha1.PersistentPodAnnotation(nil)"
    else:
        items = ", ".join(
            f"v1alpha1.PersistentPodAnnotation{{Key:{go_quote(str(k.get('key') or ''))}}}" for k in keys
        )
        annotations = f"[]v1alpha1.PersistentPodAnnotation{{{items}}}"
    preferred = (
        "[]v1alpha1.PreferredTopologyTerm(nil)"
        if spec.get("preferredPersistentTopology") is None
        else "[]v1alpha1.PreferredTopologyTerm{}"
    )
    policy = go_quote(str(spec.get("persistentPodStateRetentionPolicy") or ""))
    return GoSyntax(
        f"v1alpha1.PersistentPodStateSpec{{TargetReference:{target}, PersistentPodAnnotations:{annotations}, "
        "RequiredPersistentTopology:(*v1alpha1.NodeTopologyTerm)(nil), "
        f"PreferredPersistentTopology:{preferred}, "
        f"PersistentPodStateRetentionPolicy:{policy}}}"
    )


def validate_pps(
    obj: PersistentPodStateView,
    old: PersistentPodStateView | None,
    others: Iterable[Mapping[str, Any]],
) -> list[FieldError]:
    """Field errors of ``obj`` (``old`` on UPDATE; ``others``: the namespace's PersistentPodStates)."""
    spec: PpsSpecView = obj.get("spec") or {}
    target = spec.get("targetRef") or {}
    errs: list[FieldError] = []
    api_version, kind, name = (str(target.get(k) or "") for k in ("apiVersion", "kind", "name"))
    if not api_version or not kind or not name:
        errs.append(
            invalid(
                "spec.TargetReference",
                go_target_reference(target),
                "empty TargetReference is not valid for PersistentPodState.",
            )
        )
    if not is_statefulset(api_version, kind):
        errs.append(
            invalid(
                "spec.TargetReference",
                go_target_reference(target),
                "TargetReference.Kind must be StatefulSet or in PPS_Watch_Custom_Workload_WhiteList",
            )
        )
    if spec.get("requiredPersistentTopology") is None and not spec.get("preferredPersistentTopology"):
        errs.append(
            invalid(
                "spec",
                go_spec(spec),
                "TopologyConstraint and TopologyPreference cannot be empty at the same time",
            )
        )
    if old is not None and dict((old.get("spec") or {}).get("targetRef") or {}) != dict(target):
        errs.append(required("spec.targetRef", "targetRef cannot be modified"))
    own = (obj.get("metadata") or {}).get("name")
    for other in others:
        other_name = (other.get("metadata") or {}).get("name")
        if other_name == own:
            continue
        if same_target(target, (other.get("spec") or {}).get("targetRef") or {}):
            errs.append(
                invalid(
                    "spec.targetReference",
                    go_target_reference(target),
                    f"targetReference is in conflict with other PersistentPodState {other_name}",
                )
            )
            break
    return errs
