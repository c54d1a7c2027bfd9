"""kopf glue for the CloneSet controller: indices as the cache, events enqueue the owner.

kopf lists and watches CloneSets, their pods, PVCs and ControllerRevisions and
keeps them in in-memory indices keyed by owner; it invokes no handler before every
index is fully populated, so the controller never decides on a half-listed cache.
Event handlers only enqueue the owning CloneSet; the controller's bounded worker
pool does the rest. No change-detecting handlers are used, so kopf writes no
annotations or finalizers onto users' objects.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from typing import Any

import kopf

from kruise.core.cache import CacheReady, IndexView, controller_ref
from kruise.workloads.cloneset.controller import CloneSetController

JSON = dict[str, Any]
GROUP, VERSION = "apps.kruise.io", "v1alpha1"


class KopfCloneSetCache:
    """:class:`~kruise.workloads.cloneset.controller.CloneSetCache` over kopf indices."""

    def __init__(self) -> None:
        self.clonesets = IndexView("cloneset_by_key")
        self.pods_by_owner = IndexView("cloneset_pods_by_owner")
        self.pvcs_by_owner = IndexView("cloneset_pvcs_by_owner")
        self.revisions_by_owner = IndexView("cloneset_revisions_by_owner")
        self.ready = CacheReady()

    def views(self) -> list[IndexView]:
        return [self.clonesets, self.pods_by_owner, self.pvcs_by_owner, self.revisions_by_owner]

    def bind(self, indices: Mapping[str, Any]) -> None:
        for view in self.views():
            if not view.bound and view.name in indices:
                view.bind(indices[view.name])
        if all(v.bound for v in self.views()):
            self.ready.set()

    def cloneset(self, key: str) -> JSON | None:
        return self.clonesets.one(key)

    def pods(self, owner_uid: str) -> list[JSON]:
        return self.pods_by_owner.values(owner_uid)

    def pvcs(self, owner_uid: str) -> list[JSON]:
        return self.pvcs_by_owner.values(owner_uid)

    def revisions(self, owner_uid: str) -> list[JSON]:
        return self.revisions_by_owner.values(owner_uid)


def _owner_key(body: Mapping[str, Any]) -> tuple[str, str] | None:
    ref = controller_ref(body, ("CloneSet",))
    if ref is None or not str(ref.get("apiVersion", "")).startswith(GROUP + "/"):
        return None
    ns = (body.get("metadata") or {}).get("namespace")
    return str(ref.get("uid")), f"{ns}/{ref.get('name')}"


def _raw(body: Mapping[str, Any]) -> JSON:
    return dict(body)


def register(
    registry: kopf.OperatorRegistry, controller: CloneSetController, cache: KopfCloneSetCache
) -> None:
    """Register the CloneSet indices and event handlers into ``registry``."""

    async def owned_index(**kwargs: Any) -> dict[str, JSON] | None:
        body = kwargs["body"]
        owner = _owner_key(body)
        return {owner[0]: _raw(body)} if owner else None

    @kopf.index(GROUP, VERSION, "clonesets", registry=registry, id="cloneset_by_key")
    async def cloneset_by_key(**kwargs: Any) -> dict[str, JSON]:
        return {f"{kwargs['namespace']}/{kwargs['name']}": _raw(kwargs["body"])}

    kopf.index("", "v1", "persistentvolumeclaims", registry=registry, id="cloneset_pvcs_by_owner")(
        owned_index
    )
    kopf.index("apps", "v1", "controllerrevisions", registry=registry, id="cloneset_revisions_by_owner")(
        owned_index
    )

    def is_owned(**kwargs: Any) -> bool:
        return _owner_key(kwargs["body"]) is not None

    def is_owned_and_deleted(**kwargs: Any) -> bool:
        return kwargs.get("type") == "DELETED" and is_owned(**kwargs)

    @kopf.on.event(GROUP, VERSION, "clonesets", registry=registry, id="cloneset_event")
    async def on_cloneset(**kwargs: Any) -> None:
        cache.bind(kwargs)
        controller.enqueue(f"{kwargs['namespace']}/{kwargs['name']}")

    async def on_owned(**kwargs: Any) -> None:
        cache.bind(kwargs)
        owner = _owner_key(kwargs["body"])
        if owner is not None:
            controller.enqueue(owner[1])

    # Pods are the bulk of the events (several per pod while a CloneSet scales), so a pod event
    # is handled by its index function alone: it indexes the pod, satisfies create/delete
    # expectations and wakes the owner. The wake-up is scheduled with call_soon so it runs
    # after kopf has stored the index entry this function returns. kopf does not call index
    # functions for DELETED events (it drops the entry itself), hence the one event handler.
    @kopf.index("", "v1", "pods", registry=registry, id="cloneset_pods_by_owner")
    async def pod_index(**kwargs: Any) -> dict[str, JSON] | None:
        body = kwargs["body"]
        owner = _owner_key(body)
        if owner is None:
            return None
        controller.observe_pod(owner[1], body, deleted=False)
        asyncio.get_running_loop().call_soon(controller.enqueue, owner[1])
        return {owner[0]: _raw(body)}

    @kopf.on.event("", "v1", "pods", registry=registry, id="cloneset_pods_event", when=is_owned_and_deleted)
    async def on_pod_deleted(**kwargs: Any) -> None:
        owner = _owner_key(kwargs["body"])
        if owner is not None:
            controller.observe_pod(owner[1], kwargs["body"], deleted=True)
        await on_owned(**kwargs)

    for group, version, plural in (
        ("", "v1", "persistentvolumeclaims"),
        ("apps", "v1", "controllerrevisions"),
    ):
        kopf.on.event(
            group, version, plural, registry=registry, id=f"cloneset_{plural}_event", when=is_owned
        )(on_owned)

    tasks: list[asyncio.Task[None]] = []

    @kopf.on.startup(registry=registry, id="cloneset_workers")
    async def start_workers(**_: Any) -> None:
        tasks.append(asyncio.create_task(controller.run(cache.ready), name="cloneset-controller"))

    @kopf.on.cleanup(registry=registry, id="cloneset_workers_stop")
    async def stop_workers(**_: Any) -> None:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
