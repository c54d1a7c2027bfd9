"""Status condition models: ``metav1.Condition`` and the apps/v1 workload condition shape.

Two shapes exist upstream. New APIs use ``metav1.Condition`` (``observedGeneration``, required
``reason``/``message``); OpenKruise workloads and Kruise Rollouts keep the older
Deployment-style condition with ``lastUpdateTime``. Kinds subclass the one they mirror so the
generated CRD carries the kind's own description.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import Field

from kruise.core.api.base import Int64, KubeModel, SchemaExtra, SchemaRequired, Time

__all__ = ["Condition", "ConditionStatus", "WorkloadCondition"]


class ConditionStatus(StrEnum):
    """The values of a condition's ``status`` (``corev1.ConditionStatus``)."""

    TRUE = "True"
    FALSE = "False"
    UNKNOWN = "Unknown"


class Condition(KubeModel):
    """Condition contains details for one aspect of the current state of this API Resource.

    Mirrors ``metav1.Condition``: ``type``, ``status``, ``lastTransitionTime``, ``reason`` and
    ``message`` are required in the schema (``message`` may be empty); ``status`` is an enum.
    """

    type: str = Field(description="type of condition in CamelCase or in foo.example.com/CamelCase.")
    status: Annotated[str, SchemaExtra({"enum": ["True", "False", "Unknown"]})] = Field(
        description="status of the condition, one of True, False, Unknown."
    )
    observed_generation: Int64 | None = Field(
        default=None,
        description="observedGeneration represents the .metadata.generation that the condition was set "
        "based upon.",
    )
    last_transition_time: Time = Field(
        description="lastTransitionTime is the last time the condition transitioned from one status to "
        "another."
    )
    reason: str = Field(
        description="reason contains a programmatic identifier indicating the reason for the condition's "
        "last transition."
    )
    message: Annotated[str, SchemaRequired()] = Field(
        default="",
        description="message is a human readable message indicating details about the transition. This "
        "may be an empty string.",
    )


class WorkloadCondition(KubeModel):
    """WorkloadCondition describes the state of a workload at a certain point.

    Mirrors the apps/v1 ``DeploymentCondition`` shape that OpenKruise uses for
    ``CloneSetCondition`` and friends: only ``type`` and ``status`` are required.
    """

    type: str = Field(description="Type of the condition.")
    status: str = Field(description="Status of the condition, one of True, False, Unknown.")
    last_update_time: Time | None = Field(default=None, description="Last time the condition is updated.")
    last_transition_time: Time | None = Field(
        default=None, description="Last time the condition transitioned from one status to another."
    )
    reason: str | None = Field(default=None, description="The reason for the condition's last transition.")
    message: str | None = Field(
        default=None, description="A human readable message indicating details about the transition."
    )
