"""Fragments shared by OpenKruise's job kinds (``apps.kruise.io/v1alpha1``).

:class:`CompletionPolicy` is one Go type upstream (``apis/apps/v1alpha1``), embedded by
BroadcastJob and by ImagePullJob/ImageListPullJob: ``type`` Always (default; the job ends when
every target ran, bounded by ``activeDeadlineSeconds`` and cleaned up ``ttlSecondsAfterFinished``
after it finished) or Never (the job keeps running; the two durations do not apply).
:class:`JobCondition` is upstream's ``JobCondition`` (BroadcastJob's ``status.conditions``: type
``Complete`` or ``Failed``, with ``lastProbeTime``).
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from kruise.core.api.base import Int32, Int64, KubeModel, Time

__all__ = ["CompletionPolicy", "CompletionPolicyType", "JobCondition", "JobConditionType"]


class CompletionPolicyType(StrEnum):
    """Values of ``completionPolicy.type``; the mutating webhooks default it to Always."""

    ALWAYS = "Always"
    NEVER = "Never"


class JobConditionType(StrEnum):
    """Types of :class:`JobCondition`: the job finished (``Complete``) or gave up (``Failed``)."""

    COMPLETE = "Complete"
    FAILED = "Failed"


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


class JobCondition(KubeModel):
    """JobCondition describes current state of a job."""

    type: str = Field(description="Type of job condition, Complete or Failed.")
    status: str = Field(description="Status of the condition, one of True, False, Unknown.")
    last_probe_time: Time | None = Field(default=None, description="Last time the condition was checked.")
    last_transition_time: Time | None = Field(
        default=None, description="Last time the condition transit from one status to another."
    )
    reason: str | None = Field(
        default=None, description="(brief) reason for the condition's last transition."
    )
    message: str | None = Field(
        default=None, description="Human readable message indicating details about last transition."
    )
