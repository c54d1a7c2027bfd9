"""WorkloadSpread's steps of the pod webhooks (``mpod.kb.io``, ``vpod.kb.io``,
``vpodeviction.kb.io``) and their scope.

On a pod CREATE (:class:`WsPodMutator`), as upstream's ``pkg/util/workloadspread`` handler:

1. the pod's controller names the workload: a CloneSet (``apps.kruise.io``), a ReplicaSet
   (``apps``; the Deployment controlling that ReplicaSet when there is one, the ReplicaSet read
   from the informer, from the API server only when the informer has not seen it yet), a Job
   (``batch``) or a StatefulSet (``apps``/``apps.kruise.io``); when a WorkloadSpread of the
   namespace targets a custom kind, also the owners
   :meth:`~.customtargets.CustomTargets.owners` reads up through the white list
   (:mod:`.whitelist`);
2. the namespace's WorkloadSpread (not being deleted) whose ``targetRef`` has that group, kind
   and name (the first found): :func:`~.subsets.record_creation` picks the subset from the
   entries of the pod's revision in ``versionedSubsetStatuses`` (:func:`~.versions.pod_version`;
   started from the spec by :func:`~.versions.initial_statuses` when the revision has none) and
   the new entries are written to the status subresource with that copy's resourceVersion. As
   upstream's cached client and its ``GlobalCache`` of written WorkloadSpreads, the first try
   uses the newest copy at hand (the informer's, or the one this step last wrote:
   :func:`newest_copy`) without an API read; a conflict reads the WorkloadSpread fresh and tries
   again after upstream's ``retry.DefaultBackoff`` pause (:data:`BACKOFF`), up to :data:`RETRIES`
   times (upstream's ``RetryOnConflict``), so the resourceVersion guard still keeps concurrent
   creates (another replica, the controller) from over-placing a subset. Within one process the
   writes to one WorkloadSpread take turns (:class:`StatusWrites`): a burst of admissions for
   one workload's pods would otherwise conflict with each other. A WorkloadSpread of a single
   uncapped subset puts every pod there without reading or writing its status (as upstream);
3. the pod gets the subset's constraints, patch and ``apps.kruise.io/matched-workloadspread``
   (:func:`~.subsets.inject_into_pod`).

An inactive pod (terminal or being deleted) is passed over; no subset with room leaves the pod
unchanged. A failed status write refuses the pod (HTTP 500), as upstream's handler returns the
error. A WorkloadSpread whose ``targetFilter`` does not admit the pod
(:func:`~.targetfilter.admits`) is passed over.

:func:`pod_terms` scopes the pod webhook to the target workloads' pods (a Deployment's pods by its
ReplicaSets' ``<name>-`` prefix).

On a pod DELETE, and on a ``pods/eviction`` CREATE (the pod read fresh), neither a dry run
(:class:`WsPodValidator`, as upstream's ``workloadSpreadValidatingPod``, which runs before the
budget check): a pod :func:`~.subsets.deleting_subset` names (annotated, active, controlled) is
recorded in its subset's ``deletingPods`` (its revision's entries) by
:func:`~.subsets.record_deletion`, written as on CREATE (fresh read, resourceVersion, in turn
with the process's other writes, up to :data:`RETRIES` conflicts), so the workload's replacement
pod is admitted into the subset being vacated. A DELETE whose pod, read fresh, is already being
deleted or gone records nothing (:func:`~.subsets.deletion_under_way`: the API server validates
a zero-grace DELETE twice, the second time with the pod as it was before the first). The
request is then left to the next step; a WorkloadSpread gone changes nothing; a failed read or
write refuses the request (HTTP 400 and the error, as upstream's ``admission.Errored(400,
err)``). :func:`ws_validating_scope` sends ``vpod.kb.io`` only DELETEs of annotated pods
(:data:`WS_DELETED_POD`) and ``vpodeviction.kb.io`` only evictions in namespaces holding a
WorkloadSpread, so an outage of the manager does not hold other pods' deletions.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, cast

from kruise.core.errors import ApiError, ConflictError, KruiseError, NotFoundError
from kruise.core.expectations import resource_version_newer_or_equal
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import PODS, REPLICASETS
from kruise.core.runtime import CacheReader, controller_ref
from kruise.core.webhook import AdmissionRequest, AdmissionResponse
from kruise.core.webhook.configuration import MatchCondition
from kruise.workloads.api.workloadspread import (
    MATCHED_ANNOTATION,
    WORKLOADSPREADS,
    SubsetStatusView,
    TargetView,
    WorkloadSpreadView,
)
from kruise.workloads.intorpercent import IntOrPercentError
from kruise.workloads.objects import KubeObject, labels, mapping, name, namespace, spec
from kruise.workloads.pods import is_active
from kruise.workloads.podwebhook import PodMutationError, ValidatingScope
from kruise.workloads.selector import SelectorError
from kruise.workloads.sidecarset.scope import cel_literal
from kruise.workloads.workloadspread.customtargets import CustomTargets
from kruise.workloads.workloadspread.subsets import (
    Recorded,
    deleting_subset,
    deletion_under_way,
    inject_into_pod,
    record_creation,
    record_deletion,
)
from kruise.workloads.workloadspread.target import read_workload, target_replicas, workload_resource
from kruise.workloads.workloadspread.targetfilter import TargetFilterError, admits
from kruise.workloads.workloadspread.validation import BUILTIN_GROUP_KINDS, is_builtin_kind, same_target
from kruise.workloads.workloadspread.versions import initial_statuses, pod_version
from kruise.workloads.workloadspread.whitelist import group_of

__all__ = [
    "BACKOFF",
    "GATE",
    "RETRIES",
    "WS_DELETED_POD",
    "StatusWriteError",
    "StatusWrites",
    "WsPodMutator",
    "WsPodValidator",
    "newest_copy",
    "pod_terms",
    "target_of_pod",
    "ws_validating_scope",
]

log = logging.getLogger("kruise.workloadspread")
GATE = "WorkloadSpread"

RETRIES = 5
BACKOFF = (0.01, 5.0, 0.1)
"""Upstream's ``retry.DefaultBackoff`` between conflicting tries: the first pause 10 ms, each next
one 5 times longer, each up to 10% longer at random (10, 50, 250, 1,250 ms: 1.6 s at most)."""


def backoff(attempt: int) -> float:
    """Seconds to wait after conflicting try ``attempt`` (0-based), :data:`BACKOFF`."""
    first, factor, jitter = BACKOFF
    pause = first * factor**attempt
    return pause * (1 + jitter * random.random())


WS_DELETED_POD = MatchCondition(
    "ws-deleted-pod",
    "request.operation == 'DELETE' && has(oldObject.metadata.annotations) && "
    f"'{MATCHED_ANNOTATION}' in oldObject.metadata.annotations",
)
"""``vpod.kb.io``'s condition for this step: deletions of pods a WorkloadSpread placed."""


