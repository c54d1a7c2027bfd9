"""WorkloadSpread's pure decisions, after upstream's ``pkg/util/workloadspread`` and
``pkg/controller/workloadspread`` (v1.8).

- **Admission** (:func:`record_creation`): a new pod takes the first subset, in status order,
  whose ``Schedulable`` condition is not ``False`` and that has room (``missingReplicas > 0`` or
  ``-1``, the uncapped value); in a capped subset its name (or a generated uid when it has none
  yet) goes into that subset's ``creatingPods`` and ``missingReplicas`` drops by one; an uncapped
  subset records nothing (as upstream). A pod already recorded in some subset's
  ``creatingPods``/``deletingPods`` changes nothing. The statuses are those of the pod's revision
  (:mod:`.versions`).
- **Deletion** (:func:`deleting_subset`, :func:`record_deletion`): an active pod with a
  controller whose ``apps.kruise.io/matched-workloadspread`` annotation parses is recorded in its
  subset's ``deletingPods`` (pod name -> time) when it is deleted or evicted; a non-negative
  ``missingReplicas`` grows by one (so the workload's replacement is admitted into the subset
  being vacated). A pod already recorded, an uncapped subset (``missingReplicas`` ``-1``) or an
  unknown subset changes nothing. A DELETE whose pod, read fresh, is already being deleted, gone,
  or another pod of the same name changes nothing either (:func:`deletion_under_way`).
- **Injection** (:func:`inject_into_pod`): the subset's tolerations are appended, its preferred
  terms appended to the pod's preferred node affinity, its required term becomes the pod's only
  required term (or is ANDed into every existing term), then ``patch`` is applied as a strategic
  merge patch and the ``apps.kruise.io/matched-workloadspread`` annotation written.
- **Accounting** (:func:`subset_status`): ``replicas`` counts the subset's active pods,
  ``missingReplicas`` is ``maxReplicas`` (percent of the workload's replicas, rounded up) minus
  those pods and the not-yet-seen creations, plus the not-yet-gone deletions (``-1`` when
  uncapped); ``creatingPods`` entries are dropped once the pod is seen (by name, or by the
  ``uid`` its annotation carries when it had no name at admission) or after
  :data:`CREATE_POD_TIMEOUT`, ``deletingPods`` entries once the pod is no longer active (gone,
  or seen terminating: it no longer counts) or after :data:`DELETE_POD_TIMEOUT`; a kept deletion
  gives its room back to ``missingReplicas``.
- **Deletion cost** (:func:`deletion_costs`): subset ``i`` of ``n`` gives its pods
  ``100 * (n - i)``; the pods over a capped subset's ``maxReplicas`` (the ones that sort first as
  scale-in victims) get ``-100 * (i + 1)``, and the pods matched to a subset since removed from
  the spec (upstream's fake subset) ``-100 * (n + 1)``. So scale-in removes those orphans, pods
  over a cap and later subsets' pods first. For an old revision's pods ``i`` counts from the last
  subset (``reverse``), so its first subsets' pods go first.
"""

from __future__ import annotations

import copy
import functools
import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from kruise.workloads.api.workloadspread import (
    MATCHED_ANNOTATION,
    SUBSET_SCHEDULABLE,
    SubsetStatusView,
    SubsetView,
)
from kruise.workloads.intorpercent import scaled_value
from kruise.workloads.objects import KubeObject
from kruise.workloads.pods import compare_active_pods, is_active
from kruise.workloads.uniteddeployment.podpatch import patch_pod_template

__all__ = [
    "CREATE_POD_TIMEOUT",
    "DELETE_POD_TIMEOUT",
    "DELETION_COST_ANNOTATION",
    "Matched",
    "Recorded",
    "and_required_term",
    "deleting_subset",
    "deletion_costs",
    "deletion_under_way",
    "inject_into_pod",
    "matched_of",
    "max_replicas",
    "next_statuses",
    "orphaned_pods",
    "pods_by_subset",
    "record_creation",
    "record_deletion",
    "subset_status",
]

DELETION_COST_ANNOTATION = "controller.kubernetes.io/pod-deletion-cost"
"""Pod annotation read by ReplicaSet/CloneSet scale-in: lower cost goes first."""
DELETION_COST_POSITIVE = 100
DELETION_COST_NEGATIVE = -100
CREATE_POD_TIMEOUT = timedelta(seconds=30)
"""How long a ``creatingPods`` entry waits for the controller to see its pod."""
DELETE_POD_TIMEOUT = timedelta(seconds=15)
"""How long a ``deletingPods`` entry waits for its pod to go."""


