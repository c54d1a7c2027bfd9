"""The subset workloads a UnitedDeployment wants, and what to create, update and delete (pure).

Mirrors upstream's ``ApplySubsetTemplate`` (CloneSet and Advanced StatefulSet adapters; what
differs per kind is in :mod:`.kinds`), ``calcNextPartitions`` and
``manageSubsetProvision``/``manageSubsets`` (OpenKruise v1.8, ``pkg/controller/uniteddeployment``):

- one workload per topology subset, ``generateName`` ``<ud>-<subset>-`` (``<ud>-`` when that is
  not a valid prefix), labelled with the template's labels, the selector's ``matchLabels``,
  ``apps.kruise.io/subset-name`` and ``apps.kruise.io/controller-revision-hash``, annotated with
  the template's annotations and ``apps.kruise.io/subset-patch`` (the subset's ``patch`` as JSON),
  controlled by the UnitedDeployment;
- its spec is the template's, with the selector narrowed to the subset label, ``replicas`` and
  ``updateStrategy.partition`` from the allocation, the pod template labelled with the subset and
  revision, the subset's ``nodeSelectorTerm.matchExpressions`` appended to every required
  node-affinity term and its tolerations appended, then the subset's ``patch`` applied
  (:func:`~.podpatch.patch_pod_template`, a strategic merge patch);
- a workload is updated when its revision label, replicas, partition or patch annotation differ;
  duplicates of a subset (all but the oldest) and workloads of subsets no longer in the topology
  are deleted.

The revision is the name of the UnitedDeployment's update ControllerRevision (:mod:`.revision`).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kruise.workloads.admission.metavalidation import name_is_dns_subdomain
from kruise.workloads.api.uniteddeployment import (
    SUBSET_NAME_LABEL,
    SUBSET_PATCH_ANNOTATION,
    UnitedDeploymentSpec,
)
from kruise.workloads.objects import (
    KubeObject,
    labels,
    mapping,
    metadata,
    name,
    namespace,
    sequence,
    spec,
    uid,
)
from kruise.workloads.uniteddeployment.kinds import REVISION_LABEL, SubsetKind
from kruise.workloads.uniteddeployment.podpatch import patch_pod_template
from kruise.workloads.uniteddeployment.revision import UNITEDDEPLOYMENT_KIND

__all__ = [
    "REVISION_LABEL",
    "SubsetPlan",
    "classify",
    "next_partitions",
    "owner_reference",
    "plan_subsets",
    "subset_patch",
    "subset_prefix",
    "subset_workload",
]


def subset_prefix(ud_name: str, subset_name: str) -> str:
    """``getSubsetPrefix``: ``<ud>-<subset>-``, or ``<ud>-`` when that is no valid name prefix."""
    prefix = f"{ud_name}-{subset_name}-"
    return prefix if not name_is_dns_subdomain(prefix, True) else f"{ud_name}-"


def next_partitions(ud_spec: UnitedDeploymentSpec, replicas: Mapping[str, int]) -> dict[str, int]:
    """``calcNextPartitions``: the Manual partition of each subset, at most its replicas (0 unset)."""
    strategy = ud_spec.update_strategy
    manual = strategy.manual_update if strategy is not None and strategy.type == "Manual" else None
    partitions = (manual.partitions if manual is not None else None) or {}
    out: dict[str, int] = {}
    for subset in (ud_spec.topology.subsets or []) if ud_spec.topology else []:
        value = partitions.get(subset.name, 0)
        if subset.name in replicas and value > replicas[subset.name]:
            value = replicas[subset.name]
        out[subset.name] = value
    return out


def subset_patch(ud: KubeObject, subset_name: str) -> str:
    """The subset's ``patch`` as compact JSON ("" when it has none), as the annotation records it."""
    for subset in sequence(mapping(spec(ud).get("topology")).get("subsets")):
        if mapping(subset).get("name") == subset_name:
            patch = mapping(subset).get("patch")
            return "" if patch is None else json.dumps(patch, separators=(",", ":"))
    return ""


def _attach_scheduling(pod_spec: dict[str, Any], subset: Mapping[str, Any]) -> None:
    """``attachNodeAffinity`` and ``attachTolerations``."""
    expressions = sequence(mapping(subset.get("nodeSelectorTerm")).get("matchExpressions"))
    if expressions:
        affinity = pod_spec.setdefault("affinity", {})
        node = affinity.setdefault("nodeAffinity", {})
        required = node.setdefault("requiredDuringSchedulingIgnoredDuringExecution", {})
        terms = required.get("nodeSelectorTerms") or [{}]
        required["nodeSelectorTerms"] = [
            {**term, "matchExpressions": [*sequence(term.get("matchExpressions")), *expressions]}
            for term in terms
        ]
    tolerations = subset.get("tolerations")
    if tolerations is not None:
        pod_spec["tolerations"] = [*sequence(pod_spec.get("tolerations")), *sequence(tolerations)]


def owner_reference(ud: KubeObject) -> dict[str, Any]:
    """The controller ``ownerReference`` to ``ud`` its subset workloads carry."""
    return UNITEDDEPLOYMENT_KIND.reference(ud)


