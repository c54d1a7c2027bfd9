"""A UnitedDeployment's ControllerRevisions (upstream ``pkg/controller/uniteddeployment/revision.go``), pure.

The writes (create with collision retries, the roll-back bump) are the shared
:class:`kruise.workloads.history.History`; the choice among reuse / bump / create is
:func:`kruise.workloads.revisions.plan_revisions`. What is the UnitedDeployment's own:

- **data** (``getUnitedDeploymentPatch``): ``{"spec":{"template":{<subset template>,
  "$patch":"replace"}}}``, the subset template (``cloneSetTemplate``, ``statefulSetTemplate``,
  ``advancedStatefulSetTemplate`` or ``deploymentTemplate``) as Go marshals the typed
  ``SubsetTemplate`` (:func:`encoded_subset_template`);
- **name** ``<ud>-<hash>`` and label ``controller.kubernetes.io/hash: <hash>``, the hash
  ``HashControllerRevision`` of the data and the collision count (``history.NewControllerRevision``);
  the other labels are the workload template's ``metadata.labels`` (upstream takes them from the
  StatefulSet, Advanced StatefulSet and Deployment templates only and leaves a CloneSet template's
  revision unlabelled, so its own selector never lists it again; here every kind's labels are
  taken); no annotations; controlled by the UnitedDeployment;
- **history** (``cleanExpiredRevision``, run *before* the update revision is chosen): with
  ``n`` revisions sorted by number and limit ``spec.revisionHistoryLimit`` (10 when unset, the
  webhook's default), the first ``n - limit`` are dropped from consideration and deleted unless
  named by ``status.currentRevision`` or ``status.updateStatus.updatedRevision``
  (:func:`expire_revisions`). A roll back to a template still in the kept history bumps that
  revision's number instead of creating one.

Subset workloads and their pods carry the update revision's *name* under
``apps.kruise.io/controller-revision-hash`` (:data:`.kinds.REVISION_LABEL`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kruise.workloads.objects import KubeObject, mapping, name, namespace, spec, status
from kruise.workloads.revisions import (
    DEFAULT_HISTORY_LIMIT,
    HASH_LABEL,
    ControllerKind,
    go_encoded_template,
    hash_revision_data,
    revision_name,
)

__all__ = [
    "UNITEDDEPLOYMENT_KIND",
    "ExpiredRevisions",
    "encoded_subset_template",
    "expire_revisions",
    "history_limit",
    "new_ud_revision",
]

UNITEDDEPLOYMENT_KIND = ControllerKind("apps.kruise.io/v1alpha1", "UnitedDeployment")
"""The controller ``ownerReference`` kind of subset workloads and revisions."""


def encoded_subset_template(template: Mapping[str, Any]) -> dict[str, Any]:
    """``spec.template`` as Go's ``json.Marshal`` of the typed ``SubsetTemplate`` writes it (a copy).

    Each workload template gets ``metadata.creationTimestamp: null``, and its pod template
    (``spec.template``) the artifacts of
    :func:`~kruise.workloads.revisions.go_encoded_template` (``creationTimestamp: null``,
    ``resources: {}``, canonical quantities). Not reproduced: the artifacts of
    ``volumeClaimTemplates`` and Go's dropping of unknown or empty ``omitempty`` fields.
    """
    out: dict[str, Any] = {}
    for key, workload in template.items():
        if not isinstance(workload, Mapping):
            out[key] = workload
            continue
        encoded = go_encoded_template({k: v for k, v in workload.items() if k != "spec"})
        workload_spec = workload.get("spec")
        if isinstance(workload_spec, Mapping):
            pod_template = workload_spec.get("template")
            encoded["spec"] = (
                {**workload_spec, "template": go_encoded_template(pod_template)}
                if isinstance(pod_template, Mapping)
                else dict(workload_spec)
            )
        out[key] = encoded
    return out


def new_ud_revision(ud: KubeObject, revision_number: int, collision_count: int) -> dict[str, Any]:
    """The ControllerRevision of ``ud``'s current template (``newRevision``, see the module doc).

    ``revision_number`` is its ``.revision``; ``collision_count`` goes into the hash.
    """
    template = mapping(spec(ud).get("template"))
    data = {"spec": {"template": {**encoded_subset_template(template), "$patch": "replace"}}}
    hash_value = hash_revision_data(data, collision_count)
    workload_labels: Mapping[str, Any] = {}
    for workload in template.values():
        if isinstance(workload, Mapping):
            workload_labels = mapping(mapping(workload.get("metadata")).get("labels"))
            break
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {
            "name": revision_name(name(ud), hash_value),
            "namespace": namespace(ud),
            "labels": {**workload_labels, HASH_LABEL: hash_value},
            "ownerReferences": [UNITEDDEPLOYMENT_KIND.reference(ud)],
        },
        "data": data,
        "revision": revision_number,
    }


@dataclass(frozen=True)
class ExpiredRevisions:
    """``cleanExpiredRevision``'s outcome.

    Attributes:
        delete: revisions to delete, oldest first.
        kept: the sorted revisions the update revision is chosen from (the expired ones dropped,
            including a live one among them that is not deleted, as upstream slices the list).
    """

    delete: tuple[KubeObject, ...]
    kept: tuple[KubeObject, ...]


def history_limit(ud: KubeObject) -> int:
    """``spec.revisionHistoryLimit``, 10 when unset (the mutating webhook's default)."""
    raw = spec(ud).get("revisionHistoryLimit")
    return DEFAULT_HISTORY_LIMIT if raw is None else int(raw)


def expire_revisions(ud: KubeObject, sorted_revisions: Sequence[KubeObject]) -> ExpiredRevisions:
    """Which of ``sorted_revisions`` (ascending, :func:`~kruise.workloads.revisions.sort_revisions`)
    go beyond ``spec.revisionHistoryLimit`` (see the module doc)."""
    exceed = len(sorted_revisions) - history_limit(ud)
    if exceed <= 0:
        return ExpiredRevisions((), tuple(sorted_revisions))
    old = status(ud)
    live = {
        str(old.get("currentRevision") or ""),
        str(mapping(old.get("updateStatus")).get("updatedRevision") or ""),
    }
    expired = sorted_revisions[:exceed]
    return ExpiredRevisions(
        tuple(r for r in expired if name(r) not in live), tuple(sorted_revisions[exceed:])
    )
