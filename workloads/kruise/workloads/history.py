"""Writing a workload's ControllerRevisions (upstream ``pkg/controller/history``'s create and update).

The pure choice (reuse / bump / create) is :func:`kruise.workloads.revisions.plan_revisions`; this
module carries it out against the API server, for every workload kind (CloneSet, StatefulSet
through :class:`History`; SidecarSet through the functions):

- **create** (``CreateControllerRevision``): on ``AlreadyExists`` the stored revision is reused
  when it holds the same data and belongs to the owner; otherwise the collision count goes up
  (the owner's status records it through ``on_collision``) and the name is hashed again, at most
  five times;
- **bump** (``UpdateControllerRevision``, a roll back): a PUT of the object as read with only
  ``.revision`` raised (the API server compares ``data`` byte for byte, a PATCH would re-serialise
  it); on conflict the fresh object is bumped unless it already is. The written resourceVersion is
  handed to ``expect`` so the caller waits for its cache to show it;
- **truncate** (``truncateHistory``): :meth:`History.truncate` deletes the revisions beyond
  ``revisionHistoryLimit`` that no pod and neither status revision uses.
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
    RevisionPlan,
    equal_revisions,
    new_revision,
    plan_revisions,
    revisions_to_delete,
)

__all__ = ["History", "RevisionWriteError", "bump_revision", "ensure_revision"]

log = logging.getLogger(__name__)
JSON = dict[str, Any]
ATTEMPTS = 5
StatusWriter = Callable[[KubeObject, JSON], Awaitable[None]]
"""Merge ``{field: value}`` into the owner's status (the workload controller's own write)."""


class RevisionWriteError(KruiseError):
    """A revision could not be bumped: conflicts persisted."""


async def bump_revision(
    kube: KubeClient, revision: KubeObject, number: int, expect: Callable[[KubeObject], None]
) -> JSON:
    """Make ``revision`` the newest by setting its ``.revision`` to ``number`` (see module doc)."""
    current: JSON = dict(revision)
    for _ in range(ATTEMPTS):
        if int(current.get("revision") or 0) >= number:
            return current
        try:
            result = await kube.replace(CONTROLLER_REVISIONS, {**current, "revision": number})
        except ConflictError:
            current = await kube.get(CONTROLLER_REVISIONS, name(revision), namespace(revision))
            continue
        expect(result)
        return result
    raise RevisionWriteError(f"could not bump revision {name(revision)}: conflicts persisted")


def _owned_by(obj: KubeObject, owner_uid: str) -> bool:
    return any(ref.get("uid") == owner_uid for ref in metadata(obj).get("ownerReferences") or [])


async def ensure_revision(
    kube: KubeClient,
    plan: RevisionPlan,
    *,
    owner_uid: str,
    rebuild: Callable[[int], KubeObject],
    on_collision: Callable[[int], Awaitable[None]],
    expect: Callable[[KubeObject], None],
) -> tuple[JSON | None, int]:
    """The update revision ``plan`` calls for, written if needed, and the collision count used.

    ``rebuild(collision_count)`` is the candidate revision hashed with another collision count;
    ``on_collision(count)`` records a raised count in the owner's status. Returns ``(None, count)``
    when five names in a row were taken by other revisions (the caller retries later).
    """
    collision = plan.collision_count
    if plan.action == "reuse":
        return dict(plan.update_revision), collision
    if plan.action == "bump":
        return await bump_revision(kube, plan.update_revision, plan.revision_number, expect), collision
    candidate = dict(plan.update_revision)
    for _ in range(ATTEMPTS):
        try:
            created = await kube.create(CONTROLLER_REVISIONS, candidate, namespace(candidate))
            return created, collision
        except AlreadyExistsError:
            existing = await kube.get_or_none(CONTROLLER_REVISIONS, name(candidate), namespace(candidate))
            if (
                existing is not None
                and equal_revisions(existing, candidate)
                and _owned_by(existing, owner_uid)
            ):
                return existing, collision
            collision += 1  # a different revision holds the name: hash again
            await on_collision(collision)
            candidate = dict(rebuild(collision))
    return None, collision


@dataclass
class History:
    """Revision writes for workloads owned as ``controller`` (``getActiveRevisions``,
    ``getStatefulSetRevisions``, ``truncateHistory``); ``write_status`` records a raised
    ``collisionCount``. ``build(owner, revision number, collision count)`` makes the candidate
    revision of an owner whose data is not its pod template (UnitedDeployment); by default it is
    :func:`~kruise.workloads.revisions.new_revision`."""

    kube: KubeClient
    controller: ControllerKind
    rv_expectations: ResourceVersionExpectations
    write_status: StatusWriter
    build: Callable[[KubeObject, int, int], KubeObject] | None = None

    async def ensure_update_revision(
        self, owner: KubeObject, revisions: Sequence[KubeObject]
    ) -> tuple[JSON | None, int]:
        """The update revision (created or bumped if needed) and the collision count used;
        ``None`` when five name clashes in a row left no revision (try again later)."""
        build = self.build

        def candidate(number: int, collision: int) -> KubeObject:
            if build is not None:
                return build(owner, number, collision)
            return new_revision(owner, number, collision, controller=self.controller)

        plan = plan_revisions(owner, revisions, controller=self.controller, build=candidate)

        async def record(collision: int) -> None:
            await self.write_status(owner, {"collisionCount": collision})

        return await ensure_revision(
            self.kube,
            plan,
            owner_uid=uid(owner),
            rebuild=lambda collision: candidate(plan.revision_number, collision),
            on_collision=record,
            expect=self._expect_written,
        )

    def _expect_written(self, obj: KubeObject) -> None:
        self.rv_expectations.expect_written(obj)

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
