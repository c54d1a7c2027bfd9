"""Argo CD's health scripts run here as in Argo CD: their own ``health_test.yaml`` cases pass.

The scripts (``tests/data/argocd``, vendored at a pinned commit) then judge our live objects in
``tests/integration/test_argocd_health.py``; these cases show the harness gives their answers.
Plus the shapes of our status that decide the answer, as upstream kruise writes them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.argocd import CUSTOMIZATIONS, argocd_health

CASES = [
    pytest.param(test_file.parent, case, id=f"{test_file.parent.name}-{Path(case['inputPath']).stem}")
    for test_file in sorted(CUSTOMIZATIONS.glob("*/*/health_test.yaml"))
    for case in (
        {**c, "inputPath": c.get("inputPath") or c.get("inputpath")}
        for c in yaml.safe_load(test_file.read_text())["tests"]
    )
]


@pytest.mark.parametrize(("folder", "case"), CASES)
def test_argocds_own_cases(folder: Path, case: dict[str, Any]) -> None:
    obj = yaml.safe_load((folder / case["inputPath"]).read_text())
    assert argocd_health(obj) == (case["healthStatus"]["status"], case["healthStatus"]["message"])


def test_both_kinds_are_vendored() -> None:
    assert {p.parent.name for p in CUSTOMIZATIONS.glob("*/*/health.lua")} == {"CloneSet", "Rollout"}


def _cloneset(status: dict[str, Any], *, generation: int = 1, partition: object = 0) -> dict[str, Any]:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "web", "generation": generation},
        "spec": {"replicas": status.get("replicas", 0), "updateStrategy": {"partition": partition}},
        "status": {"observedGeneration": generation, **status},
    }


def test_a_cloneset_scaled_to_zero_is_suspended_when_zero_counters_are_omitted() -> None:
    """Upstream omits ``updatedAvailableReplicas: 0``; the script reads its absence as paused."""
    zeros = {"replicas": 0, "readyReplicas": 0, "availableReplicas": 0, "updatedReplicas": 0}
    assert argocd_health(_cloneset({**zeros, "updatedReadyReplicas": 0}))[0] == "Suspended"
    written = _cloneset({**zeros, "updatedReadyReplicas": 0, "updatedAvailableReplicas": 0})
    assert argocd_health(written)[0] == "Healthy", "what writing the zero would have shown"
