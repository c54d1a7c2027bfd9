"""The AdvancedCronJob controller shell: observe (cache), decide (:func:`~.plan.next_action`), act.
Upstream's ``advancedcronjob-controller`` (``ReconcileAdvancedCronJob``, v1.8).

1. The ACJ from the cache (gone: nothing to do).
2. Its children from the shared informer of the template's kind (batch/v1 Jobs, BroadcastJobs or
   ImageListPullJobs), indexed by controller-owner UID.
3. The plan: write the status when it changed (a merge patch of the status subresource with the
   ACJ's resourceVersion as precondition; a conflict retries the round), delete the pruned or
   replaced children (background propagation, a child already gone is fine), create the run's
   child (its name is deterministic, so a stale cache that repeats a create meets
   AlreadyExists, which is fine), then requeue at the next activation. No polling: children's
   events and the ACJ's own wake it otherwise.

Upstream records no events here (it logs); neither do we: a failed create or delete is logged and
the round retried with backoff. An unparseable schedule or too many missed starts is logged and
waits for the next change, as upstream.
"""

from __future__ import annotations

import contextlib
import datetime
import logging
from dataclasses import dataclass
from typing import Any

from kruise.core.errors import AlreadyExistsError, KruiseError, NotFoundError
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import ADVANCEDCRONJOBS, BROADCASTJOBS, IMAGELISTPULLJOBS, JOBS, Resource
from kruise.core.runtime import OWNER_UID, CacheReader, ControllerSpec, owned, primary
from kruise.core.workqueue import Result
from kruise.workloads.advancedcronjob.plan import Action, next_action, template_kind
from kruise.workloads.api.advancedcronjob import AdvancedCronJob, TemplateKind
from kruise.workloads.objects import KubeObject, is_being_deleted, metadata, name, status, uid
from kruise.workloads.objects import namespace as namespace_of

__all__ = [
    "CHILD_RESOURCES",
    "AdvancedCronJobController",
    "AdvancedCronJobOptions",
    "AdvancedCronJobSyncError",
]

log = logging.getLogger(__name__)

CHILD_RESOURCES: dict[TemplateKind, Resource] = {
    TemplateKind.JOB: JOBS,
    TemplateKind.BROADCAST_JOB: BROADCASTJOBS,
    TemplateKind.IMAGE_LIST_PULL_JOB: IMAGELISTPULLJOBS,
}
"""The resource of each template kind's children."""


@dataclass(frozen=True)
class AdvancedCronJobOptions:
    """Controller settings (kruise-manager flags)."""

    workers: int = 3  # --advancedcronjob-workers


class AdvancedCronJobSyncError(KruiseError):
    """A round met errors; the key is retried with backoff."""


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


class AdvancedCronJobController:
    """Reconciles AdvancedCronJobs."""

    name = "advancedcronjob-controller"

    def __init__(self, kube: KubeClient, cache: CacheReader, options: AdvancedCronJobOptions) -> None:
        self.kube = kube
        self.cache = cache
        self.options = options

    def spec(self) -> ControllerSpec:
        """Woken by AdvancedCronJobs and by the Jobs, BroadcastJobs and ImageListPullJobs they
        control (indexed by owner UID)."""
        return ControllerSpec(
            name=self.name,
            watches=(
                primary(ADVANCEDCRONJOBS),
                owned(JOBS, ADVANCEDCRONJOBS),
                owned(BROADCASTJOBS, ADVANCEDCRONJOBS),
                owned(IMAGELISTPULLJOBS, ADVANCEDCRONJOBS),
            ),
            workers=self.options.workers,
        )

    async def reconcile(self, key: str) -> Result:
        raw = self.cache.get(ADVANCEDCRONJOBS, key)
        if raw is None or is_being_deleted(raw):
            return Result()
        acj = AdvancedCronJob.model_validate(raw)
        if acj.spec is None:
            return Result()
        res = CHILD_RESOURCES[template_kind(acj.spec)]
        children = list(self.cache.by_index(res, OWNER_UID, uid(raw)))
        action = next_action(acj, children, _now())
        if action.error:
            log.warning("%s: %s", key, action.error)
        await self._write_status(raw, action)
        errors: list[str] = []
        for child in action.delete:
            try:
                await self.kube.delete(res, child, namespace_of(raw), propagation="Background")
                log.info("%s: deleted %s %s", key, res.kind, child)
            except NotFoundError:
                pass
            except KruiseError as err:
                errors.append(f"delete {res.kind} {child}: {err}")
        if action.create is not None and not errors:
            try:
                await self.kube.create(res, action.create, namespace_of(raw))
                log.info("%s: created %s %s", key, res.kind, action.create["metadata"]["name"])
            except AlreadyExistsError:
                pass
            except KruiseError as err:
                errors.append(f"create {res.kind} {action.create['metadata']['name']}: {err}")
        if errors:
            raise AdvancedCronJobSyncError(f"{key}: {'; '.join(errors)}")
        return Result(requeue_after=action.requeue_after)

    async def _write_status(self, raw: KubeObject, action: Action) -> None:
        wanted: dict[str, Any] = action.status.to_dict()
        if wanted == dict(status(raw)):
            return
        # a merge patch keeps absent keys: clear what the new status no longer has
        cleared = {key: None for key in status(raw) if key not in wanted}
        body = {
            "metadata": {"resourceVersion": metadata(raw).get("resourceVersion")},
            "status": {**cleared, **wanted},
        }
        with contextlib.suppress(NotFoundError):
            await self.kube.patch(
                ADVANCEDCRONJOBS, name(raw), body, namespace_of(raw), patch_type="merge", subresource="status"
            )
