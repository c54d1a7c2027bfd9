"""Blue-green Rollouts over the shared state machine (pure).

A ``strategy.blueGreen`` Rollout walks the same phases, step states and BatchRelease protocol as
a canary one (``KR:pkg/controller/rollout/rollout_bluegreen.go`` mirrors ``rollout_canary.go``);
what differs lives where it belongs:

- the sub-status is ``status.blueGreenStatus`` with ``updatedRevision``/``updatedReplicas``/
  ``updatedReadyReplicas`` instead of ``canaryStatus`` with ``canaryRevision``/``canaryReplicas``/
  ``canaryReadyReplicas``: :func:`decide` shows the machine a canary-shaped view and renames the
  result back, so the two never coexist;
- the BatchRelease runs in ``rollingStyle: BlueGreen`` (surge instead of partition, see
  :mod:`kruise.rollouts.workloads.bluegreen`);
- no step continues by itself: the last ``100%`` step waits for approval too (``canary.py``);
- a new revision in the middle of a release is refused with upstream's message
  (:data:`CONTINUOUS_RELEASE_MESSAGE`), only a rollback is accepted (``machine.py``);
- finalisation has its own orders (``finalise.py``), e.g. on success
  RouteTrafficToNew -> RestoreStableService -> ResumeWorkload -> RouteTrafficToStable ->
  RemoveCanaryService -> ReleaseWorkloadControl.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, cast

from kruise.rollouts.release import constants as c
from kruise.rollouts.release.views import RolloutStatusView
from kruise.rollouts.rollout import machine
from kruise.rollouts.rollout.model import JSON, Decision, Observed, Outcomes
from kruise.rollouts.rollout.steps import is_blue_green

CONTINUOUS_RELEASE_MESSAGE = c.BLUE_GREEN_CONTINUOUS_RELEASE_MESSAGE
_TO_CANARY = {
    "updatedRevision": "canaryRevision",
    "updatedReplicas": "canaryReplicas",
    "updatedReadyReplicas": "canaryReadyReplicas",
}
_TO_BLUE_GREEN = {v: k for k, v in _TO_CANARY.items()}


def _renamed(sub: Mapping[str, Any], names: Mapping[str, str]) -> JSON:
    return {names.get(k, k): v for k, v in sub.items()}


def canary_view(status: Mapping[str, Any]) -> JSON:
    """``status`` with ``blueGreenStatus`` shown as ``canaryStatus`` (the machine's vocabulary)."""
    out = {k: v for k, v in status.items() if k not in ("blueGreenStatus", "canaryStatus")}
    if isinstance(status.get("blueGreenStatus"), Mapping):
        out["canaryStatus"] = _renamed(status["blueGreenStatus"], _TO_CANARY)
    return out


def blue_green_status(status: Mapping[str, Any]) -> JSON:
    """The inverse of :func:`canary_view`."""
    out = {k: v for k, v in status.items() if k not in ("blueGreenStatus", "canaryStatus")}
    if isinstance(status.get("canaryStatus"), Mapping):
        out["blueGreenStatus"] = _renamed(status["canaryStatus"], _TO_BLUE_GREEN)
    return out


def decide(rollout: Mapping[str, Any], obs: Observed, outcomes: Outcomes | None = None) -> Decision:
    """:func:`kruise.rollouts.rollout.machine.decide` for either strategy."""
    if not is_blue_green(rollout):
        return machine.decide(rollout, obs, outcomes)
    view = {**rollout, "status": canary_view(rollout.get("status") or {})}
    decision = machine.decide(view, obs, outcomes)
    return replace(decision, status=cast(RolloutStatusView, blue_green_status(decision.status)))