@dataclass(frozen=True)
class Matched:
    """The parsed ``apps.kruise.io/matched-workloadspread`` value."""

    name: str
    subset: str
    uid: str = ""

    def encode(self) -> str:
        """The annotation text: ``{"name":..,"subset":..}`` plus ``"uid"`` when set."""
        value = {"name": self.name, "subset": self.subset}
        if self.uid:
            value["uid"] = self.uid
        return json.dumps(value, separators=(",", ":"))


def matched_of(pod: KubeObject) -> Matched | None:
    """The pod's matched WorkloadSpread and subset, or ``None`` (absent or unparsable)."""
    text = ((pod.get("metadata") or {}).get("annotations") or {}).get(MATCHED_ANNOTATION)
    if not text:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    return Matched(str(value.get("name", "")), str(value.get("subset", "")), str(value.get("uid", "")))


@dataclass(frozen=True)
class Recorded:
    """The outcome of an admission step: the new ``subsetStatuses`` (``None``: nothing to write),
    the chosen subset name (``None``: no subset has room) and the generated uid (``""`` if the
    pod had a name)."""

    statuses: list[SubsetStatusView] | None
    subset: str | None
    uid: str = ""


def _stamp(now: datetime) -> str:
    return now.strftime("%Y-%m-%dT%H:%M:%SZ")


def _recorded_in(statuses: Sequence[SubsetStatusView], pod_name: str) -> SubsetStatusView | None:
    for status in statuses:
        if pod_name in (status.get("creatingPods") or {}) or pod_name in (status.get("deletingPods") or {}):
            return status
    return None


def _schedulable(status: SubsetStatusView) -> bool:
    return not any(
        c.get("type") == SUBSET_SCHEDULABLE and c.get("status") == "False"
        for c in status.get("conditions") or []
    )


def record_creation(
    statuses: Sequence[SubsetStatusView], pod_name: str, now: datetime, new_uid: str | None = None
) -> Recorded:
    """Admit a pod named ``pod_name`` (``""`` for a generateName pod) into the first subset with
    room (see the module doc). ``new_uid`` is the id recorded for a nameless pod (a fresh uuid4
    when not given). The input is not modified."""
    if pod_name:
        seen = _recorded_in(statuses, pod_name)
        if seen is not None:
            return Recorded(None, seen.get("name"))
    out: list[SubsetStatusView] = copy.deepcopy(list(statuses))
    for status in out:
        missing = status.get("missingReplicas", 0)
        if not _schedulable(status) or not (missing > 0 or missing == -1):
            continue
        if missing == -1:
            return Recorded(None, status.get("name"))  # uncapped: upstream records nothing
        uid = "" if pod_name else (new_uid or str(uuid.uuid4()))
        status.setdefault("creatingPods", {})[pod_name or uid] = _stamp(now)
        status["missingReplicas"] = missing - 1
        return Recorded(out, status.get("name"), uid)
    return Recorded(None, None)


def record_deletion(
    statuses: Sequence[SubsetStatusView], pod_name: str, subset: str, now: datetime
) -> Recorded:
    """Record a deleted or evicted pod of ``subset`` in its ``deletingPods`` (see the module doc);
    ``statuses`` ``None`` in the answer when already recorded or the subset is unknown."""
    if _recorded_in(statuses, pod_name) is not None:
        return Recorded(None, None)
    out: list[SubsetStatusView] = copy.deepcopy(list(statuses))
    for status in out:
        if status.get("name") != subset:
            continue
        if status.get("missingReplicas", 0) == -1:
            return Recorded(None, subset)  # uncapped: upstream records nothing
        status.setdefault("deletingPods", {})[pod_name] = _stamp(now)
        missing = status.get("missingReplicas", 0)
        if missing >= 0:
            status["missingReplicas"] = missing + 1
        return Recorded(out, subset)
    return Recorded(None, None)


def deleting_subset(pod: KubeObject) -> Matched | None:
    """The WorkloadSpread and subset whose ``deletingPods`` a deleted or evicted ``pod`` goes
    into, or ``None``: upstream's ``HandlePodDeletion`` skips pods without the matched annotation
    (or with one that does not parse), pods not active (being deleted, Succeeded, Failed) and pods
    with no controller."""
    matched = matched_of(pod)
    owners = (pod.get("metadata") or {}).get("ownerReferences") or []
    controlled = any(r.get("controller") for r in owners)
    if matched is None or not matched.name or not is_active(pod) or not controlled:
        return None
    return matched


