"""Fragments shared by OpenKruise's job kinds (``apps.kruise.io/v1alpha1``).

:class:`CompletionPolicy` is one Go type upstream (``apis/apps/v1alpha1``), embedded by
BroadcastJob and by ImagePullJob/ImageListPullJob: ``type`` Always (default; the job ends when
every target ran, bounded by ``activeDeadlineSeconds`` and cleaned up ``ttlSecondsAfterFinished``
after it finished) or Never (the job keeps running; the two durations do not apply).
"""

from __future__ import annotations

from pydantic import Field

from kruise.core.api.base import Int32, Int64, KubeModel

__all__ = ["CompletionPolicy"]


class CompletionPolicy(KubeModel):
    """CompletionPolicy indicates the completion policy for the job"""

    type: str | None = Field(
        default=None,
        description="Type indicates the type of the CompletionPolicy. Default is Always.",
    )
    active_deadline_seconds: Int64 | None = Field(
        default=None,
        description="ActiveDeadlineSeconds specifies the duration in seconds relative to the startTime "
        "that the job may be active before the system tries to terminate it; value must be positive "
        "integer. Only works for Always type.",
    )
    ttl_seconds_after_finished: Int32 | None = Field(
        default=None,
        description="ttlSecondsAfterFinished limits the lifetime of a Job that has finished execution "
        "(either Complete or Failed). Only works for Always type.",
    )
