"""What ``rollout status`` says (pure): workload status lines, and a Rollout's progress.

CloneSets and Deployments are judged as kubectl-kruise's status viewers judge them (their
messages): the spec must be observed, ``replicas - partition`` pods updated, every pod ready;
a partition left in place ends as "partitioned roll out complete". A Rollout is judged by
:func:`kruise.rollouts.rollout.outcome.release_outcome`, and shown as a :class:`Progress`: step,
state, pods per revision (stable / canary), the traffic weights of its routes and analysis runs;
runs and batches of the current release only (:func:`current_release_runs`,
:func:`current_release_pods`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kruise.rollouts.api.common import RolloutPhase
from kruise.rollouts.release.constants import ROLLOUT_LABEL
from kruise.rollouts.rollout.analysis_gate import REVISION_LABEL, release_canary, release_run_names
from kruise.rollouts.rollout.machine import WORKLOAD_NOT_FOUND_MESSAGE
from kruise.rollouts.rollout.outcome import Outcome, sub_status
from kruise.workloads.cloneset.arith import IntOrPercentError, calculate_partition


@dataclass(frozen=True)
class Verdict:
    """One status line and whether the rollout is done (``error``: it cannot finish)."""

    message: str
    done: bool
    error: str = ""


def cloneset_verdict(cs: Mapping[str, Any]) -> Verdict:
    """A CloneSet's rollout status, in kubectl-kruise's words."""
    spec, status = cs.get("spec") or {}, cs.get("status") or {}
    name, replicas = cs["metadata"]["name"], int(spec.get("replicas", 1))
    try:
        partition = calculate_partition((spec.get("updateStrategy") or {}).get("partition"), replicas)
    except IntOrPercentError:
        partition = 0
    observed = int(status.get("observedGeneration") or 0)
    if observed == 0 or int(cs["metadata"].get("generation") or 0) > observed:
        return Verdict("Waiting for CloneSet spec update to be observed...", False)
    updated, want = int(status.get("updatedReplicas") or 0), replicas - partition
    if updated < want:
        if partition:
            text = "Waiting for partitioned roll out to finish: "
        else:
            text = f'Waiting for CloneSet "{name}" rollout to finish: '
        text += f"{updated} out of {want} new pods have been updated..."
        return Verdict(text, False)
    ready = int(status.get("readyReplicas") or 0)
    if ready < replicas:
        return Verdict(f"Waiting for {replicas - ready} pods to be ready...", False)
    if partition:
        return Verdict(f"partitioned roll out complete: {updated} new pods have been updated...", True)
    available, revision = int(status.get("availableReplicas") or 0), status.get("updateRevision", "")
    return Verdict(f"CloneSet rolling update complete {available} pods at revision {revision}...", True)


def deployment_verdict(deploy: Mapping[str, Any], revision: int = 0) -> Verdict:
    """A Deployment's rollout status, as ``kubectl rollout status`` words it."""
    spec, status, meta = deploy.get("spec") or {}, deploy.get("status") or {}, deploy["metadata"]
    name = meta["name"]
    if revision:
        running = int((meta.get("annotations") or {}).get("deployment.kubernetes.io/revision") or 0)
        if running != revision:
            text = f"desired revision ({revision}) is different from the running revision ({running})"
            return Verdict("", True, text)
    if int(meta.get("generation") or 0) > int(status.get("observedGeneration") or 0):
        return Verdict("Waiting for deployment spec update to be observed...", False)
    for cond in status.get("conditions") or []:
        if cond.get("type") == "Progressing" and cond.get("reason") == "ProgressDeadlineExceeded":
            return Verdict("", True, f'deployment "{name}" exceeded its progress deadline')
    want = int(spec.get("replicas", 1))
    updated, total = int(status.get("updatedReplicas") or 0), int(status.get("replicas") or 0)
    available = int(status.get("availableReplicas") or 0)
    prefix = f'Waiting for deployment "{name}" rollout to finish: '
    if updated < want:
        return Verdict(f"{prefix}{updated} out of {want} new replicas have been updated...", False)
    if total > updated:
        return Verdict(f"{prefix}{total - updated} old replicas are pending termination...", False)
    if available < updated:
        return Verdict(f"{prefix}{available} of {updated} updated replicas are available...", False)
    return Verdict(f'deployment "{name}" successfully rolled out', True)


