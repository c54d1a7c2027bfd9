"""Conflicts between SidecarSets that can select the same pods (pure; ``validateSidecarConflict``).

Two SidecarSets *overlap* when their namespaces can coincide (``isSidecarSetNamespaceOverlapping``)
and their pod selectors are not provably disjoint (``util.IsSelectorOverlapping``: disjoint when
a key one requires has, in the other, only values outside the first's, or is required absent).
Among overlapping SidecarSets, messages verbatim:

- an init container or container name another one injects: ``container <c> already exist in <other>``;
- a volume name another one defines with other content: ``volume <v> is in conflict with sidecarset <other>``;
- a pod annotation both patch, either with ``Overwrite`` (``Retain`` never conflicts):
  ``annotation <a> is in conflict with sidecarset <other>``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kruise.workloads.admission.fielderrors import FieldError, invalid
from kruise.workloads.selector import SelectorError, selector_matches

__all__ = ["conflict_errors", "is_selector_overlapping", "namespaces_overlap"]

NamespaceLabels = Callable[[str], Mapping[str, str] | None]


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _allowed_values(selector: Mapping[str, Any]) -> dict[str, list[str]]:
    """Key -> the values ``selector`` allows (``"ALL"`` for ``Exists``); keys it does not pin are absent."""
    allowed: dict[str, list[str]] = {
        str(k): [str(v)] for k, v in _mapping(selector.get("matchLabels")).items()
    }
    for requirement in map(_mapping, _list(selector.get("matchExpressions"))):
        key = str(requirement.get("key") or "")
        if requirement.get("operator") == "In":
            allowed.setdefault(key, []).extend(str(v) for v in _list(requirement.get("values")))
        elif requirement.get("operator") == "Exists":
            allowed[key] = ["ALL"]
    return allowed


def _disjoint(first: Mapping[str, Any], second: Mapping[str, Any]) -> bool:
    """``isDisjoint``: a requirement of ``second`` contradicts what ``first`` pins."""
    allowed = _allowed_values(first)
    for key, value in _mapping(second.get("matchLabels")).items():
        values = allowed.get(str(key))
        if values is not None and "ALL" not in values and str(value) not in values:
            return True
    for requirement in map(_mapping, _list(second.get("matchExpressions"))):
        key = str(requirement.get("key") or "")
        values = allowed.get(key)
        wanted = [str(v) for v in _list(requirement.get("values"))]
        operator = requirement.get("operator")
        if operator == "In" and values is not None and "ALL" not in values and not set(values) & set(wanted):
            return True
        if operator == "NotIn" and values is not None and set(values) <= set(wanted):
            return True
        if operator == "Exists" and values is None:
            return True
        if operator == "DoesNotExist" and values is not None:
            return True
    return False


def is_selector_overlapping(first: Mapping[str, Any] | None, second: Mapping[str, Any] | None) -> bool:
    """``util.IsSelectorOverlapping``: not disjoint either way round."""
    one, two = _mapping(first), _mapping(second)
    return not (_disjoint(one, two) or _disjoint(two, one))


def _in_selected_namespace(namespace: str, selector: Any, labels_of: NamespaceLabels) -> bool:
    labels = labels_of(namespace)
    if labels is None or selector is None:
        return False
    try:
        return selector_matches(_mapping(selector), labels)
    except SelectorError:
        return False


def namespaces_overlap(
    origin: Mapping[str, Any], other: Mapping[str, Any], labels_of: NamespaceLabels
) -> bool:
    """``isSidecarSetNamespaceOverlapping`` (see the deviation in :mod:`.sidecarset`)."""
    mine, theirs = _mapping(origin.get("spec")), _mapping(other.get("spec"))
    my_ns, their_ns = mine.get("namespace") or "", theirs.get("namespace") or ""
    if my_ns and their_ns and my_ns != their_ns:
        return False
    my_sel, their_sel = mine.get("namespaceSelector"), theirs.get("namespaceSelector")
    if my_sel is not None and their_sel is not None and not is_selector_overlapping(my_sel, their_sel):
        return False
    if my_ns and their_sel is not None and not _in_selected_namespace(my_ns, their_sel, labels_of):
        return False
    return not (their_ns and my_sel is not None and not _in_selected_namespace(their_ns, my_sel, labels_of))


def conflict_errors(
    obj: Mapping[str, Any], others: Sequence[Mapping[str, Any]], labels_of: NamespaceLabels
) -> list[FieldError]:
    """The conflicts of ``obj`` with the overlapping SidecarSets among ``others`` (itself skipped)."""
    name = _mapping(obj.get("metadata")).get("name")
    spec = _mapping(obj.get("spec"))
    containers: dict[str, str] = {}
    inits: dict[str, str] = {}
    volumes: dict[str, tuple[str, Any]] = {}
    annotations: dict[str, tuple[str, str]] = {}
    for other in others:
        other_name = str(_mapping(other.get("metadata")).get("name") or "")
        if other_name == name or not namespaces_overlap(obj, other, labels_of):
            continue
        other_spec = _mapping(other.get("spec"))
        if not is_selector_overlapping(_mapping(spec.get("selector")), _mapping(other_spec.get("selector"))):
            continue
        inits.update(
            (str(_mapping(c).get("name")), other_name) for c in _list(other_spec.get("initContainers"))
        )
        containers.update(
            (str(_mapping(c).get("name")), other_name) for c in _list(other_spec.get("containers"))
        )
        volumes.update(
            (str(_mapping(v).get("name")), (other_name, v)) for v in _list(other_spec.get("volumes"))
        )
        for patch in map(_mapping, _list(other_spec.get("patchPodMetadata"))):
            if patch.get("patchPolicy") != "Retain":
                annotations.update(
                    (str(k), (other_name, str(patch.get("patchPolicy"))))
                    for k in _mapping(patch.get("annotations"))
                )
    errs: list[FieldError] = []
    for kind, known in (("initContainers", inits), ("containers", containers)):
        for container in map(_mapping, _list(spec.get(kind))):
            cname = str(container.get("name") or "")
            if cname in known:
                errs.append(
                    invalid("spec.containers", cname, f"container {cname} already exist in {known[cname]}")
                )
    for volume in map(_mapping, _list(spec.get("volumes"))):
        vname = str(volume.get("name") or "")
        if vname in volumes and dict(volume) != dict(_mapping(volumes[vname][1])):
            errs.append(
                invalid(
                    "spec.volumes",
                    vname,
                    f"volume {vname} is in conflict with sidecarset {volumes[vname][0]}",
                )
            )
    for patch in map(_mapping, _list(spec.get("patchPodMetadata"))):
        if patch.get("patchPolicy") == "Retain":
            continue
        for key in _mapping(patch.get("annotations")):
            if key in annotations and "Overwrite" in (patch.get("patchPolicy"), annotations[key][1]):
                errs.append(
                    invalid(
                        "spec.patchPodMetadata",
                        key,
                        f"annotation {key} is in conflict with sidecarset {annotations[key][0]}",
                    )
                )
    return errs
