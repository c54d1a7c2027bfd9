"""The demo's release panel: an aborted release says so rather than showing the step state the
abort left behind (``StepMetricsAnalysis`` under a ``Healthy`` phase read as still analysing)."""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console

from kruise.rollouts.cli.demo import _view


def _render(snap: dict[str, Any]) -> str:
    console = Console(width=120, record=True, file=io.StringIO())
    console.print(_view(snap, 12.0, "release 2"))
    return console.export_text()


SNAP: dict[str, Any] = {
    "runs": [],
    "phase": "Healthy",
    "step": 1,
    "state": "StepMetricsAnalysis",
    "message": "Rollout is in a healthy state",
    "images": {"v2": 10},
    "weights": {"web": 1},
    "conditions": {},
}


def test_aborted_release_shows_the_abort_not_the_step_state() -> None:
    aborted = {
        **SNAP,
        "conditions": {"Aborted": {"type": "Aborted", "status": "True", "reason": "AnalysisFailed"}},
    }
    text = _render(aborted)
    assert "Healthy  step 1/3  aborted (AnalysisFailed)" in text
    assert "StepMetricsAnalysis" not in text


def test_running_release_shows_the_step_state() -> None:
    text = _render({**SNAP, "phase": "Progressing"})
    assert "Progressing  step 1/3  StepMetricsAnalysis" in text