def _rolling_only(obj: Mapping[str, Any]) -> Verdict | None:
    """kubectl's refusal for a StatefulSet or DaemonSet not of the ``RollingUpdate`` type."""
    kind = ((obj.get("spec") or {}).get("updateStrategy") or {}).get("type") or "RollingUpdate"
    if kind != "RollingUpdate":
        return Verdict("", True, "rollout status is only available for RollingUpdate strategy type")
    return None


def _partition(obj: Mapping[str, Any]) -> int | None:
    """``spec.updateStrategy.rollingUpdate.partition`` (an int), None when unset."""
    rolling = ((obj.get("spec") or {}).get("updateStrategy") or {}).get("rollingUpdate") or {}
    value = rolling.get("partition")
    return None if value is None else int(value)


def statefulset_verdict(sts: Mapping[str, Any]) -> Verdict:
    """A native StatefulSet's rollout status, as ``kubectl rollout status`` words it: the spec
    observed, every replica ready, ``replicas - partition`` updated (the API server defaults
    ``rollingUpdate``, so the last line is the "partitioned roll out" one)."""
    if refusal := _rolling_only(sts):
        return refusal
    spec, status = sts.get("spec") or {}, sts.get("status") or {}
    observed = int(status.get("observedGeneration") or 0)
    if observed == 0 or int(sts["metadata"].get("generation") or 0) > observed:
        return Verdict("Waiting for statefulset spec update to be observed...", False)
    replicas, ready = int(spec.get("replicas", 1)), int(status.get("readyReplicas") or 0)
    if ready < replicas:
        return Verdict(f"Waiting for {replicas - ready} pods to be ready...", False)
    updated = int(status.get("updatedReplicas") or 0)
    if ((spec.get("updateStrategy") or {}).get("rollingUpdate")) is not None:
        partition = _partition(sts)
        if partition is not None and updated < replicas - partition:
            text = f"Waiting for partitioned roll out to finish: {updated} out of {replicas - partition} new"
            return Verdict(f"{text} pods have been updated...", False)
        return Verdict(f"partitioned roll out complete: {updated} new pods have been updated...", True)
    current, update = status.get("currentRevision", ""), status.get("updateRevision", "")
    if update != current:
        text = f"waiting for statefulset rolling update to complete {updated} pods at revision {update}..."
        return Verdict(text, False)
    complete = int(status.get("currentReplicas") or 0)
    return Verdict(f"statefulset rolling update complete {complete} pods at revision {current}...", True)


def advanced_statefulset_verdict(asts: Mapping[str, Any]) -> Verdict:
    """An Advanced StatefulSet's rollout status in kubectl-kruise's words (its own viewer: the
    partition first, then the spec observed, every replica ready)."""
    spec, status = asts.get("spec") or {}, asts.get("status") or {}
    replicas, updated = int(spec.get("replicas", 1)), int(status.get("updatedReplicas") or 0)
    partition = _partition(asts)
    if _rolling_only(asts) is None and partition is not None and updated < replicas - partition:
        text = f"Waiting for partitioned roll out to finish:{updated} out of {replicas - partition} new"
        return Verdict(f"{text} pods has been updated...", False)
    observed = int(status.get("observedGeneration") or 0)
    if observed == 0 or int(asts["metadata"].get("generation") or 0) > observed:
        return Verdict("Waiting for Advanced StatefulSet spec update to be observed...", False)
    ready = int(status.get("readyReplicas") or 0)
    if ready < replicas:
        return Verdict(f"Waiting for {replicas - ready} pods to be ready...", False)
    available, revision = int(status.get("availableReplicas") or 0), status.get("updateRevision", "")
    return Verdict(
        f"Advanced StatefulSet rolling update complete {available} pods at revision {revision}...", True
    )


def daemonset_verdict(ds: Mapping[str, Any]) -> Verdict:
    """A DaemonSet's rollout status, as ``kubectl rollout status`` words it: the spec observed,
    ``desiredNumberScheduled`` pods updated and available.

    An Advanced DaemonSet (which kubectl-kruise has no status viewer for; kruise reads it the
    same way, its status having the same fields) counts ``desired - partition`` pods to update,
    and ends "partitioned roll out complete" while a partition holds pods back."""
    if refusal := _rolling_only(ds):
        return refusal
    status, name = ds.get("status") or {}, ds["metadata"]["name"]
    if int(ds["metadata"].get("generation") or 0) > int(status.get("observedGeneration") or 0):
        return Verdict("Waiting for daemon set spec update to be observed...", False)
    desired, updated = (
        int(status.get("desiredNumberScheduled") or 0),
        int(status.get("updatedNumberScheduled") or 0),
    )
    partition = min(_partition(ds) or 0, desired)
    prefix = f'Waiting for daemon set "{name}" rollout to finish: '
    if updated < desired - partition:
        return Verdict(f"{prefix}{updated} out of {desired - partition} new pods have been updated...", False)
    available = int(status.get("numberAvailable") or 0)
    if available < desired:
        return Verdict(f"{prefix}{available} of {desired} updated pods are available...", False)
    if partition:
        return Verdict(f"partitioned roll out complete: {updated} new pods have been updated...", True)
    return Verdict(f'daemon set "{name}" successfully rolled out', True)


