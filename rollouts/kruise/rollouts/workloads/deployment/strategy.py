"""The advanced Deployment's strategy and extra status, kept in annotations (pure).

Mirrors Kruise Rollouts' ``api/v1alpha1/deployment_types.go`` and the partition helpers of
``pkg/controller/deployment/util``:

- ``rollouts.kruise.io/deployment-strategy``: JSON ``{rollingStyle, rollingUpdate, paused,
  partition}``. ``partition`` is how many pods should run the new template (int, or a percent of
  ``spec.replicas``), the opposite of a CloneSet's partition. Defaults
  (``SetDefaultDeploymentStrategy``, Partition style only): ``maxUnavailable``/``maxSurge`` 25%,
  and 0/0 becomes ``maxSurge: 0, maxUnavailable: 1``;
- ``rollouts.kruise.io/deployment-extra-status``: JSON ``{updatedReadyReplicas,
  expectedUpdatedReplicas}`` (zero values left out, as Go's ``omitempty`` does);
- ``new_rs_limit`` (``NewRSReplicasLimit``): the partition scaled against ``spec.replicas``
  rounding up, clamped to ``[0, replicas]``; a percentage other than ``100%`` keeps at least one
  old pod when ``replicas > 1``.

Upstream's defaulting writes the default ``maxSurge`` into ``maxUnavailable`` when ``maxSurge``
is missing (a slip); here each field gets its own default. The API server defaults a
RollingUpdate Deployment's ``rollingUpdate`` anyway, so the difference never shows in practice.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kruise.rollouts.release.batchplan import scaled
from kruise.rollouts.release.constants import BATCH_RELEASE_CONTROL_ANNOTATION
from kruise.rollouts.release.objects import meta

DEPLOYMENT_STRATEGY_ANNOTATION = "rollouts.kruise.io/deployment-strategy"
DEPLOYMENT_EXTRA_STATUS_ANNOTATION = "rollouts.kruise.io/deployment-extra-status"
ADVANCED_DEPLOYMENT_CONTROL_LABEL = "rollouts.kruise.io/controlled-by-advanced-deployment-controller"
PARTITION_STYLE = "Partition"

IntOrStr = int | str
JSON = dict[str, Any]


@dataclass(frozen=True)
class DeploymentStrategy:
    """The decoded ``rollouts.kruise.io/deployment-strategy`` annotation."""

    rolling_style: str = ""
    max_unavailable: IntOrStr | None = None
    max_surge: IntOrStr | None = None
    has_rolling_update: bool = False
    paused: bool = False
    partition: IntOrStr = 0

    @property
    def partition_style(self) -> bool:
        return self.rolling_style.lower() == PARTITION_STYLE.lower()


def parse_strategy(raw: str | None) -> DeploymentStrategy:
    """Decode the annotation value; anything unreadable is the empty strategy (as upstream's
    ``GetDeploymentStrategy`` ignores the unmarshal error)."""
    try:
        data = json.loads(raw) if raw else {}
    except ValueError:
        data = {}
    if not isinstance(data, dict):
        data = {}
    rolling = data.get("rollingUpdate")
    partition = data.get("partition", 0)
    return DeploymentStrategy(
        rolling_style=str(data.get("rollingStyle") or ""),
        max_unavailable=(rolling or {}).get("maxUnavailable") if isinstance(rolling, dict) else None,
        max_surge=(rolling or {}).get("maxSurge") if isinstance(rolling, dict) else None,
        has_rolling_update=isinstance(rolling, dict),
        paused=bool(data.get("paused")),
        partition=partition if isinstance(partition, (int, str)) else 0,
    )


CANARY_STYLE = "Canary"


def readable_strategy(deployment: Mapping[str, Any]) -> DeploymentStrategy | None:
    """The strategy annotation when it decodes as a JSON object, else None (absent, empty or
    unreadable: upstream's ``NewController`` gets an unmarshal error and leaves the Deployment)."""
    raw = ((deployment.get("metadata") or {}).get("annotations") or {}).get(DEPLOYMENT_STRATEGY_ANNOTATION)
    try:
        data = json.loads(raw) if raw else None
    except ValueError:
        return None
    return parse_strategy(raw) if isinstance(data, dict) else None


def strategy_of(deployment: Mapping[str, Any]) -> DeploymentStrategy:
    annotations = (deployment.get("metadata") or {}).get("annotations") or {}
    return parse_strategy(annotations.get(DEPLOYMENT_STRATEGY_ANNOTATION))


def with_defaults(strategy: DeploymentStrategy) -> DeploymentStrategy:
    """``SetDefaultDeploymentStrategy`` (Partition style only; see the module docstring)."""
    if not strategy.partition_style:
        return strategy
    unavailable = "25%" if strategy.max_unavailable is None else strategy.max_unavailable
    surge = "25%" if strategy.max_surge is None else strategy.max_surge
    if scaled(surge, 100, round_up=True) == 0 and scaled(unavailable, 100, round_up=True) == 0:
        surge, unavailable = 0, 1
    return DeploymentStrategy(
        rolling_style=strategy.rolling_style,
        max_unavailable=unavailable,
        max_surge=surge,
        has_rolling_update=True,
        paused=strategy.paused,
        partition=strategy.partition,
    )


def dump_strategy(strategy: DeploymentStrategy) -> str:
    """The annotation value, fields in upstream's order with Go's ``omitempty``."""
    data: JSON = {}
    if strategy.rolling_style:
        data["rollingStyle"] = strategy.rolling_style
    if strategy.has_rolling_update:
        rolling: JSON = {}
        if strategy.max_unavailable is not None:
            rolling["maxUnavailable"] = strategy.max_unavailable
        if strategy.max_surge is not None:
            rolling["maxSurge"] = strategy.max_surge
        data["rollingUpdate"] = rolling
    if strategy.paused:
        data["paused"] = True
    data["partition"] = strategy.partition
    return json.dumps(data, separators=(",", ":"))


def dump_extra_status(updated_ready: int, expected_updated: int) -> str:
    """The ``rollouts.kruise.io/deployment-extra-status`` value (zeros omitted)."""
    data: JSON = {}
    if updated_ready:
        data["updatedReadyReplicas"] = updated_ready
    if expected_updated:
        data["expectedUpdatedReplicas"] = expected_updated
    return json.dumps(data, separators=(",", ":"))


def parse_extra_status(deployment: Mapping[str, Any]) -> tuple[int, int]:
    """``(updatedReadyReplicas, expectedUpdatedReplicas)`` from the annotation (0 when absent)."""
    raw = ((deployment.get("metadata") or {}).get("annotations") or {}).get(
        DEPLOYMENT_EXTRA_STATUS_ANNOTATION
    )
    try:
        data = json.loads(raw) if raw else {}
    except ValueError:
        data = {}
    if not isinstance(data, dict):
        return 0, 0
    return int(data.get("updatedReadyReplicas") or 0), int(data.get("expectedUpdatedReplicas") or 0)


def new_rs_limit(partition: IntOrStr, replicas: int) -> int:
    """``NewRSReplicasLimit``: how many pods may run the new template under ``partition``."""
    limit = max(0, min(scaled(partition, replicas, round_up=True), replicas))
    if replicas > 1 and isinstance(partition, str) and partition.strip() != "100%":
        limit = min(limit, replicas - 1)
    return limit


def fenceposts(strategy: DeploymentStrategy, replicas: int) -> tuple[int, int]:
    """``(maxSurge, maxUnavailable)`` resolved against ``replicas`` (``ResolveFenceposts``: surge
    rounds up, unavailable down, both 0 means unavailable 1); ``maxUnavailable`` is capped at
    ``replicas`` as ``MaxUnavailable`` does."""
    surge = scaled(strategy.max_surge if strategy.max_surge is not None else 0, replicas, round_up=True)
    unavailable = scaled(
        strategy.max_unavailable if strategy.max_unavailable is not None else 0, replicas, round_up=False
    )
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return max(0, surge), max(0, min(unavailable, replicas))


def under_control(deployment: Mapping[str, Any]) -> bool:
    """Whether the advanced Deployment controller processes ``deployment``:
    ``IsUnderRolloutControl`` (control annotation, ``Recreate``, ``paused``) plus a readable
    strategy annotation whose ``rollingStyle`` is not ``Canary`` (upstream's ``NewController``:
    any other style, none included, is processed)."""
    spec = deployment.get("spec") or {}
    annotations = meta(deployment).get("annotations") or {}
    strategy = readable_strategy(deployment)
    return (
        bool(annotations.get(BATCH_RELEASE_CONTROL_ANNOTATION))
        and (spec.get("strategy") or {}).get("type") == "Recreate"
        and bool(spec.get("paused"))
        and strategy is not None
        and strategy.rolling_style != CANARY_STYLE
        and not meta(deployment).get("deletionTimestamp")
    )
