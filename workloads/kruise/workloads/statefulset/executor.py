"""Executing a StatefulSet round's actions (``StatefulPodControl`` and friends), the I/O shell.

Each action is written idempotently: a create that finds its pod or claim already there counts
as done, a delete of a pod already gone too. Creates and deletes are recorded in the
controller's scale expectations *before* the call (and forgotten if it fails), pod patches in
its resourceVersion expectations, so a round on a cache that does not show them yet waits.

Creates of a ``Parallel`` round go out in slow-start batches (1, 2, 4, ... as Kubernetes'
``slowStartBatch``), stopping at the first failing batch; every other action runs in order
and the first failure ends the round (upstream returns at the first error).
"""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kruise.core.errors import AlreadyExistsError, ConflictError, KruiseError, NotFoundError
from kruise.core.events import NORMAL, WARNING, EventRecorder
from kruise.core.expectations import ScaleAction, ScaleExpectations
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import PODS, PVCS
from kruise.core.metrics import STATEFULSET_PODS_RECREATED, STATEFULSET_PODS_UPDATED_IN_PLACE, object_key
from kruise.workloads.inplace.writer import PodWriter
from kruise.workloads.objects import KubeObject, metadata, name, namespace, uid
from kruise.workloads.pods import REVISION_HASH_LABEL
from kruise.workloads.statefulset.actions import (
    Action,
    CreateClaims,
    CreatePod,
    DeletePod,
    DeleteReason,
    FixIdentity,
    LifecycleChange,
    SetClaimOwners,
    UpdateInPlace,
)
from kruise.workloads.statefulset.identity import claims_for, ordinal_of
from kruise.workloads.statefulset.retention import claim_owner_references

__all__ = ["Executor", "Outcome"]

log = logging.getLogger(__name__)


@dataclass
class Outcome:
    """What the executed actions did: ``modified`` (anything written), ``failed_create`` /
    ``failed_update`` (messages for the status conditions), ``errors``."""

    modified: bool = False
    errors: list[str] = field(default_factory=list)
    failed_create: str | None = None
    failed_update: str | None = None


