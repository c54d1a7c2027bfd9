"""The SidecarSet upgrade controller shell: observe (cache), decide (pure core), act, persist once.

Reconcile order follows upstream's ``Processor.UpdateSidecarSet``:

1. the SidecarSet from the cache; its matched pods: those the pod index says it injected that are
   active, still selected and still have every sidecar (``getMatchingPods``);
2. wait while a pod this controller patched is older in the cache than what it wrote;
3. the latest ControllerRevision (reuse, roll back or create, in the manager's namespace), the
   custom-version label on it, history truncated;
4. the pod webhook's scope (:mod:`.podscope`), then the status when it changed;
5. hot-upgrade flips (idle containers back to the empty image) for pods whose new container runs;
6. stop for ``NotUpdate``, when every pod is updated, or while ``updateStrategy.paused``;
7. :func:`~.upgrade.next_upgrades`: ``SidecarSetUpgradable=False`` on the pods it cannot upgrade
   (one ``NotUpgradablePods`` event), then each chosen pod patched (images and annotations, with
   its resourceVersion as precondition) and marked upgradable.

Pods are woken through the ``kruise.io/sidecarset-injected-list`` annotation (index
:data:`INJECTED_INDEX`), so a pod event reaches exactly the SidecarSets injected into it.
"""

from __future__ import annotations

import contextlib
import datetime
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kruise.core.concurrency import bounded_gather
from kruise.core.errors import ConflictError, KruiseError, NotFoundError
from kruise.core.events import NORMAL, WARNING, EventRecorder
from kruise.core.expectations import ResourceVersionExpectations
from kruise.core.informer import Delta, EventType
from kruise.core.informer.store import JSON as StoreJSON
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import CONTROLLER_REVISIONS, NAMESPACES, PODS, SIDECARSETS
from kruise.core.runtime import CacheReader, ControllerSpec, Read, Watch, primary
from kruise.core.workqueue import Result
from kruise.workloads.history import ensure_revision
from kruise.workloads.inplace import pod_patch
from kruise.workloads.objects import KubeObject, labels, metadata, name, namespace, spec, status, uid
from kruise.workloads.pods import is_active, is_ready
from kruise.workloads.revisions import sort_revisions
from kruise.workloads.sidecarset import history
from kruise.workloads.sidecarset.keys import (
    HASH_ANNOTATION,
    INJECTED_LIST_ANNOTATION,
    NOT_UPGRADABLE_EVENT,
    SIDECARSET_NAME_LABEL,
    WORKING_HOT_UPGRADE_ANNOTATION,
)
from kruise.workloads.sidecarset.matching import pod_namespace, sidecarset_matcher
from kruise.workloads.sidecarset.metrics import PODS_RESET, PODS_UPGRADED, forget_sidecarset
from kruise.workloads.sidecarset.podinfo import injected_names
from kruise.workloads.sidecarset.podscope import PodWebhookScope
from kruise.workloads.sidecarset.podstate import has_sidecars
from kruise.workloads.sidecarset.podupdate import flipped_pod, upgradable_condition, upgraded_pod
from kruise.workloads.sidecarset.upgrade import (
    calculate_status,
    hot_upgrade_flips,
    next_upgrades,
    status_changed,
)

log = logging.getLogger(__name__)
JSON = dict[str, Any]
INJECTED_INDEX = "sidecarset-injected"
REVISION_INDEX = "sidecarset-revisions"
WRITE_CONCURRENCY = 32
"""Pod writes of one round in flight at once (pods are independent)."""
RECONCILE_PACE = 0.5
RECONCILE_MAX_PACE = 0.5


def index_injected(pod: StoreJSON) -> tuple[str, ...]:
    """:data:`INJECTED_INDEX`: the SidecarSets in the pod's injected list."""
    return tuple(injected_names(pod))


def _pod_fingerprint(pod: StoreJSON) -> tuple[Any, ...]:
    """What a SidecarSet reconcile reads of a pod (``isPodStatusChanged``/``isPodConsistentChanged``
    and the selector strategy): readiness, deletion, labels, our annotations, images and the
    container statuses' images, imageIDs and readiness."""
    meta, spec_, status_ = (pod.get(k) or {} for k in ("metadata", "spec", "status"))
    annotations = meta.get("annotations") or {}
    return (
        is_ready(pod),
        bool(meta.get("deletionTimestamp")),
        status_.get("phase"),
        tuple(sorted((meta.get("labels") or {}).items())),
        tuple(annotations.get(k) for k in _WATCHED_ANNOTATIONS),
        tuple((c.get("name"), c.get("image")) for c in spec_.get("containers") or []),
        tuple(
            (s.get("name"), s.get("image"), s.get("imageID"), s.get("ready"))
            for s in status_.get("containerStatuses") or []
        ),
    )


_WATCHED_ANNOTATIONS = (HASH_ANNOTATION, INJECTED_LIST_ANNOTATION, WORKING_HOT_UPGRADE_ANNOTATION)


