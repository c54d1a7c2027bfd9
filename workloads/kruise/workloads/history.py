"""ControllerRevision writes a workload makes each round (``k8s.io/kubernetes/pkg/controller/history``).

The decisions are :mod:`kruise.workloads.revisions` (pure); :class:`History` performs them for
one workload kind, as the CloneSet's ``getActiveRevisions`` and the StatefulSet's
``getStatefulSetRevisions``/``truncateHistory`` do:

- reuse the latest revision when it equals the template; *bump* an older equal one (a rollback:
  its ``.revision`` becomes the newest number); else create one, and on a name clash with other
  data raise ``status.collisionCount`` (written at once) and hash again;
- delete revisions beyond ``revisionHistoryLimit`` that no pod and neither status revision uses.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kruise.core.errors import AlreadyExistsError, ConflictError, KruiseError
from kruise.core.expectations import ResourceVersionExpectations
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import CONTROLLER_REVISIONS
from kruise.workloads.objects import KubeObject, metadata, name, namespace, uid
from kruise.workloads.revisions import (
    ControllerKind,
    equal_revisions,
    new_revision,
    plan_revisions,
    revisions_to_delete,
)

__all__ = ["History", "HistoryError"]

log = logging.getLogger(__name__)
JSON = dict[str, Any]
StatusWriter = Callable[[KubeObject, JSON], Awaitable[None]]
"""Merge ``{field: value}`` into the owner's status (the workload controller's own write)."""


class HistoryError(KruiseError):
    """A revision could not be bumped: conflicts persisted."""


@dataclass
class History:
    """Revision writes for workloads owned as ``controller``; ``write_status`` records a raised
    ``collisionCount``."""

    kube: KubeClient
    controller: ControllerKind
    rv_expectations: ResourceVersionExpectations
    write_status: StatusWriter

    async def ensure_update_revision(
        self, owner: KubeObject, revisions: Sequence[KubeObject]
    ) -> tuple[JSON | None, int]:
        """The update revision (created or bumped if needed) and the collision count used;
        ``None`` when five name clashes in a row left no revision (try again later)."""
        plan = plan_revisions(owner, revisions, controller=self.controller)
        collision = plan.collision_count
        if plan.action == "reuse":
            return dict(plan.update_revision), collision
        if plan.action == "bump":
            return await self._bump(plan.update_revision, plan.revision_number), collision
        candidate = dict(plan.update_revision)
        for _ in range(5):
            try:
                created = await self.kube.create(CONTROLLER_REVISIONS, candidate, namespace(owner))
                return created, collision
            except AlreadyExistsError:
                existing = await self.kube.get_or_none(
                    CONTROLLER_REVISIONS, name(candidate), namespace(owner)
                )
                if (
                    existing is not None
                    and equal_revisions(existing, candidate)
                    and _owned_by(existing, owner)
                ):
                    return existing, collision
                collision += 1  # a different revision holds the name: hash again
                await self.write_status(owner, {"collisionCount": collision})
                candidate = new_revision(owner, plan.revision_number, collision, controller=self.controller)
        return None, collision

    async def _bump(self, revision: KubeObject, number: int) -> JSON:
        """Make an older revision the newest (a rollback): ``UpdateControllerRevision``.

        A PUT of the object as read, only ``.revision`` changed: the API server compares a
        revision's ``data`` byte for byte, and a PATCH re-serialises it (then "field is
        immutable"). On conflict the fresh object is bumped, unless it already is.
        """
        current: JSON = dict(revision)
        for _ in range(5):
            if int(current.get("revision") or 0) >= number:
                return current
            try:
                result = await self.kube.replace(CONTROLLER_REVISIONS, {**current, "revision": number})
            except ConflictError:
                current = await self.kube.get(CONTROLLER_REVISIONS, name(revision), namespace(revision))
                continue
            self.rv_expectations.expect(uid(result), str(metadata(result).get("resourceVersion")))
            return result
        raise HistoryError(f"could not bump revision {name(revision)}: conflicts persisted")

    async def truncate(
        self,
        owner: KubeObject,
        pods: Sequence[KubeObject],
        revisions: Sequence[KubeObject],
        current_revision: str,
        update_revision: str,
    ) -> None:
        """Delete the revisions beyond the history limit (``truncateHistory``); failures are logged."""
        for rev in revisions_to_delete(owner, pods, revisions, current_revision, update_revision):
            try:
                await self.kube.delete(CONTROLLER_REVISIONS, name(rev), namespace(rev), missing_ok=True)
            except KruiseError as err:
                log.warning("delete revision %s: %s", name(rev), err)


def _owned_by(obj: KubeObject, owner: KubeObject) -> bool:
    return any(ref.get("uid") == uid(owner) for ref in metadata(obj).get("ownerReferences") or [])
