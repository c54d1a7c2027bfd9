"""RolloutHistory (``rollouts.kruise.io/v1alpha1``): one record per release with a rollout-id.

Mirrors Kruise Rollouts' ``api/v1alpha1/rollouthistory_types.go`` (proposal
``docs/proposals/20220803-rollouthistory.md``): ``spec`` holds raw snapshots (``data``,
schemaless) of the Rollout, its workload, its Service and its Ingress or HTTPRoute;
``status.phase`` is ``""`` or ``completed`` and ``status.canarySteps`` lists, per step, the pods
that step released (``name``, ``ip``, ``nodeName``). The controller (feature gate
``RolloutHistory``) writes it; the kind exists in v1alpha1 only.

kruise refuses a history that names no Rollout or no rollout-id (``spec.rollout`` required,
its ``rolloutID`` and ``name`` non-empty): upstream's CRD requires both keys but accepts empty
strings.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import Field

from kruise.core.api import Int32, KubeModel, KubeObject, SchemaExtra, SchemaOverride, SchemaRequired
from kruise.core.api.base import SCHEMALESS_SCHEMA
from kruise.core.crdgen import CRDSpec, CRDVersion, PrinterColumn
from kruise.rollouts.api.common import GROUP, V1ALPHA1

__all__ = [
    "PHASE_COMPLETED",
    "ROLLOUTHISTORY_CRD",
    "ROLLOUT_NAME_LABEL",
    "CanaryStepInfo",
    "HistoryPod",
    "RolloutHistory",
    "RolloutHistorySpec",
    "RolloutHistoryStatus",
]

PHASE_COMPLETED = "completed"
"""``status.phase`` once the release completed (upstream ``PhaseCompleted``)."""
ROLLOUT_NAME_LABEL = "rollouts.kruise.io/rollout-name"
"""Label naming the Rollout of a history (with ``rollouts.kruise.io/rollout-id``)."""

_NON_EMPTY = SchemaExtra({"minLength": 1})
_DATA_DESCRIPTION = "Data indecates the spec of object ref"
_NAME_DESCRIPTION = (
    "Name indicates the name of object ref, such as rollout name, workload name, ingress name, etc."
)


class NameAndSpecData(KubeModel):
    """A named object and a raw snapshot of its spec."""

    name: str = Field(description=_NAME_DESCRIPTION)
    data: Annotated[dict[str, Any] | None, SchemaOverride(SCHEMALESS_SCHEMA)] = Field(
        default=None, description=_DATA_DESCRIPTION
    )


class RolloutInfo(NameAndSpecData):
    """RolloutInfo indicates information of the rollout related"""

    name: Annotated[str, _NON_EMPTY] = Field(description=_NAME_DESCRIPTION)
    rollout_id: Annotated[str, _NON_EMPTY] = Field(
        alias="rolloutID",
        description="RolloutID indicates the new rollout if there is no new RolloutID this time, ignore it "
        "and not execute RolloutHistory",
    )


class WorkloadSnapshot(NameAndSpecData):
    """WorkloadInfo indicates information of the workload, such as cloneset, deployment, advanced
    statefulset"""

    api_version: str | None = Field(default=None, description="APIVersion of the workload.")
    kind: str | None = Field(default=None, description="Kind of the workload.")


class TrafficRoutingInfo(KubeModel):
    """TrafficRoutingInfo indicates information of Gateway API or Ingress"""

    ingress: NameAndSpecData | None = Field(
        default=None, description="IngressRef indicates information of ingress"
    )
    http_route: NameAndSpecData | None = Field(
        default=None, alias="httpRoute", description="HTTPRouteRef indacates information of Gateway API"
    )


class RolloutHistorySpec(KubeModel):
    """RolloutHistorySpec defines the desired state of RolloutHistory"""

    rollout: Annotated[RolloutInfo, SchemaRequired()] = Field(
        description="Rollout indicates information of the rollout related with rollouthistory"
    )
    workload: WorkloadSnapshot | None = Field(
        default=None,
        description="Workload indicates information of the workload, such as cloneset, deployment, "
        "advanced statefulset",
    )
    service: NameAndSpecData | None = Field(
        default=None, description="Service indicates information of the service related with workload"
    )
    traffic_routing: TrafficRoutingInfo | None = Field(
        default=None,
        description="TrafficRouting indicates information of traffic route related with workload",
    )


class HistoryPod(KubeModel):
    """Pod indicates the information of a pod, including name, ip, node_name."""

    name: str | None = Field(default=None, description="Name indicates the node name")
    ip: str | None = Field(default=None, description="IP indicates the pod ip")
    node_name: str | None = Field(
        default=None, description="NodeName indicates the node which pod is located at"
    )


class CanaryStepInfo(KubeModel):
    """CanaryStepInfo indicates the pods for a revision"""

    canary_step_index: Int32 | None = Field(
        default=None, description="CanaryStepIndex indicates step this revision"
    )
    pods: list[HistoryPod] | None = Field(default=None, description="Pods indicates the pods information")


class RolloutHistoryStatus(KubeModel):
    """RolloutHistoryStatus defines the observed state of RolloutHistory"""

    phase: str | None = Field(
        default=None, description='Phase indicates phase of RolloutHistory, just "" or "completed"'
    )
    canary_steps: list[CanaryStepInfo] | None = Field(
        default=None, description="CanarySteps indicates the pods released each step"
    )


class RolloutHistory(KubeObject):
    """RolloutHistory is the Schema for the rollouthistories API"""

    API_VERSION: ClassVar[str] = f"{GROUP}/{V1ALPHA1}"
    KIND: ClassVar[str] = "RolloutHistory"

    spec: Annotated[RolloutHistorySpec, SchemaRequired()]
    status: RolloutHistoryStatus | None = None


ROLLOUTHISTORY_CRD = CRDSpec(
    group=GROUP,
    kind="RolloutHistory",
    plural="rollouthistories",
    singular="rollouthistory",
    scope="Namespaced",
    versions=(
        CRDVersion(
            name=V1ALPHA1,
            model=RolloutHistory,
            served=True,
            storage=True,
            printer_columns=(
                PrinterColumn("ROLLOUT", "string", ".spec.rollout.name", "The Rollout of the release"),
                PrinterColumn("ROLLOUT_ID", "string", ".spec.rollout.rolloutID", "The release's rollout-id"),
                PrinterColumn("PHASE", "string", ".status.phase", "Empty until the release completed"),
                PrinterColumn("AGE", "date", ".metadata.creationTimestamp"),
            ),
        ),
    ),
)
"""The RolloutHistory CRD: v1alpha1 only, status subresource (upstream has no printer columns;
ours are additive)."""
