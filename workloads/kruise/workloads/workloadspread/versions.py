"""WorkloadSpread's per-revision accounting (pure): upstream's ``versionedSubsetStatuses`` (v1.8).

While a workload rolls out, the pods of its new revision may be created before the old ones are
deleted; counted together, the new pods would find a capped subset full of old pods and all go
to a later subset. Upstream therefore keeps, beside ``status.subsetStatuses``,
``status.versionedSubsetStatuses``: revision -> subset statuses, each revision's entries counted
over that revision's pods only, against the whole ``maxReplicas`` (not scaled per revision). The
pod webhook admits and records a pod in its own revision's entries; the controller recomputes
every revision's entries.

- **Revision of a pod** (:func:`pod_version`, upstream's ``GetPodVersion``): only pods whose
  controller is a Deployment or ReplicaSet are versioned (upstream's default
  ``--ws-enabled-versioned-status=deployment,replicaset``; its set is built when the package
  loads, before flags are parsed, so the flag changes nothing and the set is fixed): their
  ``pod-template-hash`` label, else the last ``-`` part of ``controller-revision-hash``, else
  :data:`VERSION_IGNORED`. Every other pod (a CloneSet's, a StatefulSet's, a Job's) is
  :data:`VERSION_IGNORED`, so a CloneSet canary is counted as one population.
- **Latest revision of a workload** (:func:`workload_version`, ``GetWorkloadVersion``): a
  ReplicaSet's ``pod-template-hash`` label; a Deployment's: that label of the ReplicaSet it
  controls (not deleting) whose template equals the Deployment's once the label is ignored
  (``None`` when there is none yet: upstream fails the round); any other kind
  :data:`VERSION_IGNORED`.
- **First admission of a revision** (:func:`initial_statuses`): when the webhook finds no entries
  for a pod's revision it starts from the spec: ``missingReplicas`` is the cap resolved against
  the workload's replicas (``-1`` uncapped), ``replicas`` 0.
- **Controller** (:func:`next_versioned_statuses`): each revision with active pods gets
  :func:`~.subsets.next_statuses` over its pods, from that revision's previous entries; a
  revision with no pod left is recomputed over none and kept only while it still counts a
  replica or waits for a creation or deletion (a pod the webhook admitted that the controller
  has not seen yet).
- **Deletion cost**: the latest revision's pods get the usual costs; older revisions' pods get
  them with the subsets in reverse order (:func:`~.subsets.deletion_costs` ``reverse``), so a
  rollout scales the old pods of the first subsets in first and the spread is kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from kruise.workloads.api.workloadspread import SubsetStatusView, SubsetView
from kruise.workloads.objects import KubeObject, labels
from kruise.workloads.pods import POD_TEMPLATE_HASH_LABEL, REVISION_HASH_LABEL
from kruise.workloads.workloadspread.subsets import max_replicas, next_statuses

__all__ = [
    "VERSIONED_KINDS",
    "VERSION_IGNORED",
    "initial_statuses",
    "next_versioned_statuses",
    "pod_version",
    "pods_by_version",
    "workload_version",
]

VERSION_IGNORED = "versionIgnored"
"""The revision key of pods (and workloads) not versioned: all counted as one revision."""
VERSIONED_KINDS = frozenset({"Deployment", "ReplicaSet"})
"""Controller kinds whose pods are counted per revision (upstream's default set)."""


def _controller(obj: KubeObject) -> Mapping[str, Any] | None:
    """The ownerReference marked ``controller`` (the runtime's ``controller_ref``, kept here so
    this module stays free of I/O imports)."""
    refs = (obj.get("metadata") or {}).get("ownerReferences") or []
    return next((r for r in refs if r.get("controller")), None)


def _versioned(obj: KubeObject) -> bool:
    if obj.get("kind") in VERSIONED_KINDS:
        return True
    ref = _controller(obj)
    return ref is not None and ref.get("kind") in VERSIONED_KINDS


def pod_version(pod: KubeObject) -> str:
    """The revision key ``pod`` is counted under (see the module doc)."""
    if not _versioned(pod):
        return VERSION_IGNORED
    pod_labels = labels(pod)
    if POD_TEMPLATE_HASH_LABEL in pod_labels:
        return str(pod_labels[POD_TEMPLATE_HASH_LABEL])
    if REVISION_HASH_LABEL in pod_labels:
        return str(pod_labels[REVISION_HASH_LABEL]).rsplit("-", 1)[-1]
    return VERSION_IGNORED


def _template_without_hash(template: Mapping[str, Any] | None) -> dict[str, Any]:
    out = dict(template or {})
    meta = dict(out.get("metadata") or {})
    kept = {k: v for k, v in (meta.get("labels") or {}).items() if k != POD_TEMPLATE_HASH_LABEL}
    meta["labels"] = kept or None
    out["metadata"] = {k: v for k, v in meta.items() if v}
    return out


def workload_version(kind: str, workload: KubeObject, replicasets: Iterable[KubeObject] = ()) -> str | None:
    """The latest revision of the target ``workload`` of ``kind`` (see the module doc);
    ``replicasets`` are the namespace's ReplicaSets (read for a Deployment). ``None``: a
    Deployment whose current template has no ReplicaSet yet."""
    if not _versioned({**workload, "kind": kind}):
        return VERSION_IGNORED
    if kind == "ReplicaSet":
        return str(labels(workload).get(POD_TEMPLATE_HASH_LABEL) or "")
    if kind != "Deployment":
        return VERSION_IGNORED
    uid = (workload.get("metadata") or {}).get("uid")
    template = _template_without_hash((workload.get("spec") or {}).get("template"))
    for rs in replicasets:
        owner = _controller(rs)
        if owner is None or owner.get("uid") != uid or (rs.get("metadata") or {}).get("deletionTimestamp"):
            continue
        if _template_without_hash((rs.get("spec") or {}).get("template")) == template:
            return str(labels(rs).get(POD_TEMPLATE_HASH_LABEL) or "")
    return None


def initial_statuses(subsets: Sequence[SubsetView], workload_replicas: int) -> list[SubsetStatusView]:
    """A revision's first subset statuses, from the spec (see the module doc). Raises
    :class:`kruise.workloads.intorpercent.IntOrPercentError` on a bad ``maxReplicas``."""
    out: list[SubsetStatusView] = []
    for subset in subsets:
        cap = max_replicas(subset, workload_replicas)
        out.append(
            {"name": subset.get("name", ""), "replicas": 0, "missingReplicas": -1 if cap is None else cap}
        )
    return out


def pods_by_version(pods: Iterable[KubeObject]) -> dict[str, list[KubeObject]]:
    """Revision key (:func:`pod_version`) -> its pods, in the given order."""
    out: dict[str, list[KubeObject]] = {}
    for pod in pods:
        out.setdefault(pod_version(pod), []).append(pod)
    return out


def _counts_something(statuses: Sequence[SubsetStatusView]) -> bool:
    return any(s.get("replicas") or s.get("creatingPods") or s.get("deletingPods") for s in statuses)


def next_versioned_statuses(
    ws_name: str,
    subsets: Sequence[SubsetView],
    old: Mapping[str, Sequence[SubsetStatusView]],
    pods: Sequence[KubeObject],
    workload_replicas: int,
    now: datetime,
) -> dict[str, list[SubsetStatusView]]:
    """The controller's whole ``status.versionedSubsetStatuses`` over the active ``pods`` (see
    the module doc); ``old`` is the current map."""
    out: dict[str, list[SubsetStatusView]] = {}
    for version, version_pods in pods_by_version(pods).items():
        out[version] = next_statuses(
            ws_name, subsets, old.get(version) or [], version_pods, workload_replicas, now
        )
    for version, previous in old.items():
        if version in out:
            continue
        statuses = next_statuses(ws_name, subsets, previous, [], workload_replicas, now)
        if _counts_something(statuses):
            out[version] = statuses
    return out
