"""PodProbeMarker -> NodePodProbe -> Pod (pure): what the two manager controllers write.

Mirrors ``pkg/controller/podprobemarker`` and ``pkg/controller/nodepodprobe`` (v1.8.4):

- :func:`candidate` — a pod a marker probes: active (not Succeeded/Failed, not deleting),
  ``Initialized=True`` and scheduled.
- :func:`merge_marker` — a marker's probes folded into its node's ``spec.podProbes``: a new pod
  entry ``{name, namespace, uid, IP, probes}``, or, for a pod already there, its IP filled in when
  empty and each probe ``<marker>#<probe>`` added or replaced. A named tcpSocket/httpGet port is
  resolved to the container's port number (a probe whose port cannot be resolved is skipped).
- :func:`remove_marker` — a deleted marker's probes dropped (pods of its namespace only; a pod
  left without probes is dropped too).
- :func:`prune_pods` — entries of pods gone, inactive or replaced (another UID) dropped.
- :func:`pod_marking` — a pod's ``probeStates`` turned into its conditions (``podConditionType``:
  ``True`` when ``Succeeded``, else ``False``; the first probe of a type wins) and the labels and
  annotations of the matching ``markerPolicy`` (those of the other state's policy removed).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kruise.daemon.api.podprobe import PROBE_SUCCEEDED

__all__ = ["PodMarking", "candidate", "merge_marker", "pod_marking", "prune_pods", "remove_marker"]

JSON = dict[str, Any]


def pod_active(pod: Mapping[str, Any]) -> bool:
    """``controller.IsPodActive``."""
    phase = (pod.get("status") or {}).get("phase")
    return phase not in ("Succeeded", "Failed") and not (pod.get("metadata") or {}).get("deletionTimestamp")


def candidate(pod: Mapping[str, Any]) -> bool:
    """Whether a marker probes ``pod`` (module docstring)."""
    if not pod_active(pod) or not (pod.get("spec") or {}).get("nodeName"):
        return False
    for cond in (pod.get("status") or {}).get("conditions") or ():
        if cond.get("type") == "Initialized":
            return bool(cond.get("status") == "True")
    return False


def _port(pod: Mapping[str, Any], container_name: str, port: Any) -> int | None:
    if isinstance(port, int):
        return port
    for container in (pod.get("spec") or {}).get("containers") or ():
        if container.get("name") != container_name:
            continue
        for p in container.get("ports") or ():
            if p.get("name") == port:
                return int(p["containerPort"])
        try:
            return int(port)
        except (TypeError, ValueError):
            return None
    return None


def _resolved(probe: Mapping[str, Any], pod: Mapping[str, Any]) -> JSON | None:
    """The marker probe with a named port resolved against the pod, or None if it cannot be."""
    spec = copy.deepcopy(dict(probe.get("probe") or {}))
    for handler in ("tcpSocket", "httpGet"):
        action = spec.get(handler)
        if isinstance(action, dict) and not isinstance(action.get("port"), int):
            port = _port(pod, str(probe.get("containerName")), action.get("port"))
            if port is None:
                return None
            action["port"] = port
    return spec


def _entry(ppm_name: str, probe: Mapping[str, Any], spec: JSON) -> JSON:
    return {
        "name": f"{ppm_name}#{probe.get('name')}",
        "containerName": probe.get("containerName"),
        "probe": spec,
    }


def merge_marker(
    pod_probes: Sequence[Mapping[str, Any]], ppm: Mapping[str, Any], pods: Sequence[Mapping[str, Any]]
) -> list[JSON]:
    """``spec.podProbes`` with ``ppm``'s probes for ``pods`` (of this node) merged in."""
    out = [copy.deepcopy(dict(p)) for p in pod_probes]
    ppm_name = str(ppm["metadata"]["name"])
    probes = (ppm.get("spec") or {}).get("probes") or []
    for pod in pods:
        meta, ip = pod["metadata"], (pod.get("status") or {}).get("podIP") or ""
        entry = next(
            (
                e
                for e in out
                if e.get("name") == meta["name"]
                and e.get("namespace") == meta.get("namespace")
                and e.get("uid") == meta.get("uid")
            ),
            None,
        )
        if entry is None:
            entry = {
                "name": meta["name"],
                "namespace": meta.get("namespace"),
                "uid": meta.get("uid"),
                "IP": ip,
            }
            out.append(entry)
        elif not entry.get("IP"):
            entry["IP"] = ip
        current = entry.setdefault("probes", [])
        for probe in probes:
            spec = _resolved(probe, pod)
            if spec is None:
                continue
            new = _entry(ppm_name, probe, spec)
            for i, old in enumerate(current):
                if old.get("name") == new["name"]:
                    current[i] = new
                    break
            else:
                current.append(new)
        if not current:
            del entry["probes"]
    return out