def subset_workload(
    kind: SubsetKind,
    ud: KubeObject,
    subset_name: str,
    revision: str,
    replicas: int,
    partition: int,
    base: KubeObject | None = None,
) -> dict[str, Any]:
    """The CloneSet of ``subset_name`` (``ApplySubsetTemplate``), built on ``base`` (the stored
    one, for an update: its name, resourceVersion and other metadata are kept; labels and
    annotations are merged) or new. Raises ``KeyError`` when the topology has no such subset."""
    subset = next(
        (
            mapping(s)
            for s in sequence(mapping(spec(ud).get("topology")).get("subsets"))
            if mapping(s).get("name") == subset_name
        ),
        None,
    )
    if subset is None:
        raise KeyError(f"fail to find subset config {subset_name}")
    template = mapping(mapping(spec(ud).get("template")).get(kind.template))
    selector = copy.deepcopy(dict(mapping(spec(ud).get("selector"))))
    out: dict[str, Any] = (
        copy.deepcopy(dict(base))
        if base is not None
        else {"apiVersion": kind.api_version, "kind": kind.resource.kind}
    )
    meta = dict(mapping(out.get("metadata")))
    meta["namespace"] = namespace(ud)
    meta["labels"] = {
        **labels(out),
        **mapping(mapping(template.get("metadata")).get("labels")),
        **mapping(selector.get("matchLabels")),
        REVISION_LABEL: revision,
        SUBSET_NAME_LABEL: subset_name,
    }
    meta["annotations"] = {
        **mapping(meta.get("annotations")),
        **mapping(mapping(template.get("metadata")).get("annotations")),
        SUBSET_PATCH_ANNOTATION: subset_patch(ud, subset_name),
    }
    meta["generateName"] = subset_prefix(name(ud), subset_name)
    owner = owner_reference(ud)
    others = [r for r in sequence(meta.get("ownerReferences")) if mapping(r).get("uid") != uid(ud)]
    meta["ownerReferences"] = [*others, owner]
    out["metadata"] = meta
    workload = copy.deepcopy(dict(mapping(template.get("spec"))))
    selector["matchLabels"] = {**mapping(selector.get("matchLabels")), SUBSET_NAME_LABEL: subset_name}
    workload["selector"] = selector
    workload["replicas"] = replicas
    kind.set_partition(workload, partition)
    pod_template = dict(mapping(workload.get("template")))
    pod_meta = dict(mapping(pod_template.get("metadata")))
    pod_meta["labels"] = {
        **mapping(pod_meta.get("labels")),
        SUBSET_NAME_LABEL: subset_name,
        REVISION_LABEL: revision,
    }
    pod_template["metadata"] = pod_meta
    pod_spec = dict(mapping(pod_template.get("spec")))
    _attach_scheduling(pod_spec, subset)
    pod_template["spec"] = pod_spec
    patch = subset.get("patch")
    workload["template"] = (
        patch_pod_template(pod_template, patch) if isinstance(patch, Mapping) else pod_template
    )
    out["spec"] = workload
    return out


@dataclass(frozen=True)
class SubsetPlan:
    """What the controller writes this round.

    Attributes:
        workloads: the kept workload of each existing subset, by subset name.
        create: subsets without a workload, in topology order.
        update: subsets whose workload differs in revision, replicas, partition or patch.
        delete: duplicate workloads and those of subsets no longer in the topology.
    """

    workloads: dict[str, KubeObject] = field(default_factory=dict)
    create: tuple[str, ...] = ()
    update: tuple[str, ...] = ()
    delete: tuple[KubeObject, ...] = ()


def _age(workload: KubeObject) -> tuple[str, str]:
    return (str(metadata(workload).get("creationTimestamp") or ""), name(workload))


def classify(ud: KubeObject, owned: Sequence[KubeObject]) -> tuple[dict[str, KubeObject], list[KubeObject]]:
    """``(kept, surplus)``: the oldest workload of each topology subset, by subset name, and the
    rest (duplicates, workloads of subsets no longer in the topology). Workloads without a
    subset label are in neither (upstream cannot classify them either)."""
    wanted = {str(mapping(s).get("name")) for s in sequence(mapping(spec(ud).get("topology")).get("subsets"))}
    by_subset: dict[str, list[KubeObject]] = {}
    for workload in sorted(owned, key=_age):
        subset_name = labels(workload).get(SUBSET_NAME_LABEL)
        if subset_name:
            by_subset.setdefault(subset_name, []).append(workload)
    surplus = [w for ws in by_subset.values() for w in ws[1:]]
    surplus += [ws[0] for n, ws in by_subset.items() if n not in wanted]
    return {n: ws[0] for n, ws in by_subset.items() if n in wanted}, surplus


def plan_subsets(
    ud: KubeObject,
    owned: Sequence[KubeObject],
    replicas: Mapping[str, int],
    partitions: Mapping[str, int],
    revision: str,
    partition_of: Callable[[KubeObject], int],
    stale: Callable[[str, KubeObject], bool] | None = None,
) -> SubsetPlan:
    """Compare the owned workloads with the topology (see the module doc and :func:`classify`);
    ``partition_of`` reads a stored workload's partition (:attr:`.kinds.SubsetKind.read_partition`);
    ``stale(subset, workload)`` marks one for update for another reason (reservation mode's
    raised ``maxUnavailable`` not written yet)."""
    kept, surplus = classify(ud, owned)
    wanted = [str(mapping(s).get("name")) for s in sequence(mapping(spec(ud).get("topology")).get("subsets"))]
    update = []
    for subset_name in wanted:
        current = kept.get(subset_name)
        if current is None:
            continue
        if (
            labels(current).get(REVISION_LABEL) != revision
            or spec(current).get("replicas") != replicas.get(subset_name, 0)
            or partition_of(current) != partitions.get(subset_name, 0)
            or mapping(metadata(current).get("annotations")).get(SUBSET_PATCH_ANNOTATION)
            != subset_patch(ud, subset_name)
            or (stale is not None and stale(subset_name, current))
        ):
            update.append(subset_name)
    create = tuple(n for n in wanted if n not in kept)
    return SubsetPlan(workloads=kept, create=create, update=tuple(update), delete=tuple(surplus))
