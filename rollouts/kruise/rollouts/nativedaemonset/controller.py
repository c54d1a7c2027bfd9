"""The native DaemonSet controller (I/O shell around :func:`~.deletion.decide`).

Mirrors Kruise Rollouts' ``native-daemonset-controller`` (``pkg/controller/nativedaemonset``): a
native DaemonSet carrying ``rollouts.kruise.io/daemonset-advanced-control`` gets its old pods
deleted, batch by batch, so kube's DaemonSet controller (the strategy is ``OnDelete`` under the
Rollout's hold) recreates them at the new revision.

- Reads the DaemonSet, its pods and its ControllerRevisions from the shared cache; woken by the
  DaemonSets carrying the annotation (and when it goes) and by their pods' events.
- Before deleting, each pod is expected gone (:class:`~kruise.core.expectations.ScaleExpectations`,
  by name): no further deletion for that DaemonSet until the cache shows every one terminating or
  gone, or the expectation times out (a failed or NotFound delete drops its expectation). A delete
  carries the pod's UID as precondition, so a pod recreated under the same name is never hit.
- Each deletion is one Event ``PodDeleted`` on the DaemonSet: ``Deleted pod <ns>/<name> for batch
  update`` (upstream's reason and message).
"""

from __future__ import annotations

import logging
from typing import Any

from kruise.core.errors import NotFoundError
from kruise.core.events import NORMAL, EventRecorder
from kruise.core.expectations import ScaleAction, ScaleExpectations
from kruise.core.informer import object_key
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import CONTROLLER_REVISIONS, NATIVE_DAEMONSETS, PODS
from kruise.core.runtime import OWNER_UID, CacheReader, ControllerSpec, Read, Watch, index_by_owner_uid
from kruise.core.runtime.spec import owner_key
from kruise.core.workqueue import Result
from kruise.rollouts.nativedaemonset.deletion import Deletions, decide
from kruise.rollouts.workloads.nativedaemonset.marks import ADVANCED_CONTROL
from kruise.rollouts.workloads.nativedaemonset.revisions import daemonset_revisions
from kruise.rollouts.workloads.podlabels import deleting

log = logging.getLogger(__name__)
JSON = dict[str, Any]
REASON_DELETED = "PodDeleted"
RETRY_SECONDS = 2.0  # upstream's DefaultRetryDuration


def _controlled(daemonset: JSON | None) -> bool:
    annotations = ((daemonset or {}).get("metadata") or {}).get("annotations") or {}
    return ADVANCED_CONTROL in annotations


class NativeDaemonSetController:
    """Reconciles native DaemonSets by key ``namespace/name``."""

    name = "native-daemonset-controller"

    def __init__(
        self,
        kube: KubeClient,
        view: CacheReader,
        recorder: EventRecorder,
        *,
        workers: int = 3,
        expectation_timeout: float = 300.0,
    ) -> None:
        """``workers``: upstream's ``--nativedaemonset-workers`` default (3); ``expectation_timeout``:
        seconds a deletion may stay unobserved before the DaemonSet is acted on again."""
        self.kube = kube
        self.view = view
        self.recorder = recorder
        self.workers = workers
        self.expectations = ScaleExpectations(timeout=expectation_timeout)

    def spec(self) -> ControllerSpec:
        """Woken by DaemonSets under a batch (and when the batch annotation goes) and by their pods."""

        def daemonset_keys(daemonset: JSON) -> tuple[str, ...]:
            return (object_key(daemonset),) if _controlled(daemonset) else ()

        def pod_keys(pod: JSON) -> tuple[str, ...]:
            key = owner_key(pod, NATIVE_DAEMONSETS)
            return (key,) if key is not None and _controlled(self.view.get(NATIVE_DAEMONSETS, key)) else ()

        return ControllerSpec(
            name=self.name,
            watches=(
                Watch(NATIVE_DAEMONSETS, daemonset_keys),
                Watch(PODS, pod_keys, {OWNER_UID: index_by_owner_uid}),
            ),
            reads=(Read(CONTROLLER_REVISIONS, {OWNER_UID: index_by_owner_uid}),),
            workers=self.workers,
        )

    async def reconcile(self, key: str) -> Result:
        daemonset = self.view.get(NATIVE_DAEMONSETS, key)
        if daemonset is None or not _controlled(daemonset):
            self.expectations.delete(key)
            return Result()
        uid = str(daemonset["metadata"].get("uid") or "")
        pods = self.view.by_index(PODS, OWNER_UID, uid)
        live = {str(p["metadata"]["name"]) for p in pods if not deleting(p)}
        pending = self.expectations.check(key, lambda name: name in live)
        if not pending.satisfied:
            if not self.expectations.timed_out(pending):
                return Result(requeue_after=RETRY_SECONDS)
            log.warning("DaemonSet %s: deletions %s unobserved, acting again", key, sorted(pending.deletes))
            self.expectations.delete(key)
        revisions = daemonset_revisions(daemonset, self.view.by_index(CONTROLLER_REVISIONS, OWNER_UID, uid))
        decision = decide(daemonset, pods, revisions.canary if revisions.known else "")
        if decision is None or not decision.delete:
            waiting = decision is not None and bool(decision.waiting)
            return Result(requeue_after=RETRY_SECONDS if waiting else None)
        await self._delete(key, daemonset, {str(p["metadata"]["name"]): p for p in pods}, decision)
        return Result()

    async def _delete(self, key: str, daemonset: JSON, by_name: dict[str, JSON], decision: Deletions) -> None:
        ns = str(daemonset["metadata"]["namespace"])
        log.info(
            "DaemonSet %s: batch at %s wants %d updated, has %d; deleting %s",
            key,
            decision.revision,
            decision.desired,
            decision.updated,
            list(decision.delete),
        )
        for name in decision.delete:
            self.expectations.expect(key, ScaleAction.DELETE, name)
            try:
                await self.kube.delete(PODS, name, ns, uid=str(by_name[name]["metadata"].get("uid") or ""))
            except NotFoundError:
                self.expectations.forget(key, ScaleAction.DELETE, name)
                continue
            except Exception:
                self.expectations.forget(key, ScaleAction.DELETE, name)
                raise
            self.recorder.event(
                {"apiVersion": "apps/v1", "kind": "DaemonSet", **daemonset},
                NORMAL,
                REASON_DELETED,
                f"Deleted pod {ns}/{name} for batch update",
            )
