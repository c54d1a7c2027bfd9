"""Render the KWOK Stage file used by the local control plane.

The stages live in ``kwok-stages.yaml`` next to this module (see its header for
what differs from KWOK's defaults). Benchmarks can add latency to simulate an
image pull plus container start (``pod-ready``) and an in-place container
restart (``pod-image-update``); KWOK applies ``delay.durationMilliseconds`` and
``jitterDurationMilliseconds`` before the stage's status patch.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

STAGES_RESOURCE = "kwok-stages.yaml"


@dataclass(frozen=True)
class StageDelays:
    """Per-stage latencies in milliseconds (0 = immediate)."""

    pod_start_ms: int = 0
    pod_start_jitter_ms: int = 0
    inplace_restart_ms: int = 0
    inplace_restart_jitter_ms: int = 0
    pod_delete_ms: int = 0

    def by_stage(self) -> dict[str, tuple[int, int]]:
        return {
            "pod-ready": (self.pod_start_ms, self.pod_start_jitter_ms),
            "pod-image-update": (self.inplace_restart_ms, self.inplace_restart_jitter_ms),
            "pod-delete": (self.pod_delete_ms, 0),
        }


def load_stages() -> list[dict[str, Any]]:
    """The Stage documents as dicts, in file order."""
    text = resources.files(__package__).joinpath(STAGES_RESOURCE).read_text()
    return [doc for doc in yaml.safe_load_all(text) if doc]


def render_stages(delays: StageDelays | None = None) -> list[dict[str, Any]]:
    """Stage documents with ``delays`` applied to the stages they name."""
    stages = load_stages()
    for stage in stages:
        wanted = (delays or StageDelays()).by_stage().get(stage["metadata"]["name"])
        if wanted and (wanted[0] or wanted[1]):
            delay: dict[str, int] = {"durationMilliseconds": wanted[0]}
            if wanted[1]:
                delay["jitterDurationMilliseconds"] = wanted[0] + wanted[1]
            stage["spec"]["delay"] = delay
    return stages


def write_stages(path: Path, delays: StageDelays | None = None) -> Path:
    """Write the rendered stages as one multi-document YAML file for ``kwok --config``."""
    path.write_text(yaml.safe_dump_all(render_stages(delays), sort_keys=False))
    return path