def pod_changed(delta: Delta) -> bool:
    """A pod event a SidecarSet reconcile can decide differently on (creations and deletions
    always; an update only when :func:`_pod_fingerprint` moved, not for a condition or an
    annotation of someone else)."""
    if delta.type is not EventType.MODIFIED or delta.old is None:
        return True
    return _pod_fingerprint(delta.old) != _pod_fingerprint(delta.obj)


def sidecarset_changed(delta: Delta) -> bool:
    """SidecarSet events but its own status writes (upstream reconciles on generation changes; the
    labels carry the custom version, deletion ends it)."""
    if delta.type is not EventType.MODIFIED or delta.old is None:
        return True
    old, new = delta.old.get("metadata") or {}, delta.obj.get("metadata") or {}
    return any(old.get(k) != new.get(k) for k in ("generation", "labels", "annotations", "deletionTimestamp"))


def index_revision(revision: StoreJSON) -> tuple[str, ...]:
    """:data:`REVISION_INDEX`: ``<namespace>/<sidecarset>`` of a SidecarSet's revision."""
    owner = labels(revision).get(SIDECARSET_NAME_LABEL)
    return (f"{namespace(revision)}/{owner}",) if owner else ()


@dataclass(frozen=True)
class SidecarSetOptions:
    """Controller settings (kruise-manager flags)."""

    workers: int = 3  # --sidecarset-workers
    namespace: str = "kruise-system"  # where revisions live (the manager's namespace)
    expectation_timeout: float = 300.0


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


class SidecarSetSyncError(KruiseError):
    """A pod or the status could not be written this round; retried with backoff."""


