"""The ResourceDistribution controller shell: observe (cache), decide (:func:`~.plan.plan`),
act, write status once. Upstream's ``resourcedistribution-controller`` (v1.8), run only with the
``ResourceDistributionGate`` feature gate.

1. The distributor from the cache (gone: nothing to do; its copies go with it through their
   ownerReferences and the garbage collector).
2. Plan over every Namespace and the same-named Secrets/ConfigMaps (informers indexed by name).
3. Create, update and delete the copies (each failure recorded against its namespace and
   condition, as upstream's ``UnexpectedError``); a create that meets an object the cache did
   not show yet is judged by the live object (ours: done; not ours: conflict).
4. Write the status once (merge patch of the status subresource) when it changed; errors other
   than conflicts and missing namespaces make the round retry with backoff, as upstream.

Wake-ups (upstream's handlers): the distributor's spec changes; a namespace created that it
targets, deleted while it was listed, or relabelled (any distributor the old or new labels
match); a copy it controls updated or deleted (so a hand edit is reverted and a deleted copy
made again).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import logging
from collections.abc import Awaitable, Iterable, Mapping
from typing import Any

from kruise.core.errors import AlreadyExistsError, KruiseError, NotFoundError
from kruise.core.informer import Delta, EventType
from kruise.core.kube.resources import CONFIGMAPS, NAMESPACES, SECRETS, Resource
from kruise.core.runtime import ControllerSpec, Watch
from kruise.core.workqueue import Result
from kruise.workloads.api.resourcedistribution import RESOURCEDISTRIBUTIONS
from kruise.workloads.controllerbase import CacheController
from kruise.workloads.objects import KubeObject, labels, mapping, metadata, name, sequence, spec, status
from kruise.workloads.objects import namespace as namespace_of
from kruise.workloads.resourcedistribution.plan import (
    CONFLICT,
    CONFLICT_REASON,
    CREATE_FAILED,
    DELETE_FAILED,
    NOT_EXISTS,
    UPDATE_FAILED,
    Failure,
    is_controlled_by,
    listed_names,
    new_status,
    plan,
)
from kruise.workloads.selector import SelectorError, selector_matches

__all__ = ["BY_NAME", "ResourceDistributionController", "ResourceDistributionSyncError"]

log = logging.getLogger(__name__)

BY_NAME = "resourcedistribution-by-name"
"""Index of Secrets and ConfigMaps by ``metadata.name`` (a distributor's copies share one)."""
KINDS: Mapping[str, Resource] = {"Secret": SECRETS, "ConfigMap": CONFIGMAPS}


class ResourceDistributionSyncError(KruiseError):
    """A round met errors other than conflicts and missing namespaces; retried with backoff."""


def _by_name(obj: Mapping[str, Any]) -> tuple[str, ...]:
    return (name(obj),)


def _owner_keys(obj: Mapping[str, Any]) -> tuple[str, ...]:
    for ref in sequence(metadata(obj).get("ownerReferences")):
        ref = mapping(ref)
        if ref.get("controller") and ref.get("kind") == "ResourceDistribution":
            return (str(ref.get("name")),)
    return ()


def _copy_keys(delta: Delta) -> Iterable[str]:
    """Updates and deletions of a copy wake its distributor (creations do not, as upstream)."""
    if delta.type is EventType.ADDED:
        return ()
    return _owner_keys(delta.obj)


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _targets(rd: KubeObject) -> Mapping[str, Any]:
    return mapping(spec(rd).get("targets"))


def _listed(rd: KubeObject, ns: str, key: str) -> bool:
    return ns in listed_names(_targets(rd), key)


def _selected(rd: KubeObject, ns: KubeObject) -> bool:
    selector = mapping(_targets(rd).get("namespaceLabelSelector"))
    if not (selector.get("matchLabels") or selector.get("matchExpressions")):
        return False
    try:
        return selector_matches(selector, labels(ns))
    except SelectorError:
        return False


def _targets_namespace(rd: KubeObject, ns: KubeObject) -> bool:
    """``matchViaTargets``: excluded never, else all, listed, or selected."""
    if _listed(rd, name(ns), "excludedNamespaces"):
        return False
    return (
        bool(_targets(rd).get("allNamespaces"))
        or _listed(rd, name(ns), "includedNamespaces")
        or _selected(rd, ns)
    )


async def _attempt(ns: str, condition: int, call: Awaitable[Any]) -> Failure | None:
    """Run one write; its error as a :class:`Failure` of ``condition`` (NotFound is no error)."""
    try:
        await call
    except NotFoundError:
        return None
    except KruiseError as err:
        return Failure(condition, ns, str(err))
    return None


class ResourceDistributionController(CacheController):
    """Reconciles ResourceDistributions (cluster-scoped: the key is the name)."""

    name = "resourcedistribution-controller"

    def spec(self) -> ControllerSpec:
        """Woken by distributors (spec changes), namespaces (:meth:`namespace_keys`) and copies."""
        return ControllerSpec(
            name=self.name,
            watches=(
                Watch(RESOURCEDISTRIBUTIONS, lambda _: (), delta_keys=self.distributor_keys),
                Watch(NAMESPACES, lambda _: (), delta_keys=self.namespace_keys),
                Watch(SECRETS, lambda _: (), {BY_NAME: _by_name}, delta_keys=_copy_keys),
                Watch(CONFIGMAPS, lambda _: (), {BY_NAME: _by_name}, delta_keys=_copy_keys),
            ),
            workers=self.workers,
        )

    @staticmethod
    def distributor_keys(delta: Delta) -> Iterable[str]:
        """Creations, deletions and spec changes (a status write does not wake it again)."""
        if delta.type is EventType.MODIFIED and delta.old is not None and spec(delta.old) == spec(delta.obj):
            return ()
        return (name(delta.obj),)

    def namespace_keys(self, delta: Delta) -> Iterable[str]:
        """The distributors a namespace event matters to (``enqueueRequestForNamespace``)."""
        ns, old = delta.obj, delta.old
        rds = self.cache.list(RESOURCEDISTRIBUTIONS)
        if delta.type is EventType.ADDED:
            return [name(rd) for rd in rds if _targets_namespace(rd, ns)]
        if delta.type is EventType.DELETED:
            return [name(rd) for rd in rds if _listed(rd, name(ns), "includedNamespaces")]
        if old is None or labels(old) == labels(ns):
            return ()
        return [name(rd) for rd in rds if _selected(rd, ns) or _selected(rd, old)]

    async def reconcile(self, key: str) -> Result:
        rd = self.cache.get(RESOURCEDISTRIBUTIONS, key)
        if rd is None:
            return Result()
        resource = mapping(spec(rd).get("resource"))
        res = KINDS.get(str(resource.get("kind")))
        existing: dict[str, KubeObject] = {}
        if res is not None:
            existing = {namespace_of(o): o for o in self.cache.by_index(res, BY_NAME, name(resource))}
        try:
            decided = plan(rd, self.cache.list(NAMESPACES), existing)
        except SelectorError as err:
            log.error("%s: namespaceLabelSelector: %s", key, err)
            return Result()
        if decided is None or res is None:
            log.error("%s: spec.resource is not a named Secret or ConfigMap; nothing to do", key)
            return Result()
        failures = list(decided.failures)
        results = await asyncio.gather(
            *(self._create(res, rd, ns, body) for ns, body in decided.create.items()),
            *(
                _attempt(ns, UPDATE_FAILED, self.kube.replace(res, body))
                for ns, body in decided.update.items()
            ),
            *(
                _attempt(ns, DELETE_FAILED, self.kube.delete(res, name(resource), ns, uid=u or None))
                for ns, u in decided.delete.items()
            ),
        )
        failures.extend(f for f in results if f is not None)
        for f in failures:
            if f.condition not in (CONFLICT, NOT_EXISTS):
                log.warning("%s: namespace %s: %s", key, f.namespace, f.reason)
        await self._write_status(rd, new_status(rd, decided.desired, failures, _now()))
        hard = [f for f in failures if f.condition not in (CONFLICT, NOT_EXISTS)]
        if hard:
            raise ResourceDistributionSyncError(
                f"{key}: {'; '.join(f'{f.namespace}: {f.reason}' for f in hard)}"
            )
        return Result()

    async def _create(self, res: Resource, rd: KubeObject, ns: str, body: dict[str, Any]) -> Failure | None:
        try:
            await self.kube.create(res, body, ns)
        except AlreadyExistsError:
            live = await self.kube.get_or_none(res, name(body), ns)
            if live is not None and not is_controlled_by(live, rd):
                return Failure(CONFLICT, ns, CONFLICT_REASON)
        except KruiseError as err:
            return Failure(CREATE_FAILED, ns, str(err))
        return None

    async def _write_status(self, rd: KubeObject, wanted: Mapping[str, Any]) -> None:
        if dict(wanted) == dict(status(rd)):
            return
        with contextlib.suppress(NotFoundError):
            await self.kube.patch(
                RESOURCEDISTRIBUTIONS,
                name(rd),
                {"status": dict(wanted)},
                patch_type="merge",
                subresource="status",
            )
