"""What the container-meta controller reports and restarts, from the pod and CRI (pure).

Upstream (``K:pkg/daemon/containermeta/container_meta_controller.go``), for each pod on the node
that a Kruise workload (an ``apps.kruise.io`` controller owner) or a SidecarSet (annotation
``kruise.io/sidecarset-hash``) manages:

- one ``runtime-containers-meta`` entry per container status that has a container ID the
  runtime knows: ``name``, ``containerID``, ``restartCount``, ``hashes.plainHash`` (the kubelet's
  ``io.kubernetes.container.hash``, hexadecimal on the container) and, with gate
  ``InPlaceUpdateEnvFromMetadata``, ``hashes.extractedEnvFromMetadataHash``: the hash of the
  metadata-sourced env values the running container really has (computed once per container
  ID, from ``env`` run in it; :mod:`kruise.core.containermeta`);
- while the pod's ``InPlaceUpdateReady`` condition is ``False`` (an in-place update is under
  way), a running container whose hash differs from what the pod's labels/annotations now ask
  for is restarted (CRI ``StopContainer``; the kubelet starts it again with the new values),
  unless the update also changes its image and it still runs the old one (its status
  ``imageID`` is the one ``apps.kruise.io/inplace-update-state`` recorded before the update):
  the kubelet restarts that one anyway, with the new env too, and a second stop would cost the
  pod a second restart;
- the annotation is written (``pods/status``) only when it changed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kruise.core.containermeta import (
    RUNTIME_CONTAINERS_META_KEY,
    RuntimeContainerMeta,
    RuntimeContainerMetaSet,
    expected_hash,
    parse_meta_set,
)
from kruise.daemon.cri.port import ContainerState, CriContainer

__all__ = ["KUBELET_HASH_ANNOTATION", "MetaPlan", "managed", "plan_meta", "runtime_id", "stale"]

KUBELET_HASH_ANNOTATION = "io.kubernetes.container.hash"
IN_PLACE_UPDATE_STATE = "apps.kruise.io/inplace-update-state"
SIDECARSET_HASH = "kruise.io/sidecarset-hash"
IN_PLACE_UPDATE_READY = "InPlaceUpdateReady"


def runtime_id(container_id: str) -> str:
    """``containerd://abc`` -> ``abc``."""
    return container_id.partition("://")[2] or container_id


def managed(pod: Mapping[str, Any]) -> bool:
    """A pod upstream's daemon looks at: owned by an ``apps.kruise.io`` controller, or injected by
    a SidecarSet; not being deleted; with container statuses."""
    meta = pod.get("metadata") or {}
    if meta.get("deletionTimestamp") or not (pod.get("status") or {}).get("containerStatuses"):
        return False
    owners = meta.get("ownerReferences") or ()
    kruise = any(
        o.get("controller") and str(o.get("apiVersion", "")).startswith("apps.kruise.io/") for o in owners
    )
    return kruise or SIDECARSET_HASH in (meta.get("annotations") or {})


def _condition(pod: Mapping[str, Any], ctype: str) -> str | None:
    for cond in (pod.get("status") or {}).get("conditions") or ():
        if cond.get("type") == ctype:
            return str(cond.get("status"))
    return None


def stale(pod: Mapping[str, Any], env_gate: bool = True) -> bool:
    """Upstream's event filter: the pod is managed and its annotation is missing, lists other
    container IDs than the status, or (with the gate) another env hash than the metadata asks."""
    if not managed(pod):
        return False
    meta_set = parse_meta_set((pod["metadata"].get("annotations") or {}).get(RUNTIME_CONTAINERS_META_KEY))
    statuses = [s for s in pod["status"]["containerStatuses"] if s.get("containerID")]
    if meta_set is None or len(meta_set["containers"]) != len(pod["status"]["containerStatuses"]):
        return bool(statuses)
    entries = {m.get("name"): m for m in meta_set["containers"]}
    labels = pod["metadata"].get("labels") or {}
    annotations = pod["metadata"].get("annotations") or {}
    specs = {c.get("name"): c for c in (pod.get("spec") or {}).get("containers") or ()}
    for status in statuses:
        entry = entries.get(status.get("name"))
        if entry is None or entry.get("containerID") != status.get("containerID"):
            return True
        if env_gate and status.get("name") in specs:
            want = expected_hash(specs[status["name"]], labels, annotations)
            if want != (entry.get("hashes") or {}).get("extractedEnvFromMetadataHash"):
                return True
    return False