@dataclass(frozen=True)
class Progress:
    """A Rollout's release at one moment (what the watch display shows)."""

    name: str
    outcome: Outcome
    phase: str
    step: int
    steps: int
    state: str
    message: str
    pods: Mapping[str, tuple[int, int]] = field(default_factory=dict)  # role -> (pods, ready)
    weights: Sequence[str] = ()
    analysis: Sequence[str] = ()
    batches: str = ""
    degraded: str = ""  # why the release cannot go on until the user acts ("" when it can)


def degraded_reason(rollout: Mapping[str, Any], workload_missing: bool) -> str:
    """Why ``rollout`` cannot progress until the user acts, "" when it can (pure).

    Argo Rollouts' ``status`` ends on ``Degraded`` with an error exit instead of waiting for
    its timeout; the Rollout here has one such state: its ``spec.workloadRef`` names no object.
    The controller then resets the status to phase ``Initial`` with upstream's message
    "Workload Not Found" (and no conditions). It is reported only when the Rollout says so for
    its current generation **and** the workload is missing now (``workload_missing``, read by
    the caller), so a workload applied just after its Rollout is waited for, not failed on.
    Returns e.g. ``"Workload Not Found: CloneSet web"``."""
    status, meta = rollout.get("status") or {}, rollout.get("metadata") or {}
    current = status.get("observedGeneration") == meta.get("generation")
    says = (
        status.get("phase") in ("", RolloutPhase.INITIAL)
        and status.get("message") == WORKLOAD_NOT_FOUND_MESSAGE
    )
    if not (workload_missing and current and says):
        return ""
    wref = (rollout.get("spec") or {}).get("workloadRef") or {}
    return f"{WORKLOAD_NOT_FOUND_MESSAGE}: {wref.get('kind')} {wref.get('name')}"


def progress_of(
    rollout: Mapping[str, Any],
    outcome: Outcome,
    *,
    pods: Mapping[str, tuple[int, int]] | None = None,
    weights: Sequence[str] = (),
    analysis: Sequence[str] = (),
    batches: str = "",
    degraded: str = "",
) -> Progress:
    strategy = (rollout.get("spec") or {}).get("strategy") or {}
    steps = (strategy.get("canary") or strategy.get("blueGreen") or {}).get("steps") or []
    status, sub = rollout.get("status") or {}, sub_status(rollout)
    return Progress(
        name=rollout["metadata"]["name"],
        outcome=outcome,
        phase=str(status.get("phase") or ""),
        step=int(sub.get("currentStepIndex") or 0),
        steps=len(steps),
        state=str(sub.get("currentStepState") or ""),
        message=str(status.get("message") or ""),
        pods=dict(pods or {}),
        weights=tuple(weights),
        analysis=tuple(analysis),
        batches=batches,
        degraded=degraded,
    )


def progress_lines(p: Progress) -> list[str]:
    """The plain-text form (one status line, then details), for logs and pipes."""
    pods = ", ".join(f"{role} {n} ({ready} ready)" for role, (n, ready) in p.pods.items())
    lines = [f"phase={p.phase} step={p.step}/{p.steps} state={p.state} outcome={p.outcome}: {p.message}"]
    if pods:
        lines.append(f"  pods: {pods}")
    if p.weights:
        lines.append("  traffic: " + ", ".join(p.weights))
    if p.analysis:
        lines.append("  analysis: " + ", ".join(p.analysis))
    if p.batches:
        lines.append("  " + p.batches)
    return lines


def finished_exit_code(p: Progress) -> int | None:
    """``rollout status``'s exit code once ``p`` ends the watch, None while it goes on: 1 when
    degraded (:func:`degraded_reason`), else the outcome's (0 released or nothing to release,
    1 failed, stalled, cancelled or being deleted)."""
    if p.degraded:
        return 1
    return p.outcome.exit_code if p.outcome.done else None


