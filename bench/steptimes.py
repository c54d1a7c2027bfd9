"""Pure parts of ``bench/rollouts_scale.py``: a Rollout's step timeline from its status events.

No I/O. A watch on Rollouts hands every status it sees, with the local monotonic time the event
arrived, to :meth:`Timeline.observe` after a side's classifier (:func:`kruise_mark` for
``rollouts.kruise.io/v1beta1``, :func:`argo_mark` for ``argoproj.io/v1alpha1``) reduced it to a
:class:`Mark`: the *logical* step (1-based, the same on both sides: step ``k`` is the ``k``-th
weight/replicas step), whether that step sits in its pause, and whether the release is over.

Step lateness (seconds) of step ``k + 1`` = the first time any status showed step ``k + 1`` (or
later, or done) minus (the first time step ``k`` showed its pause + the pause's duration); the
pause's clock starts where both controllers start it: kruise when its step enters
``StepPaused``, Argo when it adds the ``CanaryPauseStep`` pause condition.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

JSON = Mapping[str, Any]


def percentile(values: list[float], q: float) -> float:
    """The nearest-rank ``q``-th percentile (``q`` in 0..100) of ``values``; NaN when empty."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, math.ceil(q / 100 * len(ordered)) - 1))
    return ordered[rank]


class Mark(NamedTuple):
    """What one Rollout status says: ``step`` (logical, 1-based; 0 before any), ``paused`` (that
    step is in its timed pause), ``done`` (the release completed)."""

    step: int
    paused: bool = False
    done: bool = False


def kruise_mark(status: JSON) -> Mark | None:
    """A kruise Rollout's status as a :class:`Mark`; None when it shows no release.

    ``canaryStatus.currentStepIndex`` is 1-based; ``currentStepState`` ``StepPaused`` is the
    pause; done is phase ``Healthy`` with ``currentStepState`` ``Completed`` and the
    ``Progressing`` condition ``False``/``Completed`` (the finalised release)."""
    cs = status.get("canaryStatus") or {}
    index = int(cs.get("currentStepIndex") or 0)
    if not cs or index == 0:
        return None
    state = cs.get("currentStepState")
    progressing: dict[str, Any] = next(
        (c for c in status.get("conditions") or [] if c.get("type") == "Progressing"), {}
    )
    done = (
        status.get("phase") == "Healthy"
        and state == "Completed"
        and progressing.get("status") == "False"
        and progressing.get("reason") == "Completed"
    )
    return Mark(index, paused=state == "StepPaused", done=done)


def argo_mark(status: JSON, steps: int = 5) -> Mark | None:
    """An Argo Rollout's status as a :class:`Mark`, for steps laid out as ``setWeight, pause,
    setWeight, pause, ..., setWeight`` (``steps`` entries); None when it shows no step index.

    ``status.currentStepIndex`` is 0-based over all entries: entry ``2k`` is logical step
    ``k + 1``; entry ``2k + 1`` (the pause after it) stays step ``k + 1``, paused once
    ``status.pauseConditions`` holds a ``CanaryPauseStep``. Done: index ``steps`` (past the
    last) and phase ``Healthy``."""
    if status.get("currentStepIndex") is None:
        return None
    index = int(status["currentStepIndex"])
    if index >= steps:
        return Mark(steps // 2 + 1, done=status.get("phase") == "Healthy")
    pausing = any(p.get("reason") == "CanaryPauseStep" for p in status.get("pauseConditions") or [])
    return Mark(index // 2 + 1, paused=index % 2 == 1 and pausing)


@dataclass
class Timeline:
    """First-seen times (monotonic seconds) of one Rollout's marks after its release began.

    Marks before :meth:`start`, and after it until step 1 is first seen (status writes that still
    carry the previous release's step, e.g. a phase change), are ignored; so the timeline begins
    at step 1 and a ``done`` counts only after it."""

    started_at: float | None = None
    step_at: dict[int, float] = field(default_factory=dict)
    paused_at: dict[int, float] = field(default_factory=dict)
    done_at: float | None = None
    seen: list[tuple[float, Mark]] = field(default_factory=list)
    """Every mark observed after the start, in arrival order (for a look at one Rollout)."""

    def start(self, at: float) -> None:
        """The release was sent at ``at``; later marks count."""
        self.started_at = at

    def observe(self, at: float, mark: Mark | None) -> None:
        """Record ``mark`` seen at ``at`` (only its first sighting of each kind counts)."""
        if mark is None or self.started_at is None or at < self.started_at:
            return
        self.seen.append((at, mark))
        if mark.done:
            if self.step_at and self.done_at is None:
                self.done_at = at
            return
        if mark.step <= 0 or self.done_at is not None or (not self.step_at and mark.step != 1):
            return
        self.step_at.setdefault(mark.step, at)
        if mark.paused:
            self.paused_at.setdefault(mark.step, at)

    def lateness(self, pause: float) -> list[float]:
        """Per pause that was seen: when the next step (or the end) was first seen minus when
        that pause began plus ``pause`` seconds. Negative means a step started early."""
        out = []
        for step, paused in sorted(self.paused_at.items()):
            later = [t for s, t in self.step_at.items() if s > step]
            if self.done_at is not None:
                later.append(self.done_at)
            if later:
                out.append(min(later) - (paused + pause))
        return out

    def complete(self, pauses: int) -> bool:
        """Done, with each of the first ``pauses`` steps seen in its pause."""
        return self.done_at is not None and all(k in self.paused_at for k in range(1, pauses + 1))