class SidecarSetController:
    """Reconciles SidecarSets (cluster-scoped: the key is the name)."""

    name = "sidecarset-controller"

    def __init__(
        self,
        kube: KubeClient,
        recorder: EventRecorder,
        cache: CacheReader,
        options: SidecarSetOptions,
        scope: PodWebhookScope | None = None,
    ) -> None:
        self.kube = kube
        self.recorder = recorder
        self.cache = cache
        self.options = options
        self.scope = scope
        self.rv_expectations = ResourceVersionExpectations(timeout=options.expectation_timeout)

    def spec(self) -> ControllerSpec:
        """Woken by SidecarSets, the pods they injected and their revisions; reads namespaces."""
        return ControllerSpec(
            name=self.name,
            watches=(
                primary(SIDECARSETS, accept=sidecarset_changed),
                Watch(PODS, index_injected, {INJECTED_INDEX: index_injected}, accept=pod_changed),
                Watch(CONTROLLER_REVISIONS, _revision_owner, {REVISION_INDEX: index_revision}),
            ),
            reads=(Read(NAMESPACES),),
            workers=self.options.workers,
            pace=RECONCILE_PACE,
            max_pace=RECONCILE_MAX_PACE,
        )

    # ------------------------------------------------------------------ observe
    def _namespace_labels(self, ns: str) -> Mapping[str, str] | None:
        found = self.cache.get(NAMESPACES, ns)
        return None if found is None else labels(found)

    def matched_pods(self, sidecarset: KubeObject) -> list[KubeObject]:
        """``getMatchingPods``: injected, active, still selected, every sidecar present."""
        out = []
        matches = sidecarset_matcher(sidecarset)
        for pod in self.cache.by_index(PODS, INJECTED_INDEX, name(sidecarset)):
            if not is_active(pod) or not has_sidecars(pod, sidecarset):
                continue
            if matches(pod, self._namespace_labels(pod_namespace(pod))):
                out.append(pod)
        return sorted(out, key=lambda p: (namespace(p), name(p)))

    def revisions(self, sidecarset: KubeObject) -> list[KubeObject]:
        key = f"{self.options.namespace}/{name(sidecarset)}"
        return sort_revisions(self.cache.by_index(CONTROLLER_REVISIONS, REVISION_INDEX, key))

    # ------------------------------------------------------------------ reconcile
    async def reconcile(self, key: str) -> Result:
        sidecarset = self.cache.get(SIDECARSETS, key)
        if sidecarset is None:
            forget_sidecarset(key)  # its counters go with it
            return Result()
        if metadata(sidecarset).get("deletionTimestamp"):
            return Result()
        pods = self.matched_pods(sidecarset)
        for pod in pods:  # our own pod writes must show in the cache first
            if not self.rv_expectations.caught_up(pod):
                return Result(requeue_after=1.0)
        revisions = self.revisions(sidecarset)
        latest, collision = await self._ensure_revision(sidecarset, revisions)
        if latest is None:
            return Result(requeue_after=0.5)
        await self._truncate_history(
            sidecarset, pods, [*(r for r in revisions if name(r) != name(latest)), latest]
        )
        if self.scope is not None:
            await self.scope.ensure()
        new_status = calculate_status(sidecarset, pods, name(latest), collision)
        if status_changed(status(sidecarset), new_status):
            await self._patch_status(sidecarset, new_status)
        sidecarset = {**sidecarset, "status": {**status(sidecarset), **new_status}}
        now = _now()
        await self._flip(sidecarset, pods, now)
        strategy = spec(sidecarset).get("updateStrategy") or {}
        if strategy.get("type") == "NotUpdate" or new_status["updatedPods"] >= new_status["matchedPods"]:
            return Result()
        if strategy.get("paused"):
            return Result()
        await self._upgrade(sidecarset, pods, now)
        return Result()

    # ------------------------------------------------------------------ revisions
    async def _ensure_revision(
        self, sidecarset: KubeObject, revisions: Sequence[KubeObject]
    ) -> tuple[JSON | None, int]:
        plan = history.plan(sidecarset, revisions, self.options.namespace)

        async def record(collision: int) -> None:
            await self._patch_status(sidecarset, {"collisionCount": collision})

        latest, collision = await ensure_revision(
            self.kube,
            plan,
            owner_uid=uid(sidecarset),
            rebuild=lambda c: history.new_revision(
                sidecarset, self.options.namespace, plan.revision_number, c
            ),
            on_collision=record,
            expect=lambda _: None,
        )
        if latest is not None:
            patch = history.custom_version_patch(latest, sidecarset)
            if patch is not None:
                latest = await self.kube.patch(
                    CONTROLLER_REVISIONS, name(latest), patch, namespace(latest), patch_type="merge"
                )
        return latest, collision

    async def _truncate_history(
        self, sidecarset: KubeObject, pods: Sequence[KubeObject], ordered: Sequence[KubeObject]
    ) -> None:
        for revision in history.revisions_to_delete(sidecarset, pods, ordered):
            try:
                await self.kube.delete(
                    CONTROLLER_REVISIONS, name(revision), namespace(revision), missing_ok=True
                )
            except KruiseError as err:
                log.warning("delete revision %s: %s", name(revision), err)

    async def _patch_status(self, sidecarset: KubeObject, new_status: Mapping[str, Any]) -> None:
        with contextlib.suppress(NotFoundError):
            await self.kube.patch(
                SIDECARSETS,
                name(sidecarset),
                {"status": dict(new_status)},
                patch_type="merge",
                subresource="status",
            )

    # ------------------------------------------------------------------ pods
    async def _write_pod(self, before: KubeObject, after: KubeObject) -> bool:
        """Patch images and annotations (resourceVersion precondition); False on a conflict."""
        patch = pod_patch(before, after)
        if not patch:
            return True
        try:
            written = await self.kube.patch(
                PODS, name(before), patch, namespace(before), patch_type="strategic"
            )
        except ConflictError:
            return False
        except NotFoundError:
            return True
        self.rv_expectations.expect_written(written)
        return True

    async def _set_upgradable(self, sidecarset: KubeObject, pod: KubeObject, upgradable: bool) -> None:
        condition = upgradable_condition(pod, name(sidecarset), upgradable, _now())
        if condition is None:
            return
        with contextlib.suppress(NotFoundError):
            await self.kube.patch(
                PODS,
                name(pod),
                {"status": {"conditions": [condition]}},
                namespace(pod),
                patch_type="strategic",
                subresource="status",
            )

    async def _flip(self, sidecarset: KubeObject, pods: Sequence[KubeObject], now: datetime.datetime) -> None:
        async def flip(pod: KubeObject) -> None:
            if await self._write_pod(pod, flipped_pod(sidecarset, pod, now)):
                PODS_RESET.labels(name(sidecarset)).inc()
                message = "reset sidecar container image empty successfully"
                self.recorder.event(pod, NORMAL, "ResetContainerSucceed", message)
            else:
                message = "reset sidecar container image empty failed: conflict"
                self.recorder.event(pod, WARNING, "ResetContainerFailed", message)

        await bounded_gather((flip(p) for p in hot_upgrade_flips(sidecarset, pods)), WRITE_CONCURRENCY)

    async def _upgrade(
        self, sidecarset: KubeObject, pods: Sequence[KubeObject], now: datetime.datetime
    ) -> None:
        plan = next_upgrades(sidecarset, pods, now)
        await bounded_gather(
            (self._set_upgradable(sidecarset, p, False) for p in plan.not_upgradable), WRITE_CONCURRENCY
        )
        if plan.not_upgradable:
            self.recorder.event(
                sidecarset,
                NORMAL,
                NOT_UPGRADABLE_EVENT,
                f"SidecarSet in-place update detected {len(plan.not_upgradable)} not upgradable pod(s) in "
                "this round, will skip them.",
            )

        async def upgrade(pod: KubeObject) -> bool:
            if not await self._write_pod(pod, upgraded_pod(sidecarset, pod, now)):
                return False
            PODS_UPGRADED.labels(name(sidecarset)).inc()
            await self._set_upgradable(sidecarset, pod, True)
            return True

        written = await bounded_gather((upgrade(p) for p in plan.upgrade), WRITE_CONCURRENCY)
        if plan.upgrade:
            log.info("sidecarset %s upgraded %d pod(s) in place", name(sidecarset), sum(written))
        if not all(written):
            conflicts = len(written) - sum(written)
            raise SidecarSetSyncError(f"{name(sidecarset)}: {conflicts} pod(s) changed meanwhile; retrying")


def _revision_owner(revision: StoreJSON) -> tuple[str, ...]:
    owner = labels(revision).get(SIDECARSET_NAME_LABEL)
    return (str(owner),) if owner else ()
