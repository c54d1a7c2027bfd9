"""What kruise-daemon does next for the CRRs of one pod (pure).

Mirrors ``pkg/daemon/containerrecreate/crr_daemon_controller.go`` and ``crr_daemon_util.go``
(v1.8.4). The daemon's work item is a pod (``namespace/podName``); per pass:

1. :func:`pick`: of the pod's CRRs (completed or deleting ones skipped), sorted by phase
   (``Completed`` < ``Recreating`` < ``Pending`` < none) then creation time, the first is worked
   on; every other one without a phase is set ``Pending``.
2. :func:`decide` on the picked one: set ``Recreating`` first; with
   ``unreadyGracePeriodSeconds``, wait for the manager's ``unready-acquired`` annotation and then
   for the grace to pass; then compute each container's state from the runtime
   (:func:`container_states`) and write it when it moved; then choose the one container to stop
   this pass (:class:`KillOrder`): the first ``Pending`` one, after every ``Recreating`` one
   when ``orderedRecreate``; a ``Failed`` one completes the CRR under ``failurePolicy: Fail``;
   all ``Succeeded``/``Failed`` completes it. ``minStartedSeconds`` requeues.

The kubelet starts a stopped container again; the daemon never creates one. Times: ``now`` is
an aware datetime, CRI times are Unix nanoseconds, results in seconds.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kruise.core.api import parse_time
from kruise.daemon.api.containerrecreaterequest import (
    FAILURE_POLICY_IGNORE,
    SYNC_CONTAINER_STATUSES_ANNOTATION,
    UNREADY_ACQUIRED_KEY,
    ContainerRecreateRequestPhase,
)
from kruise.daemon.cri.port import ContainerState, CriContainer

__all__ = [
    "DEFAULT_TERMINATION_GRACE",
    "MIN_GRACE_SECONDS",
    "RESTART_COUNT_ANNOTATION",
    "Decision",
    "KillOrder",
    "Pick",
    "container_states",
    "decide",
    "killed_states",
    "pick",
    "stop_grace",
]

JSON = dict[str, Any]
MIN_GRACE_SECONDS = 2
"""The least ``StopContainer`` timeout (kubelet ``minimumGracePeriodInSeconds``)."""
DEFAULT_TERMINATION_GRACE = 30
"""Grace when the CRR carries none (``convertCRRToPod``)."""
RESTART_COUNT_ANNOTATION = "io.kubernetes.container.restartCount"
"""The kubelet's container annotation holding the container's restart count."""
NOT_ON_NODE = "not found container on Node"
_WEIGHTS = {"Completed": 1, "Recreating": 2, "Pending": 3}
P = ContainerRecreateRequestPhase


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _ns(nanos: int) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(nanos / 1e9, datetime.UTC)


def _finished(crr: Mapping[str, Any]) -> bool:
    return bool(
        _map(crr.get("metadata")).get("deletionTimestamp") or _map(crr.get("status")).get("completionTime")
    )


@dataclass(frozen=True)
class Pick:
    """:func:`pick`'s answer: the CRR to work on (None: none) and those to set ``Pending``."""

    picked: Mapping[str, Any] | None
    to_pending: tuple[Mapping[str, Any], ...] = ()


def pick(crrs: Sequence[Mapping[str, Any]]) -> Pick:
    """``pickRecreateRequest``: one CRR per pod at a time (see the module docstring)."""

    def order(crr: Mapping[str, Any]) -> tuple[int, str, str]:
        meta = _map(crr.get("metadata"))
        phase = str(_map(crr.get("status")).get("phase") or "")
        return _WEIGHTS.get(phase, 4), str(meta.get("creationTimestamp") or ""), str(meta.get("name") or "")

    picked = None
    pending = []
    for crr in sorted(crrs, key=order):
        if _finished(crr):
            continue
        if picked is None:
            picked = crr
        elif not _map(crr.get("status")).get("phase"):
            pending.append(crr)
    return Pick(picked, tuple(pending))


@dataclass(frozen=True)
class KillOrder:
    """Stop container ``name`` (CRI id ``container_id``) of state index ``index``: run ``pre_stop``
    (the CRR's copy: ``exec``/``httpGet``/``tcpSocket``), then ``StopContainer`` with
    :func:`stop_grace` of ``grace_seconds``."""

    index: int
    name: str
    container_id: str
    grace_seconds: int
    pre_stop: Mapping[str, Any] | None = None
    ports: tuple[Mapping[str, Any], ...] = ()


@dataclass(frozen=True)
class Decision:
    """One pass for the picked CRR. At most one of ``phase`` (write this phase), ``complete``
    (complete with this message), ``states`` (write these container states) or ``kill`` is set;
    with ``kill``, ``states`` are the states before it (:func:`killed_states` makes the write).
    ``requeue_after`` in seconds."""

    phase: str | None = None
    complete: str | None = None
    states: list[JSON] | None = None
    kill: KillOrder | None = None
    requeue_after: float | None = None
    waiting: str = ""
    base_states: list[JSON] = field(default_factory=list)