class StatusWriteError(KruiseError):
    """The WorkloadSpread's status could not be written (the pod request is refused)."""


_OWNER_KINDS = {"CloneSet": "apps.kruise.io", "ReplicaSet": "apps", "Job": "batch", "StatefulSet": ""}


def target_of_pod(pod: KubeObject, replicaset: KubeObject | None) -> TargetView | None:
    """The workload a pod belongs to (see the module doc); ``replicaset`` is the pod's controlling
    ReplicaSet when it has one (its own controller, a Deployment, is then the target)."""
    ref = controller_ref(pod)
    if ref is None:
        return None
    kind, api_version = str(ref.get("kind") or ""), str(ref.get("apiVersion") or "")
    if kind not in _OWNER_KINDS:
        return None
    group = group_of(api_version)
    if kind == "StatefulSet" and group not in ("apps", "apps.kruise.io"):
        return None
    if kind != "StatefulSet" and group != _OWNER_KINDS[kind]:
        return None
    if kind == "ReplicaSet" and replicaset is not None:
        owner = controller_ref(replicaset)
        if (
            owner is not None
            and owner.get("kind") == "Deployment"
            and group_of(str(owner.get("apiVersion"))) == "apps"
        ):
            return {
                "apiVersion": str(owner.get("apiVersion")),
                "kind": "Deployment",
                "name": str(owner.get("name")),
            }
    return {"apiVersion": api_version, "kind": kind, "name": str(ref.get("name") or "")}


