"""What each kubectl-kruise verb changes on an object (pure): patches, or the refusal.

Mirrors kruise-tools' ``polymorphichelpers`` (``objectpauser.go``, ``objectresumer.go``,
``objectapprover.go``, ``objectrestarter.go``, ``rollback.go``, ``steps.go``) with its messages:
a refusal is an :class:`EditError` whose text follows ``<resource> "<name>"`` in kubectl's error.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from typing import Any

from kruise.core.kube.resources import DEPLOYMENTS
from kruise.rollouts.cli.kinds import Restart, rules
from kruise.rollouts.cli.refs import Ref
from kruise.rollouts.resources import ROLLOUTS
from kruise.rollouts.rollout.deadline import abort_request, retry_request

JSON = dict[str, Any]
RESTARTED_AT_ANNOTATION = "kubectl.kubernetes.io/restartedAt"
RESTARTED_AT_ENV = "RESTARTED_AT"
CHANGE_CAUSE = "kubernetes.io/change-cause"
REVISION_ANNOTATION = "deployment.kubernetes.io/revision"
# kept from the Deployment (not copied from the ReplicaSet) by an undo, as kubectl does
_DEPLOYMENT_OWN_ANNOTATIONS = frozenset(
    {
        "kubectl.kubernetes.io/last-applied-configuration",
        REVISION_ANNOTATION,
        "deployment.kubernetes.io/revision-history",
        "deployment.kubernetes.io/desired-replicas",
        "deployment.kubernetes.io/max-replicas",
        "deprecated.deployment.rollback.to",
    }
)


class EditError(ValueError):
    """The verb does not apply to this object (upstream's words)."""


def _get(obj: Mapping[str, Any], path: Sequence[str]) -> Any:
    node: Any = obj
    for key in path:
        node = node.get(key) if isinstance(node, Mapping) else None
    return node


def _nest(path: Sequence[str], value: Any) -> JSON:
    out: Any = value
    for key in reversed(path):
        out = {key: out}
    return dict(out)


def pause_patch(ref: Ref, obj: Mapping[str, Any], paused: bool) -> JSON:
    """Merge patch setting the paused flag of a Rollout, CloneSet or Deployment (:mod:`.kinds`)."""
    path = rules(ref.res).paused
    if path is None:
        raise EditError("pausing is not supported" if paused else "resuming is not supported")
    if bool(_get(obj, path)) == paused:
        raise EditError("is already paused" if paused else "is not paused")
    return _nest(path, paused)


def approve_patch(ref: Ref, rollout: Mapping[str, Any]) -> JSON:
    """Status merge patch moving a Rollout's paused step on (``StepPaused`` -> ``StepReady``)."""
    if ref.res is not ROLLOUTS:
        raise EditError("approving is not supported")
    status = rollout.get("status") or {}
    for field, style in (("canaryStatus", "canary"), ("blueGreenStatus", "blue-green")):
        sub = status.get(field)
        if sub:
            if sub.get("currentStepState") != "StepPaused":
                raise EditError(
                    f"does not allow to approve, because current {style} state is not 'StepPaused'"
                )
            return {"status": {field: {"currentStepState": "StepReady"}}}
    raise EditError("no need to approve: not in canary or blue-green progress")


def abort_retry_patch(ref: Ref, rollout: Mapping[str, Any], *, retry: bool, now: datetime.datetime) -> JSON:
    """Status merge patch of kruise's ``rollout abort`` / ``rollout retry``: the Rollout's
    conditions with ``Aborted`` requested (True, ``AbortedByUser``) or a retry requested (False,
    ``RetryRequested``), under the read ``resourceVersion`` (:mod:`kruise.rollouts.rollout.deadline`
    says what the controller does with them)."""
    if ref.res is not ROLLOUTS:
        raise EditError(f"{'retrying' if retry else 'aborting'} is not supported")
    status = rollout.get("status") or {}
    try:
        conditions = (retry_request if retry else abort_request)(status, now)
    except ValueError as err:
        raise EditError(str(err)) from None
    meta = rollout.get("metadata") or {}
    return {
        "metadata": {"resourceVersion": meta.get("resourceVersion")},
        "status": {"conditions": conditions},
    }


def restart_edit(ref: Ref, obj: Mapping[str, Any], now: str) -> tuple[str, JSON]:
    """``("merge", patch)`` for a Deployment, StatefulSet or DaemonSet, ``("replace", object)``
    for a CloneSet, Advanced StatefulSet or Advanced DaemonSet (:mod:`.kinds`).

    The first get the template annotation ``kubectl.kubernetes.io/restartedAt`` (a Deployment
    refused while paused); the Kruise kinds, as kubectl-kruise does, the env var ``RESTARTED_AT``
    in every container (which recreates their pods: env is not updated in place).
    """
    how = rules(ref.res).restart
    if how is Restart.ANNOTATION:
        if ref.res is DEPLOYMENTS and (obj.get("spec") or {}).get("paused"):
            raise EditError("can't restart paused deployment (run rollout resume first)")
        return "merge", {"spec": {"template": {"metadata": {"annotations": {RESTARTED_AT_ANNOTATION: now}}}}}
    if how is Restart.ENV:
        new = _deep_copy(obj)
        for container in new["spec"]["template"]["spec"]["containers"]:
            env = [e for e in container.get("env") or [] if e.get("name") != RESTARTED_AT_ENV]
            container["env"] = [*env, {"name": RESTARTED_AT_ENV, "value": now}]
        return "replace", new
    raise EditError("restarting is not supported")


def _deep_copy(obj: Mapping[str, Any]) -> JSON:
    import copy

    return copy.deepcopy(dict(obj))


def _has_traffic(step: Mapping[str, Any]) -> bool:
    traffic = str(step.get("traffic") or "").rstrip("%")
    return bool(traffic) and traffic not in ("0",)


def _scaled(text: str) -> int:
    """``GetScaledValueFromIntOrPercent(v, 100, true)``: a percentage as is, an int as is."""
    return int(text.rstrip("%")) if text.endswith("%") else int(text)


def fast_rollback_patch(rollout: Mapping[str, Any]) -> JSON:
    """``undo rollout/NAME --fast``: jump back to the latest earlier step without traffic that has
    the most replicas, through ``nextStepIndex`` (a status patch), as kubectl-kruise does."""
    strategy = (rollout.get("spec") or {}).get("strategy") or {}
    style = "blueGreenStatus" if strategy.get("blueGreen") else "canaryStatus"
    steps = list((strategy.get("blueGreen") or strategy.get("canary") or {}).get("steps") or [])
    current = int((rollout.get("status") or {}).get("currentStepIndex") or 0)
    if len(steps) < current:
        raise EditError(f"has {len(steps)} steps, but current step is too large {current}")
    if current <= 1:
        raise EditError("already at the first step")
    best, target = 0, -1
    for i in range(current - 2, -1, -1):
        if _has_traffic(steps[i]):
            continue
        replicas = _scaled(str(steps[i].get("replicas", 0)))
        if replicas > best:
            best, target = replicas, i + 1
    if target == -1:
        raise EditError("no previous step with no traffic found")
    return {"status": {style: {"nextStepIndex": target}}}


def pick_revision(
    revisions: Mapping[int, Any], to_revision: int, no_previous: str = "no last revision to roll back to"
) -> int:
    """The revision number ``undo --to-revision`` restores: the given one, else the second newest
    (``no_previous``, the kind's words, when there is none)."""
    if to_revision < 0:
        raise EditError(f"unable to find specified revision {to_revision} in history")
    if to_revision == 0:
        if len(revisions) <= 1:
            raise EditError(no_previous)
        return sorted(revisions)[-2]
    if to_revision not in revisions:
        raise EditError(f"unable to find specified revision {to_revision} in history")
    return to_revision


def in_canary_progress(deployment: Mapping[str, Any]) -> bool:
    """A Deployment held by a canary-style Rollout: paused, ``rollouts.kruise.io/in-progressing``
    and no ``rollouts.kruise.io/deployment-strategy`` (kruise-tools' ``InCanaryProgress``)."""
    annotations = (deployment.get("metadata") or {}).get("annotations") or {}
    return (
        bool((deployment.get("spec") or {}).get("paused"))
        and "rollouts.kruise.io/in-progressing" in annotations
        and "rollouts.kruise.io/deployment-strategy" not in annotations
    )


def pick_deployment_revision(
    deployment: Mapping[str, Any], replicasets: Mapping[int, Mapping[str, Any]], to_revision: int
) -> int:
    """:func:`pick_revision` for a Deployment, with kruise-tools' canary case: while a canary
    release holds the Deployment, its history has not moved yet, so "previous" is the newest
    ReplicaSet (or the one before it, when the newest is already the Deployment's template)."""
    if to_revision != 0 or not in_canary_progress(deployment) or not replicasets:
        return pick_revision(replicasets, to_revision)
    ordered = sorted(replicasets)
    latest = replicasets[ordered[-1]]
    current = _without_hash((deployment.get("spec") or {}).get("template") or {})
    if len(ordered) > 1 and _without_hash((latest.get("spec") or {}).get("template") or {}) == current:
        return ordered[-2]
    return ordered[-1]


def _without_hash(template: Mapping[str, Any]) -> JSON:
    out = _deep_copy(template)
    labels = (out.get("metadata") or {}).get("labels")
    if isinstance(labels, dict):
        labels.pop("pod-template-hash", None)
    return out


def _kept(annotation: str) -> bool:
    return annotation in _DEPLOYMENT_OWN_ANNOTATIONS or "rollouts.kruise.io/" in annotation


def deployment_undo_patch(deployment: Mapping[str, Any], replicaset: Mapping[str, Any]) -> list[JSON] | None:
    """JSON patch restoring a ReplicaSet's template on its Deployment (``None``: already matches).

    The ``pod-template-hash`` label is dropped; the Deployment's own bookkeeping annotations
    (and Kruise Rollouts' ``rollouts.kruise.io/...``) are kept, the ReplicaSet's others copied.
    """
    template = _without_hash((replicaset.get("spec") or {}).get("template") or {})
    if template == _without_hash((deployment.get("spec") or {}).get("template") or {}):
        return None
    own = dict((deployment.get("metadata") or {}).get("annotations") or {})
    annotations = {
        k: v for k, v in own.items() if k in _DEPLOYMENT_OWN_ANNOTATIONS or "rollouts.kruise.io/" in k
    }
    for key, value in ((replicaset.get("metadata") or {}).get("annotations") or {}).items():
        if key not in _DEPLOYMENT_OWN_ANNOTATIONS and "rollouts.kruise.io/" not in key:
            annotations[key] = value
    return [
        {"op": "replace", "path": "/spec/template", "value": template},
        {"op": "replace", "path": "/metadata/annotations", "value": annotations},
    ]


def cloneset_undo_patch(cloneset: Mapping[str, Any], template: Mapping[str, Any]) -> list[JSON] | None:
    """JSON patch putting a ControllerRevision's template back on its workload (a CloneSet,
    StatefulSet, DaemonSet or an Advanced one), ``None`` when it already matches."""
    if dict(template) == dict((cloneset.get("spec") or {}).get("template") or {}):
        return None
    return [{"op": "replace", "path": "/spec/template", "value": dict(template)}]
