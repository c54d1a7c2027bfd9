"""Container launch priority, the rule as data (pure).

OpenKruise's ``ContainerLaunchPriority`` (``K:apis/apps/pub/launch_priority.go``,
``K:pkg/webhook/pod/mutating/container_launch_priority_initialization.go``,
``K:pkg/controller/containerlaunchpriority``) starts a pod's containers in order without any
change to the kubelet:

- **Who asks.** A pod with annotation ``apps.kruise.io/container-launch-priority: Ordered``
  (priority follows container order: the first container 0, the next -1, ...), or whose
  containers carry env ``KRUISE_CONTAINER_PRIORITY=<int>`` (missing means 0; higher starts
  first; all equal means no order). A pod of one container is left alone; a value that is not
  an integer refuses the pod (:class:`ValueError`, strconv's wording).
- **Injection** (pod webhook, CREATE, after SidecarSet injection so sidecars take part): each
  container gets env ``KRUISE_CONTAINER_BARRIER`` from ``configMapKeyRef`` of the pod's barrier
  ConfigMap ``<pod>-barrier``, key ``p_<priority>``. A pod named only by ``generateName`` is given
  its name here, since the ConfigMap's name needs it.
- **Order** (controller): the kubelet cannot create a container whose ``configMapKeyRef`` key is
  missing, so the controller creates the barrier ConfigMap (owned by the pod) and adds the key of
  the highest priority among the not-ready containers; when those containers are ready it adds the
  next. Once the lowest priority's key exists the pod is marked
  ``apps.kruise.io/container-launch-priority-completed: "true"`` and never looked at again.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "BARRIER_ENV",
    "COMPLETED_KEY",
    "ORDERED",
    "PRIORITY_ANNOTATION",
    "PRIORITY_ENV",
    "Step",
    "barrier_key",
    "barrier_name",
    "container_priority",
    "decide",
    "generate_name",
    "inject",
    "needs_attention",
    "next_priorities",
    "priorities",
]

PRIORITY_ENV = "KRUISE_CONTAINER_PRIORITY"
BARRIER_ENV = "KRUISE_CONTAINER_BARRIER"
PRIORITY_ANNOTATION = "apps.kruise.io/container-launch-priority"
ORDERED = "Ordered"
COMPLETED_KEY = "apps.kruise.io/container-launch-priority-completed"
_KEY_PREFIX = "p_"
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
"""Kubernetes' ``SimpleNameGenerator`` alphabet (no vowels, no 0/1/3)."""

JSON = dict[str, Any]


def barrier_name(pod_name: str) -> str:
    """``<pod>-barrier``: the pod's barrier ConfigMap."""
    return f"{pod_name}-barrier"


def barrier_key(priority: int) -> str:
    """``p_<priority>`` (``p_-1`` for -1)."""
    return f"{_KEY_PREFIX}{priority}"


def generate_name(prefix: str, draw: random.Random | None = None) -> str:
    """``prefix`` + 5 characters, as the API server names a ``generateName`` object."""
    rng = draw or random.SystemRandom()
    return prefix + "".join(rng.choice(_NAME_ALPHABET) for _ in range(5))


def _annotations(pod: Mapping[str, Any]) -> Mapping[str, Any]:
    return (pod.get("metadata") or {}).get("annotations") or {}


def priorities(pod: Mapping[str, Any]) -> list[int] | None:
    """Each container's launch priority, or None when the pod asks for no order.

    Raises:
        ValueError: a ``KRUISE_CONTAINER_PRIORITY`` value is not an integer.
    """
    containers: Sequence[Mapping[str, Any]] = (pod.get("spec") or {}).get("containers") or ()
    if len(containers) <= 1:
        return None
    if _annotations(pod).get(PRIORITY_ANNOTATION) == ORDERED:
        return [-i for i in range(len(containers))]
    found: list[int] = []
    for container in containers:
        value = 0
        for env in container.get("env") or ():
            if env.get("name") == PRIORITY_ENV:
                raw = str(env.get("value") or "")
                try:
                    value = int(raw, 10)
                except ValueError:
                    raise ValueError(f'strconv.Atoi: parsing "{raw}": invalid syntax') from None
        found.append(value)
    if all(v == 0 for v in found) or len(set(found)) == 1:
        return None
    return found


def inject(pod: JSON, order: Sequence[int], draw: random.Random | None = None) -> None:
    """Append the barrier env of ``order[i]`` to container ``i`` of ``pod`` (in place), naming the
    pod first when it has only ``generateName``."""
    meta = pod.setdefault("metadata", {})
    if not meta.get("name") and meta.get("generateName"):
        meta["name"] = generate_name(str(meta["generateName"]), draw)
    name = str(meta.get("name") or "")
    for container, priority in zip(pod["spec"]["containers"], order, strict=True):
        container.setdefault("env", []).append(
            {
                "name": BARRIER_ENV,
                "valueFrom": {"configMapKeyRef": {"name": barrier_name(name), "key": barrier_key(priority)}},
            }
        )


def container_priority(container: Mapping[str, Any]) -> int | None:
    """The priority in a container's barrier env, or None without one."""
    for env in container.get("env") or ():
        if env.get("name") == BARRIER_ENV:
            key = str((((env.get("valueFrom") or {}).get("configMapKeyRef") or {}).get("key")) or "")
            try:
                return int(key[len(_KEY_PREFIX) :])
            except ValueError:
                return None
    return None


def next_priorities(pod: Mapping[str, Any]) -> list[int]:
    """The priorities of the containers not ready yet, ascending."""
    ready = {
        s.get("name") for s in (pod.get("status") or {}).get("containerStatuses") or () if s.get("ready")
    }
    found = [
        p
        for c in (pod.get("spec") or {}).get("containers") or ()
        if c.get("name") not in ready
        for p in (container_priority(c),)
        if p is not None
    ]
    return sorted(found)


@dataclass(frozen=True)
class Step:
    """What the controller does next: add the key ``add`` (``p_<n>``, None: nothing), then mark
    the pod completed when ``complete``."""

    add: str | None = None
    complete: bool = False


def needs_attention(pod: Mapping[str, Any]) -> bool:
    """Upstream's event filter (without its cache read of the barrier): not completed, containers
    not all ready, and some container still waiting behind a barrier."""
    if _annotations(pod).get(COMPLETED_KEY) == "true":
        return False
    for cond in (pod.get("status") or {}).get("conditions") or ():
        if cond.get("type") == "ContainersReady" and cond.get("status") == "True":
            return False
    return bool(next_priorities(pod))


def decide(pod: Mapping[str, Any], barrier: Mapping[str, Any]) -> Step:
    """The next step for ``pod`` given its barrier ConfigMap's ``data`` (``barrier``)."""
    waiting = next_priorities(pod)
    if not waiting or barrier_key(waiting[0]) in barrier:
        return Step(complete=True)
    highest = barrier_key(waiting[-1])
    add = None if highest in barrier else highest
    return Step(add=add, complete=waiting[-1] == waiting[0])