def pod_terms(workloadspreads: Iterable[KubeObject]) -> list[str]:
    """CEL terms over the pod being created, one per WorkloadSpread: a pod of its namespace whose
    controller is the target (a Deployment's: a ReplicaSet named ``<deployment>-...``; a custom
    white-listed kind's: any controller, its pods may be owned through sub-resources). A name CEL
    cannot quote safely is skipped (such a pod is not spread)."""
    terms: set[str] = set()
    for ws in workloadspreads:
        ref = mapping(spec(ws).get("targetRef"))
        kind = str(ref.get("kind") or "")
        target, where = cel_literal(str(ref.get("name") or "")), cel_literal(namespace(ws))
        if target in (None, "''") or where in (None, "''") or not kind:
            continue
        if kind == "Deployment":
            prefix = cel_literal(f"{ref.get('name')}-")
            match = f"r.kind == 'ReplicaSet' && r.name.startsWith({prefix})"
        elif not is_builtin_kind(kind):
            match = "true"  # a custom target's pods may be owned through its sub-resources
        else:
            match = f"r.kind == {cel_literal(kind)} && r.name == {target}"
        owned = (
            "has(object.metadata.ownerReferences) && object.metadata.ownerReferences.exists(r, "
            f"has(r.controller) && r.controller && {match})"
        )
        terms.add(f"(request.namespace == {where} && {owned})")
    return sorted(terms)


def _admits(ws: KubeObject, pod: KubeObject) -> bool:
    """The WorkloadSpread's ``targetFilter`` lets its webhook spread ``pod`` (a malformed selector:
    no, as upstream skips that WorkloadSpread)."""
    try:
        return admits(cast(WorkloadSpreadView, ws).get("spec", {}).get("targetFilter"), labels(pod))
    except SelectorError:
        return False


async def _initial(custom: CustomTargets, ws: WorkloadSpreadView) -> list[SubsetStatusView]:
    """A revision's first statuses (:func:`~.versions.initial_statuses`); the target's replicas
    are read from the API server only when a ``maxReplicas`` is a percent (upstream's
    ``getWorkloadReplicas``: 0 otherwise, or when the workload is gone; a custom target's by
    :meth:`~.customtargets.CustomTargets.target`).

    Raises:
        StatusWriteError: the read failed, a ``replicasPathList`` path is not an integer or a
            ``maxReplicas`` is malformed.
    """
    ws_spec = ws.get("spec") or {}
    subsets = ws_spec.get("subsets") or []
    replicas = 0
    try:
        if any(isinstance(s.get("maxReplicas"), str) for s in subsets):
            target = ws_spec.get("targetRef") or {}
            ns = namespace(cast(KubeObject, ws))
            res = workload_resource(target)
            if res is None:
                replicas = (await custom.target(target, ws_spec.get("targetFilter"), ns))[1]
            elif (workload := await read_workload(custom.kube, res, str(target.get("name")), ns)) is not None:
                replicas = target_replicas(res, workload, ws_spec.get("targetFilter"))
        return initial_statuses(subsets, replicas)
    except (ApiError, TargetFilterError, IntOrPercentError) as err:
        raise StatusWriteError(str(err)) from err


def newest_copy(cached: KubeObject | None, written: KubeObject | None) -> KubeObject | None:
    """The copy of one WorkloadSpread to try a status write with first: ``written`` (the object
    the last successful write returned) when it is the same object (uid) and its resourceVersion
    is newer than the informer's ``cached`` one (compared as integers, as
    :func:`~kruise.core.expectations.resource_version_newer_or_equal`), else ``cached``.
    ``None`` when neither is given."""
    if written is None or cached is None:
        return cached if cached is not None else written
    meta_c, meta_w = mapping(cached.get("metadata")), mapping(written.get("metadata"))
    if meta_c.get("uid") != meta_w.get("uid"):
        return cached
    rv_c, rv_w = str(meta_c.get("resourceVersion") or ""), str(meta_w.get("resourceVersion") or "")
    if resource_version_newer_or_equal(rv_c, rv_w):
        return cached
    return written


