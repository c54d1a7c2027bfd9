"""The PodProbeMarker and NodePodProbe controllers (shells over :mod:`.plan`).

- ``podprobemarker-controller`` (woken by markers, pods of their namespace and NodePodProbes):
  puts the finalizer ``kruise.io/node-pod-probe-cleanup`` on each marker, merges its probes for
  each matching pod into that pod's node's NodePodProbe (a missing NodePodProbe is skipped, as
  upstream) and writes ``status.{observedGeneration, matchedPods}``; a deleting marker has its
  probes removed from the NodePodProbes of its pods, then loses the finalizer.
- ``nodepodprobe-controller`` (woken by NodePodProbes, Nodes and pods going away): creates one
  NodePodProbe per Node (not virtual-kubelet ones), deletes it with its Node, drops the entries of
  pods gone, and turns the daemon's ``status.podProbeStatuses`` into each pod's conditions, labels
  and annotations.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from kruise.core.errors import AlreadyExistsError, ConflictError, NotFoundError, TransientError
from kruise.core.informer.store import Delta, EventType
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import NODES, PODS
from kruise.core.runtime import CacheReader, ControllerSpec, primary
from kruise.core.runtime.spec import Read, Watch
from kruise.core.workqueue import Result
from kruise.daemon.api.podprobe import NODEPODPROBES, PODPROBEMARKER_FINALIZER, PODPROBEMARKERS
from kruise.daemon.imagepulljob.selectors import matches
from kruise.daemon.podprobemarker.plan import (
    PodMarking,
    candidate,
    merge_marker,
    pod_active,
    pod_marking,
    prune_pods,
    remove_marker,
)

__all__ = ["NodePodProbeController", "PodProbeMarkerController"]

log = logging.getLogger("kruise.podprobemarker")
JSON = dict[str, Any]
VIRTUAL_KUBELET = ("type", "virtual-kubelet")
RETRY = 1.0


def _virtual(node: JSON) -> bool:
    return (node["metadata"].get("labels") or {}).get(VIRTUAL_KUBELET[0]) == VIRTUAL_KUBELET[1]


async def _write_pod_probes(kube: KubeClient, node: str, edit: Any) -> bool:
    """Replace ``spec.podProbes`` of NodePodProbe ``node`` with ``edit(current)`` (conflicts retried)."""
    for _ in range(5):
        try:
            npp = await kube.get(NODEPODPROBES, node)
        except NotFoundError:
            return False
        current = (npp.get("spec") or {}).get("podProbes") or []
        new = edit(current)
        if new == current:
            return False
        spec = dict(npp.get("spec") or {})
        if new:
            spec["podProbes"] = new
        else:
            spec.pop("podProbes", None)
        try:
            await kube.replace(NODEPODPROBES, {**npp, "spec": spec})
            return True
        except ConflictError:
            continue
    raise TransientError(f"NodePodProbe {node}: too many conflicts")


class PodProbeMarkerController:
    """PodProbeMarker -> NodePodProbe specs (module docstring)."""

    name = "podprobemarker-controller"

    def __init__(self, kube: KubeClient, cache: CacheReader) -> None:
        self.kube = kube
        self.cache = cache

    def spec(self) -> ControllerSpec:
        return ControllerSpec(
            name=self.name,
            watches=(
                primary(PODPROBEMARKERS),
                Watch(PODS, self._markers_of),
                Watch(NODEPODPROBES, lambda _o: (), delta_keys=self._all_on_create),
            ),
            reads=(Read(NODES),),
        )

    def _markers_of(self, pod: JSON) -> Iterable[str]:
        ns = pod["metadata"].get("namespace")
        labels = pod["metadata"].get("labels") or {}
        return [
            f"{ns}/{m['metadata']['name']}"
            for m in self.cache.list(PODPROBEMARKERS)
            if m["metadata"].get("namespace") == ns and matches((m.get("spec") or {}).get("selector"), labels)
        ]

    def _all_on_create(self, delta: Delta) -> Iterable[str]:
        if delta.type is not EventType.ADDED:
            return ()
        return [
            f"{m['metadata']['namespace']}/{m['metadata']['name']}" for m in self.cache.list(PODPROBEMARKERS)
        ]

    def _pods(self, ppm: JSON) -> list[JSON]:
        ns = ppm["metadata"]["namespace"]
        selector = (ppm.get("spec") or {}).get("selector") or {}
        if not selector:
            return []
        out = []
        for pod in self.cache.list(PODS):
            if pod["metadata"].get("namespace") != ns or not candidate(pod):
                continue
            if not matches(selector, pod["metadata"].get("labels") or {}):
                continue
            node = self.cache.get(NODES, pod["spec"]["nodeName"])
            if node is None or _virtual(node):
                continue
            out.append(pod)
        return out

    async def reconcile(self, key: str) -> Result | None:
        ppm = self.cache.get(PODPROBEMARKERS, key)
        if ppm is None:
            return None
        meta = ppm["metadata"]
        ns, name = meta["namespace"], meta["name"]
        pods = self._pods(ppm)
        finalizers = list(meta.get("finalizers") or [])
        if meta.get("deletionTimestamp"):
            if PODPROBEMARKER_FINALIZER not in finalizers:
                return None
            for node in {p["spec"]["nodeName"] for p in pods} | {
                n["metadata"]["name"] for n in self.cache.list(NODEPODPROBES)
            }:
                await _write_pod_probes(self.kube, node, lambda cur: remove_marker(cur, ns, name))
            finalizers.remove(PODPROBEMARKER_FINALIZER)
            patch = {"metadata": {"finalizers": finalizers, "resourceVersion": meta["resourceVersion"]}}
            await self.kube.patch(PODPROBEMARKERS, name, patch, ns)
            log.info("PodProbeMarker %s: probes removed, finalizer removed", key)
            return None
        if PODPROBEMARKER_FINALIZER not in finalizers:
            patch = {
                "metadata": {
                    "finalizers": [*finalizers, PODPROBEMARKER_FINALIZER],
                    "resourceVersion": meta["resourceVersion"],
                }
            }
            ppm = await self.kube.patch(PODPROBEMARKERS, name, patch, ns)
        by_node: dict[str, list[JSON]] = {}
        for pod in pods:
            by_node.setdefault(pod["spec"]["nodeName"], []).append(pod)
        for node, node_pods in sorted(by_node.items()):
            if await _write_pod_probes(self.kube, node, lambda cur, np=node_pods: merge_marker(cur, ppm, np)):
                log.info("PodProbeMarker %s: NodePodProbe %s updated", key, node)
        status = ppm.get("status") or {}
        generation = ppm["metadata"].get("generation", 0)
        if status.get("observedGeneration") != generation or status.get("matchedPods", 0) != len(pods):
            body = {"status": {"observedGeneration": generation, "matchedPods": len(pods)}}
            try:
                await self.kube.patch(PODPROBEMARKERS, name, body, ns, subresource="status")
            except NotFoundError:
                return None
        return None


class NodePodProbeController:
    """NodePodProbe lifecycle and status -> pods (module docstring)."""

    name = "nodepodprobe-controller"

    def __init__(self, kube: KubeClient, cache: CacheReader) -> None:
        self.kube = kube
        self.cache = cache

    def spec(self) -> ControllerSpec:
        return ControllerSpec(
            name=self.name,
            watches=(
                primary(NODEPODPROBES),
                Watch(NODES, lambda node: () if _virtual(node) else (node["metadata"]["name"],)),
                Watch(PODS, lambda _o: (), delta_keys=self._pod_gone),
                Watch(PODPROBEMARKERS, lambda _o: (), delta_keys=self._nodes_of_marker),
            ),
        )

    def _pod_gone(self, delta: Delta) -> Iterable[str]:
        node = (delta.obj.get("spec") or {}).get("nodeName")
        if not node:
            return ()
        if delta.type is EventType.DELETED or not pod_active(delta.obj):
            return (node,)
        return ()

    def _nodes_of_marker(self, delta: Delta) -> Iterable[str]:
        ns = delta.obj["metadata"].get("namespace")
        return [
            n["metadata"]["name"]
            for n in self.cache.list(NODEPODPROBES)
            if any(p.get("namespace") == ns for p in (n.get("spec") or {}).get("podProbes") or ())
        ]

    async def reconcile(self, key: str) -> Result | None:
        npp = self.cache.get(NODEPODPROBES, key)
        node = self.cache.get(NODES, key)
        if npp is None:
            if node is None or node["metadata"].get("deletionTimestamp") or _virtual(node):
                return None
            body = {
                "apiVersion": "apps.kruise.io/v1alpha1",
                "kind": "NodePodProbe",
                "metadata": {"name": key},
            }
            try:
                await self.kube.create(NODEPODPROBES, body)
                log.info("NodePodProbe %s created", key)
            except AlreadyExistsError:
                pass
            return None
        if node is None or node["metadata"].get("deletionTimestamp"):
            await self.kube.delete(NODEPODPROBES, key, missing_ok=True)
            log.info("NodePodProbe %s deleted with its Node", key)
            return None

        def live(ns: str, name: str) -> JSON | None:
            return self.cache.get(PODS, f"{ns}/{name}")

        cached = (npp.get("spec") or {}).get("podProbes") or []
        if prune_pods(cached, live) != cached:  # read and written only when something is gone:
            # a probe the cache does not show yet is pruned when its own event brings it
            await _write_pod_probes(self.kube, key, lambda cur: prune_pods(cur, live))
        for status in (npp.get("status") or {}).get("podProbeStatuses") or ():
            pod = live(str(status.get("namespace")), str(status.get("name")))
            if pod is None or not pod_active(pod) or pod["metadata"].get("uid") != status.get("uid"):
                continue

            def marker(name: str, ns: str = str(status.get("namespace"))) -> JSON | None:
                ppm = self.cache.get(PODPROBEMARKERS, f"{ns}/{name}")
                return None if ppm is None or ppm["metadata"].get("deletionTimestamp") else ppm

            marking = pod_marking(pod, status.get("probeStates") or (), marker)
            if marking is not None:
                try:
                    await self._mark(pod, marking)
                except NotFoundError:
                    continue
                except ConflictError:
                    return Result(requeue_after=RETRY)
        return None

    async def _mark(self, pod: JSON, marking: PodMarking) -> None:
        meta = pod["metadata"]
        if marking.labels or marking.annotations:
            patch: JSON = {"metadata": {}}
            if marking.labels:
                patch["metadata"]["labels"] = marking.labels
            if marking.annotations:
                patch["metadata"]["annotations"] = marking.annotations
            await self.kube.patch(PODS, meta["name"], patch, meta["namespace"])
        if marking.conditions:
            body = {"status": {"conditions": marking.conditions}}
            await self.kube.patch(
                PODS, meta["name"], body, meta["namespace"], patch_type="strategic", subresource="status"
            )
        log.info("pod %s/%s marked: %s", meta["namespace"], meta["name"], marking)
