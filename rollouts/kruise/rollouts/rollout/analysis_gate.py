"""Metric-analysis gates of a Rollout (pure): kruise's extension of ``StepMetricsAnalysis``.

Kruise Rollouts leaves ``StepMetricsAnalysis`` a no-op; here a step with ``analysis`` runs an
AnalysisRun (Argo Rollouts' model) and the outcome decides:

- ``Successful`` -> the step goes on to ``StepPaused``;
- ``Failed``/``Error`` -> the release is aborted the way Kruise rolls back: traffic back to
  stable first, then the workload is reverted to the stable revision and resumed
  (condition ``Aborted``, reason ``AnalysisFailed``);
- ``Inconclusive`` -> the step pauses until ``kubectl kruise rollout approve``;
- otherwise (Pending/Running) -> wait.

A background ``canary.analysis`` runs from ``startingStep`` until the release ends; its failure
aborts at any step. Run names are ``<rollout>-<canaryRevision>-step<N>`` and
``<rollout>-<canaryRevision>-background``, so users find them by the release; each run is
labelled ``rollouts.kruise.io/rollout`` (the Rollout), ``rollouts.kruise.io/analysis-step`` (the
gate) and ``rollouts.kruise.io/canary-revision`` (the release's canary revision, so
``kubectl get analysisrun -l`` and ``kruise rollout status`` pick the current release's runs).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kruise.rollouts.api.analysis_ref import ReleaseValue
from kruise.rollouts.release.constants import ROLLOUT_LABEL
from kruise.rollouts.rollout.model import Action, ActionKind, Observed
from kruise.rollouts.rollout.steps import steps_of, strategy_of

SUCCESSFUL = "Successful"
FAILED_PHASES = ("Failed", "Error")
INCONCLUSIVE = "Inconclusive"
ABORTED_CONDITION = "Aborted"
STEP_LABEL = "rollouts.kruise.io/analysis-step"
REVISION_LABEL = "rollouts.kruise.io/canary-revision"
_RELEASE_FIELDS = {
    ReleaseValue.ROLLOUT_ID.value: "observedRolloutID",
    ReleaseValue.BATCH_ID.value: "currentStepIndex",
    ReleaseValue.CANARY_REVISION.value: "canaryRevision",
    ReleaseValue.STABLE_REVISION.value: "stableRevision",
}
"""``valueFrom.releaseValue`` -> the ``status.canaryStatus`` field it reads."""


def step_analysis(rollout: Mapping[str, Any], index: int) -> Mapping[str, Any] | None:
    """The ``analysis`` of step ``index`` (1-based), None when the step has none."""
    steps = steps_of(rollout)
    if not 1 <= index <= len(steps):
        return None
    gate = steps[index - 1].get("analysis")
    return gate if gate and gate.get("templates") else None


def background_analysis(rollout: Mapping[str, Any], index: int) -> Mapping[str, Any] | None:
    """``canary.analysis`` when it applies at step ``index``."""
    gate = strategy_of(rollout).get("analysis")
    if not gate or not gate.get("templates"):
        return None
    return gate if index >= int(gate.get("startingStep") or 1) else None


def run_name(rollout: Mapping[str, Any], canary_revision: str, which: str) -> str:
    """``<rollout>-<canaryRevision>-<which>`` (which: ``step2`` or ``background``), DNS-safe."""
    name = str((rollout.get("metadata") or {}).get("name"))
    return f"{name}-{canary_revision}-{which}"[:253].rstrip("-").lower()


def release_canary(status: Mapping[str, Any]) -> str:
    """The canary revision a release's runs are named and labelled by: ``podTemplateHash``, else
    ``canaryRevision`` of ``status.canaryStatus`` ("" before the release has one)."""
    cs = status.get("canaryStatus") or {}
    return str(cs.get("podTemplateHash") or cs.get("canaryRevision") or "")


def release_run_names(rollout: Mapping[str, Any], canary_revision: str) -> frozenset[str]:
    """Every name a run of the release at ``canary_revision`` can have (each step's, background)."""
    whichs = [f"step{i}" for i in range(1, len(steps_of(rollout)) + 1)] + ["background"]
    return frozenset(run_name(rollout, canary_revision, which) for which in whichs)


def run_request(
    rollout: Mapping[str, Any], status: Mapping[str, Any], gate: Mapping[str, Any], which: str
) -> dict[str, Any]:
    """Payload of an ``EnsureAnalysisRun`` action: name, templates, args (resolved where known;
    a ``releaseValue`` the status does not know yet stays None: the run reports it unresolved)."""
    cs = status.get("canaryStatus") or {}
    canary = release_canary(status)
    stable = str(cs.get("stableRevision") or "")
    args = []
    for arg in gate.get("args") or []:
        value = arg.get("value")
        source = arg.get("valueFrom") or {}
        if value is None and source.get("podTemplateHashValue"):
            value = stable if source["podTemplateHashValue"] == "Stable" else canary
        if value is None and source.get("releaseValue"):
            value = release_value(cs, str(source["releaseValue"])) or None
        if value is None and (source.get("fieldRef") or {}).get("fieldPath"):
            value = _field(rollout, str(source["fieldRef"]["fieldPath"]))
        args.append({"name": arg.get("name"), "value": None if value is None else str(value)})
    return {
        "name": run_name(rollout, canary, which),
        "which": which,
        "templates": [dict(t) for t in gate.get("templates") or []],
        "args": args,
        "labels": {
            ROLLOUT_LABEL: str((rollout.get("metadata") or {}).get("name")),
            STEP_LABEL: which,
            REVISION_LABEL: canary,
        },
    }


def release_value(canary_status: Mapping[str, Any], which: str) -> str:
    """``valueFrom.releaseValue`` (kruise's): the release's ``RolloutID`` (the id its pods are
    labelled with, ``observedRolloutID``), ``BatchID`` (the current step, 1-based: the pods' batch
    label), ``CanaryRevision`` or ``StableRevision``; "" when the status does not know it yet."""
    field = _RELEASE_FIELDS.get(which)
    return str(canary_status.get(field) or "") if field else ""


def _field(obj: Mapping[str, Any], path: str) -> Any:
    value: Any = obj
    for part in path.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value


def failed_analysis(rollout: Mapping[str, Any], status: Mapping[str, Any], obs: Observed) -> str | None:
    """Name of the current step's or the background AnalysisRun when it Failed/Errored."""
    cs = status.get("canaryStatus") or {}
    index = int(cs.get("currentStepIndex") or 0)
    candidates = []
    gate = step_analysis(rollout, index)
    if gate is not None:
        candidates.append(str(run_request(rollout, status, gate, f"step{index}")["name"]))
    background = background_analysis(rollout, index)
    if background is not None:
        candidates.append(str(run_request(rollout, status, background, "background")["name"]))
    for name in candidates:
        if obs.analysis.get(name) in FAILED_PHASES:
            return name
    return None


def background_actions(rollout: Mapping[str, Any], status: Mapping[str, Any]) -> list[Action]:
    """Keep the background AnalysisRun alive once its starting step is reached."""
    cs = status.get("canaryStatus") or {}
    index = int(cs.get("currentStepIndex") or 0)
    gate = background_analysis(rollout, index)
    if gate is None or not (cs.get("podTemplateHash") or cs.get("canaryRevision")):
        return []
    return [Action(ActionKind.ENSURE_ANALYSIS_RUN, run_request(rollout, status, gate, "background"))]


def has_analysis(rollout: Mapping[str, Any]) -> bool:
    """Whether any step or the background names analysis templates."""
    if (strategy_of(rollout).get("analysis") or {}).get("templates"):
        return True
    return any((s.get("analysis") or {}).get("templates") for s in steps_of(rollout))