async def _record(
    custom: CustomTargets,
    ws_name: str,
    ns: str,
    version: str,
    decide: Callable[[Sequence[SubsetStatusView]], Recorded],
    first: KubeObject | None = None,
) -> tuple[WorkloadSpreadView, Recorded] | None:
    """``decide`` on the ``versionedSubsetStatuses`` entries of the pod's revision ``version``
    (:func:`_initial` when it has none yet) and write the new ones (when there are) with that
    copy's resourceVersion. The first try uses ``first`` when given (a cached copy), else reads
    fresh; a conflict reads fresh and tries again after :func:`backoff`, up to :data:`RETRIES`
    times (upstream's ``RetryOnConflict`` with ``retry.DefaultBackoff``). Returns the copy decided
    on (the written object when there was a write) and the decision; ``None``: the WorkloadSpread
    is gone.

    Raises:
        StatusWriteError: the write failed, or conflicted :data:`RETRIES` times.
    """
    kube = custom.kube
    ws = cast(WorkloadSpreadView | None, first)
    for attempt in range(RETRIES):
        if attempt:
            await asyncio.sleep(backoff(attempt - 1))
        if ws is None:
            try:
                ws = cast(WorkloadSpreadView, await kube.get(WORKLOADSPREADS, ws_name, ns))
            except NotFoundError:
                return None
            except ApiError as err:
                raise StatusWriteError(str(err)) from err
        status = ws.get("status") or {}
        versioned = dict(status.get("versionedSubsetStatuses") or {})
        recorded = decide(versioned.get(version) or await _initial(custom, ws))
        if recorded.statuses is not None:
            versioned[version] = recorded.statuses
            body = {**ws, "status": {**status, "versionedSubsetStatuses": versioned}}
            try:
                written = await kube.replace(
                    WORKLOADSPREADS, cast(dict[str, Any], body), subresource="status"
                )
            except ConflictError:
                ws = None
                continue
            except NotFoundError:
                return None
            except ApiError as err:
                raise StatusWriteError(str(err)) from err
            return cast(WorkloadSpreadView, written), recorded
        return ws, recorded
    raise StatusWriteError(f"update WorkloadSpread({ns}/{ws_name}) status: too many conflicts")


@dataclass
class _Turn:
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    users: int = 0


class StatusWrites:
    """The pod webhooks' status writes to WorkloadSpreads in this process, one WorkloadSpread's at
    a time (a scale-up or a burst of deletions sends one workload's pods together; written at
    once, all but one would conflict and retry). Keeps the object each WorkloadSpread's last
    write returned, the first copy a CREATE tries (:func:`newest_copy`). Shared by
    :class:`WsPodMutator` and :class:`WsPodValidator`; the per-WorkloadSpread locks go when no
    request waits on them."""

    def __init__(self, custom: CustomTargets) -> None:
        self.custom = custom
        self._turns: dict[tuple[str, str], _Turn] = {}
        self._written: dict[tuple[str, str], KubeObject] = {}

    @contextlib.asynccontextmanager
    async def _turn(self, key: tuple[str, str]) -> AsyncIterator[None]:
        turn = self._turns.setdefault(key, _Turn())
        turn.users += 1
        try:
            async with turn.lock:
                yield
        finally:
            turn.users -= 1
            if not turn.users:
                del self._turns[key]

    async def record(
        self,
        ws_name: str,
        ns: str,
        version: str,
        decide: Callable[[Sequence[SubsetStatusView]], Recorded],
        cached: KubeObject | None = None,
    ) -> tuple[WorkloadSpreadView, Recorded] | None:
        """:func:`_record` in this WorkloadSpread's turn, first trying ``cached`` or the copy the
        last write returned, whichever is newer (no ``cached``: a fresh read). Same returns and
        errors as :func:`_record`."""
        key = (ns, ws_name)
        async with self._turn(key):
            first = newest_copy(cached, self._written.get(key)) if cached is not None else None
            done = await _record(self.custom, ws_name, ns, version, decide, first=first)
            if done is None:
                self._written.pop(key, None)
            elif done[1].statuses is not None:
                self._written[key] = cast(KubeObject, done[0])
            return done


def ws_validating_scope(
    gates: Mapping[str, bool], workloadspreads: Iterable[KubeObject]
) -> ValidatingScope | None:
    """The validating pod webhooks :class:`WsPodValidator` needs (``None``: gate
    ``WorkloadSpread`` off): ``vpod.kb.io`` for DELETEs of pods carrying the matched annotation
    (:data:`WS_DELETED_POD`) and ``vpodeviction.kb.io`` in the namespaces of ``workloadspreads``
    (an eviction's object is not the pod)."""
    if not gates.get(GATE, True):
        return None
    return ValidatingScope(
        operations=("DELETE",),
        pod_conditions=(WS_DELETED_POD,),
        eviction_namespaces=frozenset(namespace(w) for w in workloadspreads),
    )