def remove_marker(pod_probes: Sequence[Mapping[str, Any]], namespace: str, name: str) -> list[JSON]:
    """``spec.podProbes`` without the probes of marker ``namespace/name``."""
    out: list[JSON] = []
    for entry in pod_probes:
        if entry.get("namespace") != namespace:
            out.append(copy.deepcopy(dict(entry)))
            continue
        kept = [
            copy.deepcopy(p)
            for p in entry.get("probes") or ()
            if not str(p.get("name", "")).startswith(f"{name}#")
        ]
        if kept:
            out.append({**{k: v for k, v in entry.items() if k != "probes"}, "probes": kept})
    return out


def prune_pods(
    pod_probes: Sequence[Mapping[str, Any]], live: Callable[[str, str], Mapping[str, Any] | None]
) -> list[JSON]:
    """``spec.podProbes`` without pods that ``live(namespace, name)`` shows gone, inactive or replaced."""
    out = []
    for entry in pod_probes:
        pod = live(str(entry.get("namespace")), str(entry.get("name")))
        if pod is not None and pod_active(pod) and pod["metadata"].get("uid") == entry.get("uid"):
            out.append(dict(entry))
    return out


@dataclass
class PodMarking:
    """What to write on one pod: conditions to set, labels/annotations (None: remove)."""

    conditions: list[JSON] = field(default_factory=list)
    labels: dict[str, str | None] = field(default_factory=dict)
    annotations: dict[str, str | None] = field(default_factory=dict)


def pod_marking(
    pod: Mapping[str, Any],
    probe_states: Sequence[Mapping[str, Any]],
    marker: Callable[[str], Mapping[str, Any] | None],
) -> PodMarking | None:
    """The changes ``probe_states`` ask of ``pod`` (``marker(name)``: a live marker of the pod's
    namespace, None when gone or deleting), or None when the pod already shows them."""
    want = PodMarking()
    seen: set[str] = set()
    for state in probe_states:
        if not state.get("state") or "#" not in str(state.get("name", "")):
            continue
        ppm_name, _, probe_name = str(state["name"]).partition("#")
        ppm = marker(ppm_name)
        if ppm is None:
            continue
        probe = next(
            (p for p in (ppm.get("spec") or {}).get("probes") or () if p.get("name") == probe_name), None
        )
        if probe is None:
            continue
        ctype = probe.get("podConditionType") or ""
        if ctype and ctype not in seen:
            seen.add(ctype)
            cond: JSON = {"type": ctype, "status": "True" if state["state"] == PROBE_SUCCEEDED else "False"}
            for key in ("lastProbeTime", "lastTransitionTime", "message"):
                if state.get(key):
                    cond[key] = state[key]
            want.conditions.append(cond)
        for policy in probe.get("markerPolicy") or ():
            if policy.get("state") != state["state"]:
                for k in policy.get("labels") or {}:
                    want.labels.setdefault(k, None)
                for k in policy.get("annotations") or {}:
                    want.annotations.setdefault(k, None)
        for policy in probe.get("markerPolicy") or ():
            if policy.get("state") == state["state"]:
                want.labels.update(policy.get("labels") or {})
                want.annotations.update(policy.get("annotations") or {})
    meta = pod.get("metadata") or {}
    labels, annotations = meta.get("labels") or {}, meta.get("annotations") or {}
    current = {c.get("type"): c for c in (pod.get("status") or {}).get("conditions") or ()}
    out = PodMarking(
        conditions=[
            c
            for c in want.conditions
            if (old := current.get(c["type"])) is None
            or old.get("status") != c["status"]
            or (old.get("message") or "") != (c.get("message") or "")
        ],
        labels={k: v for k, v in want.labels.items() if labels.get(k) != v},
        annotations={k: v for k, v in want.annotations.items() if annotations.get(k) != v},
    )
    return out if out.conditions or out.labels or out.annotations else None