def stop_grace(grace_seconds: int, pre_stop_seconds: float = 0.0) -> int:
    """``KillContainer``'s timeout: the grace minus what the preStop hook took (whole seconds),
    at least :data:`MIN_GRACE_SECONDS`."""
    left = grace_seconds - int(pre_stop_seconds)
    return max(left, MIN_GRACE_SECONDS)


def _synced(crr: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    raw = _map(_map(crr.get("metadata")).get("annotations")).get(SYNC_CONTAINER_STATUSES_ANNOTATION)
    if not raw:
        return {}
    try:
        entries = json.loads(raw)
    except ValueError:
        return {}
    return {str(_map(e).get("name")): _map(e) for e in entries if isinstance(e, Mapping)}


def _latest(containers: Sequence[CriContainer], name: str) -> CriContainer | None:
    """The newest attempt of ``name`` (``FindContainerStatusByName`` over statuses newest first)."""
    found = [c for c in containers if c.name == name]
    return max(found, key=lambda c: (c.created_at, c.attempt)) if found else None


def _restart_count(container: CriContainer) -> int:
    try:
        return int(container.annotations.get(RESTART_COUNT_ANNOTATION, container.attempt))
    except ValueError:
        return container.attempt


def runtime_of(crr: Mapping[str, Any]) -> str:
    """The runtime prefix of the statusContext container IDs (``containerd`` of ``containerd://…``)."""
    for container in _map(crr.get("spec")).get("containers") or []:
        context_id = str(_map(_map(container).get("statusContext")).get("containerID") or "")
        if "://" in context_id:
            return context_id.split("://", 1)[0]
    return ""


def runtime_error(crr: Mapping[str, Any]) -> str | None:
    """``newRuntimeManager``'s refusals: every container needs a ``type://id`` statusContext,
    all of one runtime type. The message completes the CRR (``failed to find runtime service: …``)."""
    runtime = ""
    for container in _map(crr.get("spec")).get("containers") or []:
        name = _map(container).get("name")
        context_id = str(_map(_map(container).get("statusContext")).get("containerID") or "")
        if not context_id:
            return f"no statusContext or empty containerID in {name} container"
        kind, sep, _ = context_id.partition("://")
        if not sep or not kind:
            why = f"invalid container ID: {context_id!r}"
            return f"failed to parse containerID {context_id} in {name} container: {why}"
        if runtime and kind != runtime:
            return f"has different runtime types {runtime}, {kind} in Pod"
        runtime = kind
    return None if runtime else "no runtime type found in Pod"


def container_states(
    crr: Mapping[str, Any], containers: Sequence[CriContainer], now: datetime.datetime
) -> list[JSON]:
    """``getCurrentCRRContainersRecreateStates``: each spec container's state, in spec order.

    Kept: a ``Failed``/``Succeeded`` state. Else from the newest attempt on the node: none ->
    ``Pending`` (``not found container on Node``); exited -> ``Recreating``; ``forceRecreate``
    and not killed yet -> ``Pending``; another ID than the statusContext's, a higher restart
    count, or started after the CRR's creation (compared in whole seconds, the creation time's
    precision: upstream compares the runtime's nanoseconds, so a container started in the second
    the CRR was created counts as already recreated there) -> ``Recreating``, ``Succeeded`` once the synced
    pod status shows that same ID ready and it started more than ``minStartedSeconds`` ago;
    otherwise ``Pending``. ``isKilled`` carries over (dropped by the force case).
    """
    meta, spec = _map(crr.get("metadata")), _map(crr.get("spec"))
    strategy = _map(spec.get("strategy"))
    created = parse_time(meta.get("creationTimestamp"))
    min_started = float(strategy.get("minStartedSeconds") or 0)
    previous = {
        str(_map(s).get("name")): _map(s)
        for s in _map(crr.get("status")).get("containerRecreateStates") or []
    }
    synced = _synced(crr)
    runtime = runtime_of(crr)
    out: list[JSON] = []
    for container in spec.get("containers") or []:
        name = str(_map(container).get("name"))
        before = previous.get(name)
        if before is not None and before.get("phase") in (P.FAILED, P.SUCCEEDED):
            out.append(dict(before))
            continue
        killed = bool(before and before.get("isKilled"))
        context = _map(_map(container).get("statusContext"))
        found = _latest(containers, name)
        state: JSON
        if found is None:
            state = {"name": name, "phase": P.PENDING.value, "message": NOT_ON_NODE}
            if killed:
                state["isKilled"] = True
            out.append(state)
            continue
        started = _ns(found.started_at) if found.started_at else None
        full_id = f"{runtime}://{found.id}" if runtime else found.id
        if found.state is ContainerState.EXITED:
            state = {"name": name, "phase": P.RECREATING.value}
        elif strategy.get("forceRecreate") and not killed:
            out.append({"name": name, "phase": P.PENDING.value})
            continue
        elif (
            full_id != context.get("containerID")
            or _restart_count(found) > int(context.get("restartCount") or 0)
            or (started is not None and created is not None and started.replace(microsecond=0) > created)
        ):
            state = {"name": name, "phase": P.RECREATING.value}
            seen = synced.get(name)
            if (
                seen is not None
                and seen.get("containerID") == full_id
                and started is not None
                and (now - started).total_seconds() > min_started
                and seen.get("ready")
            ):
                state["phase"] = P.SUCCEEDED.value
        else:
            state = {"name": name, "phase": P.PENDING.value}
        if killed:
            state["isKilled"] = True
        out.append(state)
    return out


def _same(a: Sequence[Mapping[str, Any]], b: Sequence[Mapping[str, Any]]) -> bool:
    def norm(s: Mapping[str, Any]) -> tuple[Any, ...]:
        return (s.get("name"), s.get("phase"), s.get("message") or "", bool(s.get("isKilled")))

    return [norm(x) for x in a] == [norm(x) for x in b]


def decide(
    crr: Mapping[str, Any], containers: Sequence[CriContainer] | None, now: datetime.datetime
) -> Decision:
    """One pass for the picked ``crr`` (see the module docstring). ``containers`` are the pod's
    containers on the node (every attempt), None when not listed yet: then only the phase and
    unready-grace steps are decided (``waiting`` says why)."""
    meta, spec = _map(crr.get("metadata")), _map(crr.get("spec"))
    status = _map(crr.get("status"))
    strategy = _map(spec.get("strategy"))
    if status.get("phase") != P.RECREATING:
        return Decision(phase=P.RECREATING.value)
    if strategy.get("unreadyGracePeriodSeconds") is not None:
        raw = _map(meta.get("annotations")).get(UNREADY_ACQUIRED_KEY)
        if not raw:
            return Decision(waiting="unready acquirement")
        acquired = parse_time(raw)
        if acquired is None:
            return Decision(complete=f"failed to parse unready time {raw}")
        left = float(strategy["unreadyGracePeriodSeconds"]) - (now - acquired).total_seconds()
        if left > 0:
            return Decision(requeue_after=left + 0.1, waiting="unready grace period")
    problem = runtime_error(crr)
    if problem is not None:
        return Decision(complete=f"failed to find runtime service: {problem}")
    if containers is None:
        return Decision(waiting="containers")
    states = container_states(crr, containers, now)
    if not _same(status.get("containerRecreateStates") or [], states):
        return Decision(states=states)
    ignore = strategy.get("failurePolicy") == FAILURE_POLICY_IGNORE
    ordered = bool(strategy.get("orderedRecreate"))
    grace = strategy.get("terminationGracePeriodSeconds")
    grace_seconds = DEFAULT_TERMINATION_GRACE if grace is None else int(grace)
    spec_containers = {str(_map(c).get("name")): _map(c) for c in spec.get("containers") or []}
    done = 0
    working = [dict(s) for s in states]
    for index, state in enumerate(working):
        phase = state.get("phase")
        if phase == P.SUCCEEDED:
            done += 1
            continue
        if phase == P.FAILED:
            done += 1
            if ignore:
                continue
            return Decision(complete="")
        if phase == P.RECREATING:
            state["isKilled"] = True
            if ordered:
                break
            continue
        found = _latest(containers, str(state.get("name")))
        if found is None:
            break
        source = spec_containers.get(str(state.get("name")), {})
        order = KillOrder(
            index=index,
            name=str(state.get("name")),
            container_id=found.id,
            grace_seconds=grace_seconds,
            pre_stop=_map(source.get("preStop")) or None,
            ports=tuple(_map(p) for p in source.get("ports") or []),
        )
        return Decision(kill=order, base_states=working)
    if not _same(states, working):
        return Decision(states=working)
    if done == len(working):
        return Decision(complete="")
    min_started = int(strategy.get("minStartedSeconds") or 0)
    return Decision(requeue_after=float(min_started) if min_started > 0 else None)


def killed_states(decision: Decision, error: str | None) -> list[JSON]:
    """The states to write after ``decision.kill`` ran: the container ``Recreating`` and killed,
    or ``Failed`` with ``kill container error: <error>``."""
    assert decision.kill is not None
    states = [dict(s) for s in decision.base_states]
    state = states[decision.kill.index]
    if error is None:
        state.update(phase=P.RECREATING.value, isKilled=True)
        state.pop("message", None)
    else:
        state.update(phase=P.FAILED.value, message=f"kill container error: {error}")
    return states