def final_line(p: Progress) -> str:
    """What ``rollout status`` prints last: degraded (see :func:`degraded_reason`), else by outcome."""
    if p.degraded:
        return f'rollout "{p.name}" is degraded: {p.degraded}'
    return {
        Outcome.SUCCEEDED: f'rollout "{p.name}" successfully rolled out',
        Outcome.IDLE: f'rollout "{p.name}" is healthy: no release in progress',
        Outcome.DISABLED: f'rollout "{p.name}" is disabled',
        Outcome.FAILED: f'rollout "{p.name}" failed: {p.message}',
        Outcome.STALLED: f'rollout "{p.name}" is stalled: {p.message}',
        Outcome.CANCELLED: f'rollout "{p.name}" was cancelled: {p.message}',
        Outcome.TERMINATING: f'rollout "{p.name}" is being deleted',
    }.get(p.outcome, f'rollout "{p.name}": {p.outcome}')


def pods_by_role(
    pods: Sequence[Mapping[str, Any]], revision_label: str, stable: str, canary: str
) -> dict[str, tuple[int, int]]:
    """Live pods counted by role: ``stable``/``canary`` when their revision label ends with the
    Rollout's recorded revision, else the revision itself; each as (pods, ready).

    A pod at the stable revision is ``stable`` even when the canary revision is the same: after
    an undo the Rollout records the workload's (stable) template as the canary revision too, and
    its pods are not a release's canary."""
    out: dict[str, tuple[int, int]] = {}
    for pod in pods:
        meta = pod.get("metadata") or {}
        if meta.get("deletionTimestamp"):
            continue
        revision = str((meta.get("labels") or {}).get(revision_label, "?"))
        role = revision
        if stable and revision.endswith(stable):
            role = "stable"
        elif canary and revision.endswith(canary):
            role = "canary"
        ready = any(
            c.get("type") == "Ready" and c.get("status") == "True"
            for c in (pod.get("status") or {}).get("conditions") or []
        )
        count, ready_count = out.get(role, (0, 0))
        out[role] = (count + 1, ready_count + int(ready))
    return dict(sorted(out.items(), key=lambda kv: ({"stable": 0, "canary": 1}.get(kv[0], 2), kv[0])))


def current_release_runs(
    runs: Sequence[Mapping[str, Any]], rollout: Mapping[str, Any]
) -> list[Mapping[str, Any]]:
    """The AnalysisRuns of ``rollout``'s current release, in ``runs``' order (pure).

    A run belongs to it when it is owned by this Rollout (its uid: not an earlier Rollout of the
    same name), labelled ``rollouts.kruise.io/rollout=<name>``, and made for the current canary
    revision (:func:`kruise.rollouts.rollout.analysis_gate.release_canary`): labelled
    ``rollouts.kruise.io/canary-revision`` with it, or, for runs made before that label, named as
    one of the release's gates (``<rollout>-<revision>-step<N>``/``-background``). [] before a
    release has a canary revision."""
    meta = rollout.get("metadata") or {}
    canary = release_canary(rollout.get("status") or {})
    if not canary:
        return []
    names, uid = release_run_names(rollout, canary), meta.get("uid")
    out = []
    for run in runs:
        run_meta = run.get("metadata") or {}
        labels = run_meta.get("labels") or {}
        owners = run_meta.get("ownerReferences") or []
        if uid and not any(o.get("uid") == uid for o in owners):
            continue
        if labels.get(ROLLOUT_LABEL) != meta.get("name"):
            continue
        revision = labels.get(REVISION_LABEL)
        if (revision == canary) if revision is not None else (run_meta.get("name") in names):
            out.append(run)
    return out


def current_release_pods(
    pods: Sequence[Mapping[str, Any]], revision_label: str, sub: Mapping[str, Any]
) -> list[Mapping[str, Any]]:
    """The workload's ``pods`` at the current release's canary revision (pure): their
    ``revision_label`` ends with the sub-status' ``canaryRevision`` or ``podTemplateHash``. Only
    these count in the ``rollout-id ...: batch`` line; pods of an earlier release that carried the
    same rollout-id (an id not changed between releases), or of another workload, do not."""
    revisions = [str(r) for r in (sub.get("canaryRevision"), sub.get("podTemplateHash")) if r]
    return [
        pod
        for pod in pods
        if any(
            str(((pod.get("metadata") or {}).get("labels") or {}).get(revision_label, "")).endswith(r)
            for r in revisions
        )
    ]
