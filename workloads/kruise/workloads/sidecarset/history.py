"""A SidecarSet's ControllerRevisions and injecting a stored one (pure; ``history_control.go``).

- Revisions live in the manager's namespace (users there are trusted), labelled
  ``kruise.io/sidecarset-name`` (plus the SidecarSet's labels, ``apps.kruise.io/sidecarset-custom-version``
  among them), carrying the SidecarSet's annotations (its two hashes among them) and owned by it.
- ``data`` is ``{"spec": {"$patch": "replace", "volumes", "containers", "initContainers",
  "imagePullSecrets", "patchPodMetadata"}}`` (absent fields as ``null``); the name
  ``<sidecarset>-<hash>`` and the reuse / bump (roll back) / create choice are the shared engine's
  (:mod:`kruise.workloads.revisions`).
- :func:`restore`: the SidecarSet as a revision recorded it: its spec *replaced* by the revision's
  five fields (the directive says so), its hashes the revision's (or recomputed), and
  ``status.latestRevision`` the revision's name.
- :func:`choose_revision` (``getSuitableRevisionSidecarSet`` on CREATE): with
  ``injectionStrategy.revision`` the stored revision is injected (``Always``, or while updates
  are paused); with ``Partial`` a pod the ``updateStrategy.selector`` leaves out gets the stored
  one, any other gets it with probability ``partition`` (a percentage; an integer partition
  means the latest), else the latest.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kruise.workloads.objects import (
    KubeObject,
    annotations_of,
    labels,
    mapping,
    name,
    spec,
)
from kruise.workloads.revisions import (
    ControllerKind,
    RevisionPlan,
    hash_revision_data,
    plan_revisions,
    revision_name,
    sort_revisions,
)
from kruise.workloads.selector import SelectorError, selector_matches
from kruise.workloads.sidecarset.hashing import sidecarset_hash, sidecarset_hash_without_image
from kruise.workloads.sidecarset.keys import (
    CUSTOM_VERSION_LABEL,
    HASH_ANNOTATION,
    HASH_WITHOUT_IMAGE_ANNOTATION,
    SIDECARSET_NAME_LABEL,
)
from kruise.workloads.sidecarset.podinfo import controller_revision_of

__all__ = [
    "SIDECARSET_KIND",
    "RevisionNotFoundError",
    "choose_revision",
    "custom_version_patch",
    "find_revision",
    "new_revision",
    "plan",
    "restore",
    "revision_data",
    "revisions_to_delete",
]

JSON = dict[str, Any]
SIDECARSET_KIND = ControllerKind("apps.kruise.io/v1alpha1", "SidecarSet")
REVISION_FIELDS = ("volumes", "containers", "initContainers", "imagePullSecrets", "patchPodMetadata")
DEFAULT_HISTORY_LIMIT = 10


class RevisionNotFoundError(LookupError):
    """``injectionStrategy.revision`` names no stored revision (message as the API server's)."""


def revision_data(sidecarset: KubeObject) -> JSON:
    """The ControllerRevision ``data`` recording ``sidecarset`` (``getPatch``)."""
    body = spec(sidecarset)
    return {"spec": {"$patch": "replace", **{key: body.get(key) for key in REVISION_FIELDS}}}


def new_revision(sidecarset: KubeObject, namespace: str, number: int, collision: int) -> JSON:
    """The ControllerRevision for the SidecarSet as it is now (``NewRevision``)."""
    data = revision_data(sidecarset)
    hash_value = hash_revision_data(data, collision)
    revision_labels = {**labels(sidecarset), SIDECARSET_NAME_LABEL: name(sidecarset)}
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {
            "name": revision_name(name(sidecarset), hash_value),
            "namespace": namespace,
            "labels": revision_labels,
            "annotations": dict(annotations_of(sidecarset)),
            "ownerReferences": [SIDECARSET_KIND.reference(sidecarset)],
        },
        "data": data,
        "revision": number,
    }


def plan(sidecarset: KubeObject, revisions: Sequence[KubeObject], namespace: str) -> RevisionPlan:
    """Reuse, bump (roll back to) or create the revision of the SidecarSet as it is now."""
    return plan_revisions(
        sidecarset,
        revisions,
        controller=SIDECARSET_KIND,
        build=lambda number, collision: new_revision(sidecarset, namespace, number, collision),
    )


def restore(sidecarset: KubeObject, revision: KubeObject) -> JSON:
    """The SidecarSet as ``revision`` recorded it (``GetHistorySidecarSet``)."""
    out = copy.deepcopy(dict(sidecarset))
    recorded = mapping(mapping(revision.get("data")).get("spec"))
    out["spec"] = {k: copy.deepcopy(v) for k, v in recorded.items() if k != "$patch" and v is not None}
    meta = out.setdefault("metadata", {})
    annotations = dict(mapping(meta.get("annotations")))
    stored = annotations_of(revision)
    annotations[HASH_ANNOTATION] = str(stored.get(HASH_ANNOTATION) or sidecarset_hash(out))
    annotations[HASH_WITHOUT_IMAGE_ANNOTATION] = str(
        stored.get(HASH_WITHOUT_IMAGE_ANNOTATION) or sidecarset_hash_without_image(out)
    )
    meta["annotations"] = annotations
    out["status"] = {**mapping(out.get("status")), "latestRevision": name(revision)}
    return out