def _image_updates(annotations: Mapping[str, Any]) -> Mapping[str, Any]:
    """``lastContainerStatuses`` of the in-place update under way (container name -> the imageID
    it ran before), from ``apps.kruise.io/inplace-update-state``; empty when unreadable."""
    try:
        state = json.loads(str(annotations.get(IN_PLACE_UPDATE_STATE) or "{}"))
    except ValueError:
        return {}
    found = state.get("lastContainerStatuses") if isinstance(state, dict) else None
    return found if isinstance(found, dict) else {}


def _kubelet_restarts(status: Mapping[str, Any], image_updates: Mapping[str, Any]) -> bool:
    """The in-place update changes this container's image and it still runs the old one: the
    kubelet restarts it itself (with the new env too), so stopping it as well would cost the pod
    a second restart."""
    before = image_updates.get(str(status.get("name") or ""))
    return isinstance(before, dict) and before.get("imageID") == status.get("imageID")


@dataclass(frozen=True)
class MetaPlan:
    """``meta``: the annotation's new value (``changed``: it differs from the pod's); ``needs_env``:
    running containers (runtime IDs) whose env must be read before the plan is final;
    ``restart``: runtime IDs to stop now."""

    meta: RuntimeContainerMetaSet
    needs_env: tuple[str, ...] = ()
    restart: tuple[str, ...] = ()
    changed: bool = False


def plan_meta(
    pod: Mapping[str, Any],
    runtime: Mapping[str, CriContainer],
    env_hashes: Mapping[str, int],
    *,
    env_gate: bool = True,
) -> MetaPlan:
    """The plan for ``pod`` given its containers in the runtime (``runtime``: runtime ID ->
    container) and the env hashes known so far (``env_hashes``: runtime ID -> hash)."""
    meta = pod.get("metadata") or {}
    annotations = meta.get("annotations") or {}
    old = parse_meta_set(annotations.get(RUNTIME_CONTAINERS_META_KEY))
    old_by_id = {m.get("containerID"): m for m in (old or {"containers": []})["containers"]}
    specs = {c.get("name"): c for c in (pod.get("spec") or {}).get("containers") or ()}
    updating = _condition(pod, IN_PLACE_UPDATE_READY) == "False"
    image_updates = _image_updates(annotations)
    entries: list[RuntimeContainerMeta] = []
    needs_env: list[str] = []
    restart: list[str] = []
    for status in (pod.get("status") or {}).get("containerStatuses") or ():
        full_id = str(status.get("containerID") or "")
        container = runtime.get(runtime_id(full_id)) if full_id else None
        spec = specs.get(status.get("name"))
        if container is None or spec is None:
            continue
        previous = old_by_id.get(full_id)
        if previous is not None:
            entry: RuntimeContainerMeta = {
                "name": previous["name"],
                "containerID": previous["containerID"],
                "restartCount": previous["restartCount"],
                "hashes": dict(previous.get("hashes") or {"plainHash": 0}),  # type: ignore[typeddict-item]
            }
        else:
            plain = container.annotations.get(KUBELET_HASH_ANNOTATION, "0")
            entry = {
                "name": str(status["name"]),
                "containerID": full_id,
                "restartCount": int(status.get("restartCount") or 0),
                "hashes": {"plainHash": int(plain, 16) if plain else 0},
            }
        if env_gate:
            have = entry["hashes"].get("extractedEnvFromMetadataHash") or 0
            running = container.state is ContainerState.RUNNING
            if not have and running:
                if container.id in env_hashes:
                    have = entry["hashes"]["extractedEnvFromMetadataHash"] = env_hashes[container.id]
                else:
                    needs_env.append(container.id)
            if updating and have and running and not _kubelet_restarts(status, image_updates):
                labels = meta.get("labels") or {}
                if have != expected_hash(spec, labels, annotations):
                    restart.append(container.id)
        entries.append(entry)
    new: RuntimeContainerMetaSet = {"containers": entries}
    return MetaPlan(meta=new, needs_env=tuple(needs_env), restart=tuple(restart), changed=new != old)