def deletion_under_way(admitted: KubeObject, current: KubeObject | None) -> bool:
    """Whether the DELETE of ``admitted`` (the request's old object) is one the API server already
    carried out, so recording it again would give its room back twice: ``current`` (the pod read
    fresh) is gone, another pod of the same name (another ``uid``), or no longer active.

    The API server validates one pod DELETE more than once: a pod whose grace period is zero is
    validated in the update that sets its ``deletionTimestamp`` and again in the removal that
    follows, and the second call carries the object as it was before the first (no
    ``deletionTimestamp``). By then the controller may have seen the pod terminating and dropped
    its ``deletingPods`` entry (it no longer counts); recording it again would leave the subset
    one pod of room too many until the controller's next round, and a replacement admitted in
    between over-fills it. Upstream's handler records on every call; this keeps its outcome for
    the first call only."""
    if current is None:
        return True
    uid = (admitted.get("metadata") or {}).get("uid")
    if uid and (current.get("metadata") or {}).get("uid") != uid:
        return True
    return not is_active(current)


def and_required_term(terms: Sequence[Any], required: Mapping[str, Any]) -> list[Any]:
    """A pod's required node selector ``terms`` with a subset's ``required`` term ANDed into each
    (its expressions and fields appended), or ``[required]`` when the pod has none (copies)."""
    if not terms:
        return [copy.deepcopy(dict(required))]
    out = copy.deepcopy(list(terms))
    for term in out:
        for field in ("matchExpressions", "matchFields"):
            extra = required.get(field) or []
            if extra:
                term[field] = list(term.get(field) or []) + copy.deepcopy(list(extra))
    return out


def inject_into_pod(pod: KubeObject, subset: SubsetView, ws_name: str, uid: str = "") -> dict[str, Any]:
    """A copy of ``pod`` with ``subset``'s scheduling constraints, patch and the matched
    annotation (see the module doc). The patch is a strategic merge patch of the pod; when it
    changes ``spec.priorityClassName``, ``spec.priority`` is dropped (as upstream) so the
    apiserver resolves it again from the new class."""
    out: dict[str, Any] = copy.deepcopy(dict(pod))
    spec = out.setdefault("spec", {})
    if subset.get("tolerations"):
        spec["tolerations"] = list(spec.get("tolerations") or []) + copy.deepcopy(subset["tolerations"])
    node_affinity = spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})
    preferred = subset.get("preferredNodeSelectorTerms")
    if preferred:
        key = "preferredDuringSchedulingIgnoredDuringExecution"
        node_affinity[key] = list(node_affinity.get(key) or []) + copy.deepcopy(preferred)
    required = subset.get("requiredNodeSelectorTerm")
    if required is not None:
        selector = node_affinity.setdefault("requiredDuringSchedulingIgnoredDuringExecution", {})
        selector["nodeSelectorTerms"] = and_required_term(selector.get("nodeSelectorTerms") or [], required)
    if subset.get("patch"):
        before = spec.get("priorityClassName")
        out = patch_pod_template(out, subset["patch"])
        patched = out.get("spec") or {}
        if patched.get("priorityClassName") != before:
            # the apiserver's Priority plugin already resolved ``priority`` from the old class and
            # refuses a mismatched pair; cleared, the plugin (re-run after the webhooks) sets it
            patched.pop("priority", None)
    metadata = out.setdefault("metadata", {})
    metadata.setdefault("annotations", {})[MATCHED_ANNOTATION] = Matched(
        ws_name, subset.get("name", ""), uid
    ).encode()
    return out


def max_replicas(subset: SubsetView, workload_replicas: int) -> int | None:
    """The subset's cap resolved against the workload's replicas (percent rounded up), ``None``
    when uncapped. Raises :class:`kruise.workloads.intorpercent.IntOrPercentError` on a bad value."""
    value = subset.get("maxReplicas")
    if value is None:
        return None
    return scaled_value(value, workload_replicas, round_up=True)


def _parse(stamp: str) -> datetime | None:
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None


