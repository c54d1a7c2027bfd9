"""The PersistentPodState controller shell: upstream's ``persistentpodstate-controller`` (v1.8).

Two kinds of keys share the queue:

- ``<ns>/<name>``: a PersistentPodState. Its target (native or Advanced StatefulSet) and the pods
  it controls come from the cache, node labels from the Node informer;
  :func:`~.core.next_status` decides and the whole status is written (status subresource, an
  update with the cached resourceVersion, so a conflict retries the round).
- ``<ns>/generate#<apiVersion>#StatefulSet#<name>`` (upstream's request name): a StatefulSet's
  auto-generation annotations (:func:`~.core.wants_generated`) create or update the
  PersistentPodState named after it (:func:`~.core.generated_pps`); with ``auto-generate``
  no longer ``"true"`` the PersistentPodState of that name is deleted. When the topology
  annotations are both empty nothing is done.

Wake-ups, as upstream's handlers: every PersistentPodState event; a pod controlled by a
StatefulSet that becomes ready, starts terminating or is deleted (its PersistentPodState: the
one named in ``kruise.io/injected-persistent-pod-state`` or the one targeting its owner); a
StatefulSet created with the annotations or whose annotations change (generation key), starting
to terminate or deleted (its PersistentPodState, to clear the states); here also a StatefulSet
whose ``spec.replicas`` changes.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable, Mapping
from typing import Any, cast

from kruise.core.errors import AlreadyExistsError, NotFoundError
from kruise.core.informer.store import Delta, EventType
from kruise.core.kube.resources import NATIVE_STATEFULSETS, NODES, PODS, STATEFULSETS, Resource
from kruise.core.runtime import OWNER_UID, ControllerSpec, Read, Watch, controller_ref
from kruise.core.runtime.spec import index_by_owner_uid
from kruise.core.workqueue import Result
from kruise.workloads.api.persistentpodstate import (
    AUTO_GENERATE_ANNOTATION,
    INJECTED_ANNOTATION,
    PERSISTENTPODSTATES,
    PREFERRED_TOPOLOGY_ANNOTATION,
    REQUIRED_TOPOLOGY_ANNOTATION,
    PersistentPodStateView,
)
from kruise.workloads.controllerbase import CacheController
from kruise.workloads.objects import (
    KubeObject,
    annotations_of,
    is_being_deleted,
    labels,
    name,
    namespace,
    spec,
    uid,
)
from kruise.workloads.persistentpodstate.core import (
    Workload,
    generated_pps,
    is_statefulset,
    next_status,
    selected,
    wants_generated,
)
from kruise.workloads.pods import is_ready
from kruise.workloads.statefulset.identity import reserved_ordinals

__all__ = ["GENERATE_PREFIX", "PersistentPodStateController"]

log = logging.getLogger(__name__)

GENERATE_PREFIX = "generate#"
"""Queue keys ``<ns>/generate#<apiVersion>#<kind>#<name>`` ask for auto-generation."""
WORKLOADS: Mapping[str, Resource] = {"apps": NATIVE_STATEFULSETS, "apps.kruise.io": STATEFULSETS}
_WATCHED_ANNOTATIONS = (AUTO_GENERATE_ANNOTATION, REQUIRED_TOPOLOGY_ANNOTATION, PREFERRED_TOPOLOGY_ANNOTATION)


def _workload_resource(api_version: str, kind: str) -> Resource | None:
    if not is_statefulset(api_version, kind):
        return None
    return WORKLOADS[api_version.rpartition("/")[0]]


def _generate_key(sts: KubeObject, api_version: str) -> str:
    return f"{namespace(sts)}/{GENERATE_PREFIX}{api_version}#StatefulSet#{name(sts)}"