class WsPodMutator:
    """The WorkloadSpread step of the mutating pod webhook (see the module docstring)."""

    name = "workloadspread"

    def __init__(self, kube: KubeClient, cache: CacheReader, writes: StatusWrites) -> None:
        self.kube = kube
        self.cache = cache
        self.custom = writes.custom
        self.writes = writes

    async def _replicaset(self, pod: KubeObject) -> KubeObject | None:
        ref = controller_ref(pod)
        if ref is None or ref.get("kind") != "ReplicaSet":
            return None
        rs_name, ns = str(ref.get("name")), namespace(pod)
        cached = self.cache.get(REPLICASETS, f"{ns}/{rs_name}")
        return cached if cached is not None else await self.kube.get_or_none(REPLICASETS, rs_name, ns)

    async def mutate(self, pod: dict[str, Any], request: AdmissionRequest) -> bool:
        if not is_active(pod):
            return False
        ns = namespace(pod)
        spreads = [
            w
            for w in self.cache.list(WORKLOADSPREADS)
            if namespace(w) == ns and not (w.get("metadata") or {}).get("deletionTimestamp")
        ]
        if not spreads:
            return False
        target = target_of_pod(pod, await self._replicaset(pod))
        candidates = [target] if target is not None else []
        if any(
            not is_builtin_kind(str(mapping(spec(w).get("targetRef")).get("kind") or "")) for w in spreads
        ):
            candidates += await self.custom.owners(pod, BUILTIN_GROUP_KINDS)
        matched = next(
            (
                w
                for w in spreads
                if any(
                    same_target(cast(TargetView, mapping(spec(w).get("targetRef"))), t) for t in candidates
                )
                and _admits(w, pod)
            ),
            None,
        )
        if matched is None:
            return False
        subsets = cast(WorkloadSpreadView, matched).get("spec", {}).get("subsets") or []
        if len(subsets) == 1 and subsets[0].get("maxReplicas") is None:
            # upstream: a single uncapped subset takes every pod, no status kept
            ws, recorded = cast(WorkloadSpreadView, matched), Recorded(None, subsets[0].get("name"))
        else:
            pod_name = str((pod.get("metadata") or {}).get("name") or "")
            try:
                done = await self.writes.record(
                    name(matched),
                    ns,
                    pod_version(pod),
                    lambda s: record_creation(s, pod_name, datetime.now(UTC)),
                    cached=matched,
                )
            except StatusWriteError as err:
                raise PodMutationError(str(err)) from err
            if done is None:
                return False
            ws, recorded = done
            if recorded.subset is None:
                return False
        subset = next(
            (s for s in (ws.get("spec") or {}).get("subsets") or [] if s.get("name") == recorded.subset),
            None,
        )
        if subset is None:
            return False
        injected = inject_into_pod(pod, subset, name(cast(KubeObject, ws)), recorded.uid)
        pod.clear()
        pod.update(injected)
        return True


class WsPodValidator:
    """The WorkloadSpread step of the validating pod webhook (see the module docstring): records
    a deleted or evicted pod in its subset's ``deletingPods`` and lets the next step decide."""

    name = "workloadspread"

    def __init__(self, kube: KubeClient, writes: StatusWrites) -> None:
        self.kube = kube
        self.writes = writes

    async def _pod(self, req: AdmissionRequest) -> KubeObject | None:
        sub = req.raw.get("subResource") or ""
        if req.dry_run:
            return None
        if req.operation == "DELETE" and not sub:
            return req.old_object
        if req.operation == "CREATE" and sub == "eviction" and req.name and req.namespace:
            return await self.kube.get_or_none(PODS, req.name, req.namespace)
        return None

    async def validate(self, req: AdmissionRequest) -> AdmissionResponse | None:
        try:
            pod = await self._pod(req)
            matched = deleting_subset(pod) if pod is not None else None
            if pod is None or matched is None:
                return None
            pod_name = name(pod)
            ns = namespace(pod) or str(req.namespace or "")
            if req.operation == "DELETE" and deletion_under_way(
                pod, await self.kube.get_or_none(PODS, pod_name, ns)
            ):
                return None
            await self.writes.record(
                matched.name,
                ns,
                pod_version(pod),
                lambda s: record_deletion(s, pod_name, matched.subset, datetime.now(UTC)),
            )
        except KruiseError as err:
            log.info("pod %s/%s: WorkloadSpread deletion not recorded: %s", req.namespace, req.name, err)
            return AdmissionResponse.deny(str(err), code=400, reason="BadRequest")
        return None
