"""The rollout-id of a workload (pure).

**Where the rollout-id lives.** Upstream (Kruise Rollouts v1beta1) is inconsistent: its workload
webhook compares the ``rollouts.kruise.io/rollout-id`` *annotation* to decide whether a release
starts, while the Rollout controller reads the *label* of the same name
(``rollout_status.go:getRolloutID``), and its e2e suite sets the label. Rule here, used by the
hold webhooks and by the controllers alike (:func:`workload_rollout_id`): the **label** is
authoritative; when the workload has no such label, the annotation is read instead. So manifests
written for either half of upstream behave the same, and a release entered by an id change is the
release the controller follows.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kruise.rollouts.api.common import ROLLOUT_ID_LABEL


def workload_rollout_id(workload: Mapping[str, Any]) -> str:
    """The workload's ``rollouts.kruise.io/rollout-id``: its label, else its annotation, else ""."""
    meta = workload.get("metadata") or {}
    label = str((meta.get("labels") or {}).get(ROLLOUT_ID_LABEL) or "")
    return label or str((meta.get("annotations") or {}).get(ROLLOUT_ID_LABEL) or "")