class PersistentPodStateController(CacheController):
    """Reconciles PersistentPodStates and the StatefulSets that ask for one."""

    name = "persistentpodstate-controller"

    def spec(self) -> ControllerSpec:
        """Woken by PersistentPodStates, pods (:meth:`pod_keys`) and StatefulSets."""
        return ControllerSpec(
            name=self.name,
            watches=(
                Watch(PERSISTENTPODSTATES, lambda obj: (f"{namespace(obj)}/{name(obj)}",)),
                Watch(PODS, lambda _: (), {OWNER_UID: index_by_owner_uid}, delta_keys=self.pod_keys),
                Watch(NATIVE_STATEFULSETS, lambda _: (), delta_keys=self.statefulset_keys),
                Watch(STATEFULSETS, lambda _: (), delta_keys=self.statefulset_keys),
            ),
            reads=(Read(NODES),),
            workers=self.workers,
        )

    def _pps_of(self, ns: str, target: Mapping[str, Any]) -> PersistentPodStateView | None:
        ppss = [
            cast(PersistentPodStateView, p)
            for p in self.cache.list(PERSISTENTPODSTATES)
            if namespace(p) == ns
        ]
        return selected(ppss, target)

    def pod_keys(self, delta: Delta) -> Iterable[str]:
        """A deleted pod, or one that became ready or started terminating, wakes its PPS."""
        pod, old = delta.obj, delta.old
        if delta.type is EventType.ADDED:
            return ()
        if delta.type is EventType.MODIFIED:
            if old is None:
                return ()
            terminating = is_being_deleted(pod) and not is_being_deleted(old)
            if not terminating and not (is_ready(pod) and not is_ready(old)):
                return ()
        ref = controller_ref(pod)
        if ref is None or not is_statefulset(str(ref.get("apiVersion") or ""), str(ref.get("kind") or "")):
            return ()
        injected = annotations_of(pod).get(INJECTED_ANNOTATION)
        if injected:
            return (f"{namespace(pod)}/{injected}",)
        pps = self._pps_of(namespace(pod), ref)
        return (f"{namespace(pod)}/{name(pps)}",) if pps is not None else ()

    def statefulset_keys(self, delta: Delta) -> Iterable[str]:
        """Generation keys on creation (asking for one) and annotation changes; the targeting
        PPS when the StatefulSet is deleted, starts terminating or changes its replicas."""
        sts, old = delta.obj, delta.old
        api_version = str(sts.get("apiVersion") or "")  # the informers keep it on every item
        keys: list[str] = []
        if delta.type is EventType.ADDED and wants_generated(annotations_of(sts)):
            keys.append(_generate_key(sts, api_version))
        if delta.type is EventType.MODIFIED and old is not None:
            before, after = annotations_of(old), annotations_of(sts)
            if any(before.get(k) != after.get(k) for k in _WATCHED_ANNOTATIONS):
                keys.append(_generate_key(sts, api_version))
        if (
            delta.type is EventType.DELETED
            or (old is not None and is_being_deleted(sts) and not is_being_deleted(old))
            or (old is not None and spec(old).get("replicas") != spec(sts).get("replicas"))
        ):
            target = {"apiVersion": api_version, "kind": "StatefulSet", "name": name(sts)}
            pps = self._pps_of(namespace(sts), target)
            if pps is not None:
                keys.append(f"{namespace(sts)}/{name(pps)}")
        return keys

    async def reconcile(self, key: str) -> Result:
        ns, _, obj_name = key.partition("/")
        if obj_name.startswith(GENERATE_PREFIX):
            await self._generate(ns, obj_name)
            return Result()
        pps = self.cache.get(PERSISTENTPODSTATES, key)
        if pps is None:
            return Result()
        view = cast(PersistentPodStateView, pps)
        target = view.get("spec", {}).get("targetRef") or {}
        res = _workload_resource(str(target.get("apiVersion") or ""), str(target.get("kind") or ""))
        sts = self.cache.get(res, f"{ns}/{target.get('name')}") if res is not None else None
        workload: Workload | None = None
        pods: dict[str, KubeObject] = {}
        if sts is not None:
            replicas = spec(sts).get("replicas")
            workload = Workload(
                replicas=1 if replicas is None else int(replicas),
                reserve_ordinals=reserved_ordinals(sts) if res is STATEFULSETS else frozenset(),
                deleting=is_being_deleted(sts),
            )
            pods = {name(p): p for p in self.cache.by_index(PODS, OWNER_UID, uid(sts))}

        def node_labels(node: str) -> Mapping[str, str] | None:
            obj = self.cache.get(NODES, node)
            return labels(obj) if obj is not None else None

        wanted = next_status(view, workload, pods, node_labels)
        if dict(wanted) != dict(view.get("status") or {}):
            with contextlib.suppress(NotFoundError):
                await self.kube.replace(
                    PERSISTENTPODSTATES, {**pps, "status": dict(wanted)}, subresource="status"
                )
        return Result()

    async def _generate(self, ns: str, request: str) -> None:
        parts = request.split("#")
        if len(parts) != 4:
            log.info("persistentpodstate: invalid generation request %s", request)
            return
        _, api_version, kind, sts_name = parts
        res = _workload_resource(api_version, kind)
        sts = self.cache.get(res, f"{ns}/{sts_name}") if res is not None else None
        if sts is None:
            return
        existing = self.cache.get(PERSISTENTPODSTATES, f"{ns}/{sts_name}")
        annotations = annotations_of(sts)
        if annotations.get(AUTO_GENERATE_ANNOTATION) == "true":
            if not wants_generated(annotations):
                log.info("persistentpodstate: %s/%s annotations are incomplete", ns, sts_name)
                return
            body = generated_pps({**sts, "apiVersion": api_version, "kind": kind})
            if existing is None:
                with contextlib.suppress(AlreadyExistsError):
                    await self.kube.create(PERSISTENTPODSTATES, body, ns)
            elif spec(existing) != body["spec"]:
                await self.kube.replace(PERSISTENTPODSTATES, {**existing, "spec": body["spec"]})
            return
        if existing is not None:
            await self.kube.delete(PERSISTENTPODSTATES, sts_name, ns, missing_ok=True)
