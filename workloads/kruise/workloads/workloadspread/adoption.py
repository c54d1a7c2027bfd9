"""Adopting pods created before their WorkloadSpread (pure), after upstream's
``pkg/controller/workloadspread`` (v1.8: ``groupPodBySubset``, ``getSuitableSubsetNameForPod``,
``matchesSubset``, ``patchFavoriteSubsetMetadataToPod``).

A pod of the target workload whose ``apps.kruise.io/matched-workloadspread`` does not name this
WorkloadSpread, and that is bound to a node, is given the subset that best fits that node:

1. **Fits** (:func:`fits`): no taint of the node (any effect) is left untolerated by the pod's
   tolerations plus the subset's; and, when the subset has a ``requiredNodeSelectorTerm``, the
   pod's required node-affinity terms with it ANDed into each (or the subset's term alone, when
   the pod has none) match the node (the pod's ``nodeSelector`` is not consulted, as upstream).
2. **Score** (:func:`score`): ``100 * preferred + 10 * patched + room``: ``preferred`` the sum of
   the weights of the subset's ``preferredNodeSelectorTerms`` the node matches, ``patched`` 1
   when the subset's ``patch`` is already in the pod (annotations aside), ``room`` 1 while the
   subset's remaining room (:func:`initial_room`) is positive.
3. The fitting subset with the highest score wins (the first in spec order on a tie); its room
   drops by one. No fitting subset: the pod stays unmatched (upstream's fake subset).

The adopted pod is merge-patched (:func:`adoption_patch`) with the matched annotation (no uid)
and, unless the WorkloadSpread is annotated :data:`IGNORE_PATCH_EXISTING_PODS`
``"true"`` (any case), the labels and annotations of the subset's ``patch.metadata``.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from typing import Any

from kruise.workloads.api.workloadspread import MATCHED_ANNOTATION, SubsetView
from kruise.workloads.nodepredicates import NO_EXECUTE, NO_SCHEDULE, term_matches, untolerated_taints
from kruise.workloads.objects import KubeObject, mapping, sequence
from kruise.workloads.uniteddeployment.podpatch import patch_pod_template
from kruise.workloads.workloadspread.subsets import Matched, and_required_term, matched_of, max_replicas

__all__ = [
    "IGNORE_PATCH_EXISTING_PODS",
    "UNCAPPED_ROOM",
    "adopt",
    "adoption_patch",
    "fits",
    "initial_room",
    "score",
]

IGNORE_PATCH_EXISTING_PODS = "workloadspread.kruise.io/ignore-patch-existing-pods-metadata"
"""WorkloadSpread annotation: ``"true"`` adopts pods without the subset's patch metadata."""
UNCAPPED_ROOM = 2**31 - 1
"""An uncapped subset's room (upstream's ``math.MaxInt32``)."""
_PREFER_NO_SCHEDULE = "PreferNoSchedule"


def initial_room(
    ws_name: str, subsets: Sequence[SubsetView], pods: Sequence[KubeObject], workload_replicas: int
) -> dict[str, int]:
    """Subset name -> its cap (percent of ``workload_replicas`` rounded up; uncapped
    :data:`UNCAPPED_ROOM`) minus the ``pods`` already matched to it by this WorkloadSpread."""
    room: dict[str, int] = {}
    for subset in subsets:
        cap = max_replicas(subset, workload_replicas)
        room[str(subset.get("name", ""))] = UNCAPPED_ROOM if cap is None else cap
    for pod in pods:
        matched = matched_of(pod)
        if matched is not None and matched.name == ws_name and matched.subset in room:
            room[matched.subset] -= 1
    return room


def fits(pod: KubeObject, node: KubeObject, subset: SubsetView) -> bool:
    """Step 1 of the module doc: the node's taints tolerated, the subset's required term met."""
    pod_spec = mapping(pod.get("spec"))
    tolerations = [*sequence(pod_spec.get("tolerations")), *(subset.get("tolerations") or [])]
    taints = sequence(mapping(node.get("spec")).get("taints"))
    if untolerated_taints(taints, tolerations, (NO_SCHEDULE, NO_EXECUTE, _PREFER_NO_SCHEDULE)):
        return False
    required = subset.get("requiredNodeSelectorTerm")
    if required is None:
        return True
    affinity = mapping(mapping(pod_spec.get("affinity")).get("nodeAffinity"))
    own = mapping(affinity.get("requiredDuringSchedulingIgnoredDuringExecution")).get("nodeSelectorTerms")
    return any(term_matches(mapping(t), node) for t in and_required_term(sequence(own), mapping(required)))


def _patched_already(pod: KubeObject, patch: Any) -> bool:
    patched = patch_pod_template(copy.deepcopy(dict(pod)), patch)
    patched.setdefault("metadata", {})
    patched["metadata"]["annotations"] = mapping(pod.get("metadata")).get("annotations")
    if patched["metadata"]["annotations"] is None:
        del patched["metadata"]["annotations"]
    return bool(patched == dict(pod))


def score(pod: KubeObject, node: KubeObject, subset: SubsetView, room: int) -> int:
    """Step 2 of the module doc (for a subset the pod :func:`fits`)."""
    preferred = sum(
        int(term.get("weight") or 0)
        for term in subset.get("preferredNodeSelectorTerms") or []
        if term_matches(mapping(term.get("preference")), node)
    )
    patched = 1 if subset.get("patch") and _patched_already(pod, subset["patch"]) else 0
    return preferred * 100 + patched * 10 + (1 if room > 0 else 0)


def adopt(
    pod: KubeObject, node: KubeObject, subsets: Sequence[SubsetView], room: dict[str, int]
) -> SubsetView | None:
    """The subset ``pod`` (bound to ``node``) is adopted into (step 3), its ``room`` entry
    decremented in place; ``None`` when no subset fits."""
    best: SubsetView | None = None
    best_score = -math.inf
    for subset in subsets:
        if not fits(pod, node, subset):
            continue
        value = score(pod, node, subset, room.get(str(subset.get("name", "")), 0))
        if value > best_score:
            best, best_score = subset, value
    if best is not None:
        room[str(best.get("name", ""))] = room.get(str(best.get("name", "")), 0) - 1
    return best


def adoption_patch(ws: KubeObject, subset: SubsetView) -> dict[str, Any]:
    """The merge patch marking a pod adopted into ``subset`` (see the module doc)."""
    metadata: dict[str, Any] = {}
    ignore = str(mapping(mapping(ws.get("metadata")).get("annotations")).get(IGNORE_PATCH_EXISTING_PODS, ""))
    patch = mapping(subset.get("patch"))
    if patch and ignore.lower() != "true":
        for field in ("labels", "annotations"):
            values = mapping(mapping(patch.get("metadata")).get(field))
            if values:
                metadata[field] = copy.deepcopy(dict(values))
    ws_name = str(mapping(ws.get("metadata")).get("name", ""))
    metadata.setdefault("annotations", {})[MATCHED_ANNOTATION] = Matched(
        ws_name, str(subset.get("name", ""))
    ).encode()
    return {"metadata": metadata}