@dataclass
class Executor:
    """Runs actions for one controller (its client, expectations and event recorder)."""

    kube: KubeClient
    recorder: EventRecorder
    writer: PodWriter
    expectations: ScaleExpectations

    async def run(self, sts: KubeObject, key: str, actions: Sequence[Action], now: datetime) -> Outcome:
        out = Outcome()
        creates = [a for a in actions if isinstance(a, CreatePod)]
        if creates:
            await self._create_batches(sts, key, creates, out)
            if out.errors:
                return out
        for action in actions:
            if isinstance(action, CreatePod):
                continue
            try:
                await self._one(sts, key, action, now, out)
            except KruiseError as err:
                out.errors.append(f"{type(action).__name__} {_subject(action)}: {err}")
                return out
        return out

    async def _create_batches(
        self, sts: KubeObject, key: str, creates: list[CreatePod], out: Outcome
    ) -> None:
        if not creates:
            return
        out.modified = True
        failures = await self.writer.create_slowly(
            [functools.partial(self._create, sts, key, a) for a in creates]
        )
        if failures:
            out.errors.extend(str(f) for f in failures)
            out.failed_create = f"StatefulPodControl failed to create Pod error: {failures[0]}"

    async def _create(self, sts: KubeObject, key: str, action: CreatePod) -> KubeObject | None:
        """``CreateStatefulPod``: claims first, then the pod, then the claims' retention owners;
        returns the pod created (``None`` when it was already there)."""
        ns, pod_name = namespace(sts), name(action.pod)
        for claim in action.claims:
            try:
                await self.kube.create(PVCS, claim, ns)
                self._claim_event(sts, "create", name(claim), pod_name, None)
            except AlreadyExistsError:
                pass
            except KruiseError as err:
                self._claim_event(sts, "create", name(claim), pod_name, err)
                raise
        self.expectations.expect(key, ScaleAction.CREATE, pod_name)
        try:
            created = await self.kube.create(PODS, action.pod, ns)
        except AlreadyExistsError:
            self.expectations.forget(key, ScaleAction.CREATE, pod_name)
            return None
        except KruiseError as err:
            self.expectations.forget(key, ScaleAction.CREATE, pod_name)
            self._pod_event(sts, "create", pod_name, err)
            raise
        await self.set_claim_owners(sts, created, scaled_down=False)
        self._pod_event(sts, "create", pod_name, None)
        return created

    async def set_claim_owners(self, sts: KubeObject, pod: KubeObject, *, scaled_down: bool) -> None:
        """``UpdatePodClaimForRetentionPolicy`` with fresh claims (the pod's UID just became known)."""
        for claim in claims_for(sts, ordinal_of(pod)):
            found = await self.kube.get_or_none(PVCS, name(claim), namespace(sts))
            if found is None:
                continue
            refs = claim_owner_references(sts, found, pod, scaled_down=scaled_down)
            if refs is not None:
                await self._set_owners(found, refs)

    async def _set_owners(self, claim: KubeObject, refs: list[dict[str, Any]]) -> None:
        patch = {
            "metadata": {"ownerReferences": refs, "resourceVersion": metadata(claim).get("resourceVersion")}
        }
        with contextlib.suppress(NotFoundError, ConflictError):  # changed meanwhile: next round
            await self.kube.patch(PVCS, name(claim), patch, namespace(claim), patch_type="merge")

    async def _one(self, sts: KubeObject, key: str, action: Action, now: datetime, out: Outcome) -> None:
        if isinstance(action, DeletePod):
            await self._delete(sts, key, action, out)
        elif isinstance(action, LifecycleChange):
            await self.writer.lifecycle(action.pod, action.transition, now)
            out.modified = True
        elif isinstance(action, UpdateInPlace):
            await self._in_place(sts, action, now, out)
        elif isinstance(action, CreateClaims):
            for claim in action.claims:
                with contextlib.suppress(AlreadyExistsError):
                    await self.kube.create(PVCS, claim, namespace(sts))
                    self._claim_event(sts, "create", name(claim), name(action.pod), None)
            await self.set_claim_owners(sts, action.pod, scaled_down=False)
            out.modified = True
        elif isinstance(action, SetClaimOwners):
            await self._set_owners(action.claim, action.owner_references)
            out.modified = True
        elif isinstance(action, FixIdentity):
            out.modified = (
                await self.writer.patch(action.pod, {"metadata": {"labels": action.labels}}) or out.modified
            )

    async def _delete(self, sts: KubeObject, key: str, action: DeletePod, out: Outcome) -> None:
        pod_name = name(action.pod)
        self.expectations.expect(key, ScaleAction.DELETE, pod_name)
        try:
            await self.kube.delete(PODS, pod_name, namespace(action.pod), uid=uid(action.pod) or None)
        except NotFoundError:
            pass
        except KruiseError as err:
            self.expectations.forget(key, ScaleAction.DELETE, pod_name)
            self.recorder.event(sts, WARNING, "FailedDelete", f"failed to delete pod {pod_name}: {err}")
            raise
        out.modified = True
        self._pod_event(sts, "delete", pod_name, None)
        if action.reason == DeleteReason.UPDATE:
            STATEFULSET_PODS_RECREATED.labels(*object_key(sts)).inc()

    async def _in_place(self, sts: KubeObject, action: UpdateInPlace, now: datetime, out: Outcome) -> None:
        pod_name = name(action.pod)
        try:
            await self.writer.update_in_place(
                action.pod,
                action.spec,
                now,
                {REVISION_HASH_LABEL: action.revision},
                lifecycle_updating=action.lifecycle_updating,
            )
        except KruiseError as err:
            message = f"failed to update pod {pod_name} in-place(revision {action.revision}): {err}"
            self.recorder.event(sts, WARNING, "FailedUpdatePodInPlace", message)
            out.failed_update = f"StatefulPodControl failed to update Pod error: {err}"
            raise
        out.modified = True
        STATEFULSET_PODS_UPDATED_IN_PLACE.labels(*object_key(sts)).inc()
        message = f"successfully update pod {pod_name} in-place(revision {action.revision})"
        self.recorder.event(sts, NORMAL, "SuccessfulUpdatePodInPlace", message)

    def _pod_event(self, sts: KubeObject, verb: str, pod_name: str, err: Exception | None) -> None:
        """``recordPodEvent``: ``SuccessfulCreate`` / ``FailedDelete`` ... with upstream's text."""
        title = verb.title()
        if err is None:
            message = f"{verb} Pod {pod_name} in StatefulSet {name(sts)} successful"
            self.recorder.event(sts, NORMAL, f"Successful{title}", message)
        else:
            message = f"{verb} Pod {pod_name} in StatefulSet {name(sts)} failed error: {err}"
            self.recorder.event(sts, WARNING, f"Failed{title}", message)

    def _claim_event(
        self, sts: KubeObject, verb: str, claim: str, pod_name: str, err: Exception | None
    ) -> None:
        """``recordClaimEvent``."""
        title = verb.title()
        if err is None:
            message = f"{verb} Claim {claim} Pod {pod_name} in StatefulSet {name(sts)} success"
            self.recorder.event(sts, NORMAL, f"Successful{title}", message)
        else:
            message = (
                f"{verb} Claim {claim} for Pod {pod_name} in StatefulSet {name(sts)} failed error: {err}"
            )
            self.recorder.event(sts, WARNING, f"Failed{title}", message)


def _subject(action: Action) -> str:
    if isinstance(action, SetClaimOwners):
        return f"claim {name(action.claim)}"
    if isinstance(action, CreatePod):
        return f"pod {name(action.pod)}"
    return f"pod {name(action.pod)}"