def subset_status(
    subset: SubsetView,
    old: SubsetStatusView | None,
    pods: Sequence[KubeObject],
    workload_replicas: int,
    now: datetime,
) -> SubsetStatusView:
    """The controller's new status of ``subset``: ``pods`` are its active pods; ``old`` the
    current status entry (its conditions are kept). See the module doc for the rules."""
    cap = max_replicas(subset, workload_replicas)
    active_names = {str((p.get("metadata") or {}).get("name", "")) for p in pods}
    # a pod nameless at admission was recorded by the uid its annotation carries
    names = active_names | {m.uid for p in pods if (m := matched_of(p)) is not None and m.uid}
    creating: dict[str, str] = {}
    for name, stamp in ((old or {}).get("creatingPods") or {}).items():
        when = _parse(stamp)
        if name not in names and when is not None and now - when < CREATE_POD_TIMEOUT:
            creating[name] = stamp
    deleting: dict[str, str] = {}
    for name, stamp in ((old or {}).get("deletingPods") or {}).items():
        when = _parse(stamp)
        if name in active_names and when is not None and now - when < DELETE_POD_TIMEOUT:
            deleting[name] = stamp
    active = len(pods)
    missing = -1 if cap is None else max(cap - active - len(creating) + len(deleting), 0)
    out: SubsetStatusView = {"name": subset.get("name", ""), "replicas": active, "missingReplicas": missing}
    if creating:
        out["creatingPods"] = creating
    if deleting:
        out["deletingPods"] = deleting
    if old and old.get("conditions"):
        out["conditions"] = copy.deepcopy(old["conditions"])
    return out


def deletion_costs(
    subsets: Sequence[SubsetView],
    pods_by_subset: Mapping[str, Sequence[KubeObject]],
    workload_replicas: int,
    orphans: Sequence[KubeObject] = (),
    *,
    reverse: bool = False,
) -> dict[str, int]:
    """Pod name -> the ``pod-deletion-cost`` it should carry (see the module doc). Pods over a
    cap are chosen as ``kubecontroller.ActivePods`` orders scale-in victims (unscheduled, pending,
    not ready, ... first); ``orphans`` (:func:`orphaned_pods`) all get the lowest cost;
    ``reverse`` (an old revision's pods) numbers the subsets from the last."""
    total = len(subsets)
    costs: dict[str, int] = {
        str(p["metadata"]["name"]): DELETION_COST_NEGATIVE * (total + 1) for p in orphans
    }
    for position, subset in enumerate(subsets):
        index = total - position - 1 if reverse else position
        pods = list(pods_by_subset.get(subset.get("name", "")) or [])
        weight = total - index
        cap = max_replicas(subset, workload_replicas)
        over: list[KubeObject] = []
        if cap is not None and cap < len(pods):
            pods.sort(key=functools.cmp_to_key(compare_active_pods))
            over, pods = pods[: len(pods) - cap], pods[len(pods) - cap :]
        for pod in pods:
            costs[str(pod["metadata"]["name"])] = DELETION_COST_POSITIVE * weight
        for pod in over:
            costs[str(pod["metadata"]["name"])] = DELETION_COST_NEGATIVE * (index + 1)
    return costs


def orphaned_pods(
    ws_name: str, subsets: Sequence[SubsetView], pods: Sequence[KubeObject]
) -> list[KubeObject]:
    """The pods whose ``matched-workloadspread`` annotation names this WorkloadSpread and a subset
    no longer in its spec (upstream groups them under its fake subset)."""
    names = {s.get("name") for s in subsets}
    out = []
    for pod in pods:
        matched = matched_of(pod)
        if matched is not None and matched.name == ws_name and matched.subset not in names:
            out.append(pod)
    return out


def pods_by_subset(
    ws_name: str, subsets: Sequence[SubsetView], pods: Sequence[KubeObject]
) -> dict[str, list[KubeObject]]:
    """Subset name -> the active pods whose ``matched-workloadspread`` annotation names this
    WorkloadSpread and that subset (pods of unknown subsets or other WorkloadSpreads are left out).
    ``pods`` are the target workload's pods; the caller filters active ones."""
    out: dict[str, list[KubeObject]] = {str(s.get("name", "")): [] for s in subsets}
    for pod in pods:
        matched = matched_of(pod)
        if matched is not None and matched.name == ws_name and matched.subset in out:
            out[matched.subset].append(pod)
    return out


def next_statuses(
    ws_name: str,
    subsets: Sequence[SubsetView],
    old: Sequence[SubsetStatusView],
    pods: Sequence[KubeObject],
    workload_replicas: int,
    now: datetime,
) -> list[SubsetStatusView]:
    """The controller's whole ``status.subsetStatuses``, in spec order: :func:`subset_status` of
    each subset over its pods (:func:`pods_by_subset`), its previous entry matched by name."""
    by_name = {s.get("name"): s for s in old}
    grouped = pods_by_subset(ws_name, subsets, pods)
    return [
        subset_status(
            subset,
            by_name.get(subset.get("name")),
            grouped[str(subset.get("name", ""))],
            workload_replicas,
            now,
        )
        for subset in subsets
    ]
