"""Rollout gauges in Argo Rollouts' shape, plus the current step, read from a cache at scrape time.

Argo Rollouts' families (``controller/metrics/rollouts.go``, ``prommetrics.go``), with its names,
help texts and labels:

- ``rollout_info{namespace,name,strategy,traffic_router,phase}`` = 1;
- ``rollout_phase{namespace,name,strategy,phase}`` (deprecated upstream, still exported): one
  series per phase (Completed, Progressing, Paused, Timeout, Error, Abort), 1 for the Rollout's;
- ``rollout_info_replicas_{available,unavailable,desired,updated}{namespace,name}`` from the
  workload the Rollout points at (``status.availableReplicas``, ``status.replicas -
  status.availableReplicas``, ``spec.replicas`` (default 1), ``status.updatedReplicas``), when
  the workload lookup finds it (a Kruise Rollout's own status has no replica counts).

Argo's phase of a Kruise Rollout (:func:`argo_phase`), from the ``Progressing`` condition's
reason as Argo computes it from its own: ``Completed`` -> Completed, ``Cancelling`` -> Abort,
``Paused`` or a step in ``StepPaused`` (a pause step, timed or waiting for approval, which Argo
also reports as paused) -> Paused, any other reason -> Progressing; without the condition a
``Healthy`` or ``Disabled`` Rollout is Completed, anything else Progressing. Kruise Rollouts has
no progress deadline and validates specs in its webhook, so Timeout, Error and InvalidSpec never
occur. ``strategy`` is ``canary``, ``blueGreen`` or ``none``; ``traffic_router`` names the first
``trafficRoutings`` entry: ``GatewayAPI``, ``Nginx`` (an Ingress of class nginx, the default;
another class is named as written), ``Istio`` (custom refs to VirtualService/DestinationRule),
``Custom`` (other custom refs), or empty.

Ours, while a release is in progress (``status.phase`` Progressing and a step status present):

- ``kruise_rollout_step_index{namespace,name}``: ``currentStepIndex`` (1-based);
- ``kruise_rollout_step_state_timestamp_seconds{namespace,name,step,step_state}``: when the step
  entered its current state (``lastUpdateTime`` of ``canaryStatus``/``blueGreenStatus``), the
  clock of the "Rollout stuck in one step" alert.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from kruise.core.metrics import ObjectProvider, StateCollector, object_key, unix_seconds
from kruise.rollouts.api.common import CanaryStepState, ProgressingReason, RolloutConditionType, RolloutPhase

PHASES = ("Completed", "Progressing", "Paused", "Timeout", "Error", "Abort")
"""Argo's ``RolloutPhase`` values, in the order it exports ``rollout_phase``."""

WorkloadLookup = Callable[[str, Mapping[str, Any]], Mapping[str, Any] | None]
"""(namespace, ``spec.workloadRef``) -> the workload object, or None when not cached."""


def _release_status(status: Mapping[str, Any]) -> Mapping[str, Any]:
    sub = status.get("canaryStatus") or status.get("blueGreenStatus")
    return sub if isinstance(sub, Mapping) else {}


def argo_phase(rollout: Mapping[str, Any]) -> str:
    """The Argo Rollouts phase of a Kruise Rollout (see the module docstring)."""
    status = rollout.get("status") or {}
    progressing = next(
        (x for x in status.get("conditions") or [] if x.get("type") == RolloutConditionType.PROGRESSING), None
    )
    if progressing is None:
        return (
            "Completed"
            if status.get("phase") in (RolloutPhase.HEALTHY, RolloutPhase.DISABLED)
            else "Progressing"
        )
    reason = progressing.get("reason")
    if reason == ProgressingReason.COMPLETED:
        return "Completed"
    if reason == ProgressingReason.CANCELLING:
        return "Abort"
    if (
        reason == ProgressingReason.PAUSED
        or _release_status(status).get("currentStepState") == CanaryStepState.STEP_PAUSED
    ):
        return "Paused"
    return "Progressing"


