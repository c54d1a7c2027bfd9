"""What a blue-green release keeps of the workload (pure): whether a BatchRelease controls it,
the user's settings saved while it does, and whether the workload is ready for a batch.

As Kruise Rollouts' ``control/bluegreenstyle`` and ``control/util.go``: the settings live in
``rollouts.kruise.io/original-deployment-strategy`` (``GetOriginalSetting``/``InitOriginalSetting``,
fields in upstream's order, zero values left out); a batch is only upgraded on a workload still
carrying the blue-green settings (``ValidateReadyForBlueGreenRelease``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kruise.rollouts.release.constants import (
    BATCH_RELEASE_CONTROL_ANNOTATION,
    MAX_PROGRESS_SECONDS,
    MAX_READY_SECONDS,
    ORIGINAL_DEPLOYMENT_STRATEGY_ANNOTATION,
)
from kruise.rollouts.release.objects import meta as meta_of

JSON = dict[str, Any]


def is_deployment(workload: Mapping[str, Any]) -> bool:
    return workload.get("kind") == "Deployment"


def is_controlled(br: Mapping[str, Any], obj: Mapping[str, Any]) -> bool:
    """``IsControlledByBatchRelease``: owned by, or carrying the control-info of, ``br``."""
    uid = meta_of(br).get("uid")
    if any(r.get("controller") and r.get("uid") == uid for r in meta_of(obj).get("ownerReferences") or []):
        return True
    raw = (meta_of(obj).get("annotations") or {}).get(BATCH_RELEASE_CONTROL_ANNOTATION)
    if not raw:
        return False
    try:
        return bool(json.loads(raw).get("uid") == uid)
    except (ValueError, AttributeError):
        return False


def saved_setting(workload: Mapping[str, Any]) -> JSON:
    """``GetOriginalSetting``: the settings saved in the annotation (``{}`` when absent).
    Raises ``ValueError`` on an unreadable annotation."""
    raw = (meta_of(workload).get("annotations") or {}).get(ORIGINAL_DEPLOYMENT_STRATEGY_ANNOTATION)
    setting = json.loads(raw) if raw else {}
    if not isinstance(setting, dict):
        raise ValueError("original-deployment-strategy is not an object")
    return setting


def original_setting(workload: Mapping[str, Any]) -> JSON:
    """``GetOriginalSetting`` + ``InitOriginalSetting``: the saved settings, completed from the
    workload where unset (only when taking control: the workload still has the user's values)."""
    setting = saved_setting(workload)
    spec = workload.get("spec") or {}
    if is_deployment(workload):
        rolling = (spec.get("strategy") or {}).get("rollingUpdate") or {}
        setting.setdefault("maxSurge", rolling.get("maxSurge", "25%"))
        setting.setdefault("maxUnavailable", rolling.get("maxUnavailable", "25%"))
        if setting.get("progressDeadlineSeconds") is None:
            setting["progressDeadlineSeconds"] = spec.get("progressDeadlineSeconds", 600)
    else:
        strategy = spec.get("updateStrategy") or {}
        setting.setdefault("maxSurge", strategy.get("maxSurge", "0%"))
        setting.setdefault("maxUnavailable", strategy.get("maxUnavailable", "20%"))
    if not setting.get("minReadySeconds"):
        setting["minReadySeconds"] = int(spec.get("minReadySeconds") or 0)
    return setting


def dump_setting(setting: Mapping[str, Any]) -> str:
    """The annotation value, fields in upstream's order; zero/absent ones omitted (``omitempty``)."""
    out: JSON = {}
    for key in ("maxUnavailable", "maxSurge"):
        if setting.get(key) is not None:
            out[key] = setting[key]
    if setting.get("minReadySeconds"):
        out["minReadySeconds"] = int(setting["minReadySeconds"])
    if setting.get("progressDeadlineSeconds") is not None:
        out["progressDeadlineSeconds"] = int(setting["progressDeadlineSeconds"])
    return json.dumps(out, separators=(",", ":"))


def validate_ready(workload: Mapping[str, Any]) -> str | None:
    """``ValidateReadyForBlueGreenRelease``: None, or why the batch cannot be upgraded."""
    spec = workload.get("spec") or {}
    if not (meta_of(workload).get("annotations") or {}).get(BATCH_RELEASE_CONTROL_ANNOTATION):
        return "workload has no control info annotation"
    if is_deployment(workload):
        strategy = spec.get("strategy") or {}
        if strategy.get("type") and strategy.get("type") != "RollingUpdate":
            return "deployment strategy type is not RollingUpdate"
        if strategy.get("rollingUpdate") is None:
            return "deployment strategy rollingUpdate is nil"
        if (
            int(spec.get("minReadySeconds") or 0) != MAX_READY_SECONDS
            or spec.get("progressDeadlineSeconds") != MAX_PROGRESS_SECONDS
        ):
            return (
                "deployment strategy minReadySeconds or progressDeadlineSeconds is not "
                "MaxReadySeconds or MaxProgressSeconds"
            )
        return None
    strategy_type = (spec.get("updateStrategy") or {}).get("type")
    if strategy_type and strategy_type != "ReCreate":
        return "cloneSet strategy type is not ReCreate"
    if int(spec.get("minReadySeconds") or 0) != MAX_READY_SECONDS:
        return "cloneSet strategy minReadySeconds is not MaxReadySeconds"
    return None