def find_revision(
    sidecarset: KubeObject,
    info: Mapping[str, Any],
    by_name: Callable[[str], KubeObject | None],
    of_sidecarset: Sequence[KubeObject],
) -> KubeObject | None:
    """The revision ``injectionStrategy.revision`` (``info``) names (``getControllerRevision``).

    ``by_name`` looks a revision up in the manager's namespace; ``of_sidecarset`` are the
    SidecarSet's revisions. ``None`` when ``info`` names nothing.

    Raises:
        RevisionNotFoundError: the named revision, or any revision of the custom version, is missing.
    """
    if info.get("revisionName") is not None:
        wanted = str(info["revisionName"])
        found = by_name(wanted)
        if found is None:
            raise RevisionNotFoundError(f'controllerrevisions.apps "{wanted}" not found')
        return found
    if info.get("customVersion") is not None:
        version = str(info["customVersion"])
        matching = [r for r in of_sidecarset if labels(r).get(CUSTOM_VERSION_LABEL) == version]
        if not matching:
            raise RevisionNotFoundError(f'ControllerRevision.apps "{name(sidecarset)}" not found')
        return sort_revisions(matching)[-1]
    return None


def _probability(partition: Any) -> float | None:
    """``ParsePercentageAsFloat64``; ``None`` for an integer or absent partition."""
    if not isinstance(partition, str):
        return None
    if not partition.endswith("%"):
        raise ValueError(f"invalid percentage {partition!r}")
    return float(partition[:-1]) / 100


def choose_revision(
    sidecarset: KubeObject,
    pod: KubeObject,
    stored: Callable[[Mapping[str, Any]], KubeObject | None],
    draw: Callable[[], float],
) -> KubeObject:
    """The SidecarSet version to inject into a new ``pod`` (see the module docstring).

    ``stored(info)`` restores the revision ``info`` names (``None``: keep the latest); ``draw()``
    returns a uniform number in ``[0, 1)``.

    Raises:
        RevisionNotFoundError: from ``stored``.
        ValueError: a malformed percentage partition with the ``Partial`` policy.
    """
    info = mapping(mapping(spec(sidecarset).get("injectionStrategy")).get("revision"))
    if not info or (info.get("revisionName") is None and info.get("customVersion") is None):
        return sidecarset
    specific = stored(info) or sidecarset
    strategy = mapping(spec(sidecarset).get("updateStrategy"))
    if strategy.get("paused") or info.get("policy") != "Partial":
        return specific
    selector = strategy.get("selector")
    if selector is not None:
        try:
            selected = selector_matches(mapping(selector), labels(pod))
        except SelectorError:
            selected = False
        if not selected:
            return specific
    probability = _probability(strategy.get("partition"))
    if probability is None:
        return sidecarset
    return specific if draw() <= probability else sidecarset


def revisions_to_delete(
    sidecarset: KubeObject, pods: Sequence[KubeObject], ordered: Sequence[KubeObject]
) -> list[KubeObject]:
    """Revisions beyond ``revisionHistoryLimit`` (at least 1, default 10), oldest first, never the
    newest nor one a pod or the injection strategy still uses (``truncateHistory``)."""
    limit_value = spec(sidecarset).get("revisionHistoryLimit")
    limit = DEFAULT_HISTORY_LIMIT if limit_value is None else max(1, int(limit_value))
    excess = len(ordered) - limit
    if excess <= 0:
        return []
    own = name(sidecarset)
    active = {controller_revision_of(p, own) for p in pods} - {""}
    info = mapping(mapping(spec(sidecarset).get("injectionStrategy")).get("revision"))
    if info.get("revisionName") is not None:
        active.add(str(info["revisionName"]))
    if info.get("customVersion") is not None:
        versioned = [r for r in ordered if labels(r).get(CUSTOM_VERSION_LABEL) == info["customVersion"]]
        if versioned:
            active.add(name(sort_revisions(versioned)[-1]))
    out: list[KubeObject] = []
    for revision in list(ordered)[:-1]:
        if len(out) >= excess:
            break
        if name(revision) not in active:
            out.append(revision)
    return out


def custom_version_patch(revision: KubeObject, sidecarset: KubeObject) -> JSON | None:
    """The label patch putting the SidecarSet's custom version on its newest revision, if needed."""
    version = labels(sidecarset).get(CUSTOM_VERSION_LABEL)
    if not version or labels(revision).get(CUSTOM_VERSION_LABEL) == version:
        return None
    return {"metadata": {"labels": {CUSTOM_VERSION_LABEL: version}}}