def strategy_and_router(rollout: Mapping[str, Any]) -> tuple[str, str]:
    """Argo's ``strategy`` and ``traffic_router`` labels of a Kruise Rollout."""
    strategy_spec = (rollout.get("spec") or {}).get("strategy") or {}
    if strategy_spec.get("blueGreen"):
        strategy, style = "blueGreen", strategy_spec["blueGreen"]
    elif strategy_spec.get("canary"):
        strategy, style = "canary", strategy_spec["canary"]
    else:
        return "none", ""
    routings = style.get("trafficRoutings") or []
    if not routings:
        return strategy, ""
    first = routings[0]
    if first.get("gateway"):
        return strategy, "GatewayAPI"
    if first.get("ingress") is not None:
        cls = (first["ingress"] or {}).get("classType") or "nginx"
        return strategy, "Nginx" if cls == "nginx" else str(cls)
    refs = first.get("customNetworkRefs") or []
    if refs:
        istio = any(ref.get("kind") in ("VirtualService", "DestinationRule") for ref in refs)
        return strategy, "Istio" if istio else "Custom"
    return strategy, ""


class RolloutCollector(StateCollector):
    """Argo Rollouts' Rollout families and our step gauges over ``rollouts()`` (every scrape)."""

    kind = "Rollouts"

    def __init__(self, rollouts: ObjectProvider, workload: WorkloadLookup | None = None) -> None:
        super().__init__(rollouts)
        self.workload = workload

    def families(self, rollouts: list[Mapping[str, Any]]) -> list[Metric]:
        labels = ("namespace", "name")
        info = GaugeMetricFamily(
            "rollout_info",
            "Information about rollout.",
            labels=(*labels, "strategy", "traffic_router", "phase"),
        )
        phase = GaugeMetricFamily(
            "rollout_phase",
            "Information on the state of the rollout (DEPRECATED - use rollout_info)",
            labels=(*labels, "strategy", "phase"),
        )
        replicas = {
            kind: GaugeMetricFamily(
                f"rollout_info_replicas_{kind}", f"The number of {kind} replicas per rollout.", labels=labels
            )
            for kind in ("available", "unavailable", "desired", "updated")
        }
        step = GaugeMetricFamily(
            "kruise_rollout_step_index",
            "Current step (1-based) of a Rollout whose release is in progress.",
            labels=labels,
        )
        since = GaugeMetricFamily(
            "kruise_rollout_step_state_timestamp_seconds",
            "Unix time the current step of a Rollout in progress entered its current state.",
            labels=(*labels, "step", "step_state"),
        )
        for rollout in rollouts:
            key = list(object_key(rollout))
            strategy, router = strategy_and_router(rollout)
            current = argo_phase(rollout)
            info.add_metric([*key, strategy, router, current], 1.0)
            for candidate in PHASES:
                phase.add_metric([*key, strategy, candidate], float(candidate == current))
            for kind, value in self._replicas(rollout).items():
                replicas[kind].add_metric(key, value)
            status = rollout.get("status") or {}
            release = _release_status(status)
            index = release.get("currentStepIndex")
            if status.get("phase") != RolloutPhase.PROGRESSING or not release or index is None:
                continue
            step.add_metric(key, float(index))
            entered = unix_seconds(release.get("lastUpdateTime"))
            if entered is not None:
                since.add_metric([*key, str(index), str(release.get("currentStepState") or "")], entered)
        return [info, phase, *replicas.values(), step, since]

    def _replicas(self, rollout: Mapping[str, Any]) -> dict[str, float]:
        ref = (rollout.get("spec") or {}).get("workloadRef")
        if self.workload is None or not isinstance(ref, Mapping):
            return {}
        workload = self.workload(object_key(rollout)[0], ref)
        if workload is None:
            return {}
        spec, status = workload.get("spec") or {}, workload.get("status") or {}
        available = float(status.get("availableReplicas") or 0)
        desired = spec.get("replicas")
        return {
            "available": available,
            "unavailable": float(status.get("replicas") or 0) - available,
            "desired": float(1 if desired is None else desired),
            "updated": float(status.get("updatedReplicas") or 0),
        }
