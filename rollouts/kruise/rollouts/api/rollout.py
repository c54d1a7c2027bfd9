"""Rollout (``rollouts.kruise.io/v1beta1``, the storage version): spec, kind and CRD.

Mirrors Kruise Rollouts' ``api/v1beta1/rollout_types.go``. A Rollout attaches to an existing
workload (``spec.workloadRef``) and describes a canary (partition or extra-Deployment style) or a
blue-green release in ``steps``. As upstream:

- exactly one of ``strategy.canary``/``strategy.blueGreen`` must be set and every step needs
  ``replicas``: the validating webhook (:mod:`kruise.rollouts.admission`) enforces it, the CRD
  does not;
- the CRD defaults (``disabled: false``, ``gracePeriodSeconds: 3`` and gateway-api's match
  defaults) are applied by :func:`kruise.rollouts.admission.default_rollout`, because our CRD
  generator emits no ``default`` keywords;
- v1alpha1 (:mod:`kruise.rollouts.api.rollout_v1alpha1`) is served too and converted by
  :mod:`kruise.rollouts.api.conversion`.
"""

from __future__ import annotations

from typing import Annotated, ClassVar

from pydantic import Field

from kruise.core.api import Bool, Int32, IntOrString, KubeModel, KubeObject, SchemaExtra, SchemaRequired
from kruise.core.crdgen import CRDSpec, CRDVersion, PrinterColumn
from kruise.rollouts.api.analysis_ref import RolloutAnalysis, RolloutBackgroundAnalysis
from kruise.rollouts.api.common import (
    GROUP,
    V1ALPHA1,
    V1BETA1,
    ObjectRef,
    PatchPodTemplateMetadata,
    RollingStyle,
)
from kruise.rollouts.api.rollout_status import RolloutStatus
from kruise.rollouts.api.rollout_v1alpha1 import RolloutV1alpha1
from kruise.rollouts.api.traffic import TrafficRoutingRef, TrafficRoutingStrategy

__all__ = [
    "AGE_COLUMN",
    "ROLLOUT_CRD",
    "BlueGreenStrategy",
    "CanaryStep",
    "CanaryStrategy",
    "Rollout",
    "RolloutPause",
    "RolloutSpec",
    "RolloutStrategy",
]

_STEPS_DESCRIPTION = (
    "Steps define the order of phases to execute release in batches(20%, 40%, 60%, 80%, 100%)"
)
_TRAFFIC_ROUTINGS_DESCRIPTION = (
    "TrafficRoutings support ingress, gateway api and custom network resource(e.g. istio, apisix) to "
    "enable more fine-grained traffic routing and current only support one TrafficRouting"
)
_FAILURE_THRESHOLD_DESCRIPTION = (
    "FailureThreshold indicates how many failed pods can be tolerated in all upgraded pods. Only when "
    "FailureThreshold are satisfied, Rollout can enter ready state. If FailureThreshold is nil, Rollout "
    "will use the MaxUnavailable of workload as its FailureThreshold. Defaults to nil."
)
_MAX_STEPS = SchemaExtra({"maxItems": 50})


class RolloutPause(KubeModel):
    """RolloutPause defines a pause stage for a rollout

    Mirrors ``RolloutPause``: a nil ``duration`` waits for manual approval.
    """

    duration: Int32 | None = Field(
        default=None, description="Duration the amount of time to wait before moving to the next step."
    )


class CanaryStep(TrafficRoutingStrategy):
    """CanaryStep defines a step of a canary workload.

    Mirrors v1beta1 ``CanaryStep``: the inlined traffic strategy plus ``replicas`` (number or
    percentage of the workload's replicas) and ``pause``. Go always writes ``pause`` (a struct).
    """

    replicas: IntOrString | None = Field(
        default=None,
        description="Replicas is the number of expected canary pods in this batch it can be an absolute "
        "number (ex: 5) or a percentage of total pods.",
    )
    pause: RolloutPause = Field(
        default_factory=RolloutPause, description="Pause defines a pause stage for a rollout, manual or auto"
    )
    analysis: RolloutAnalysis | None = Field(
        default=None,
        description="kruise extension: metric analysis gating this step (Argo Rollouts' step analysis).",
    )


class CanaryStrategy(KubeModel):
    """CanaryStrategy defines parameters for a Replica Based Canary

    Mirrors v1beta1 ``CanaryStrategy``. ``enableExtraWorkloadForCanary`` selects the canary style
    (an extra Deployment, apps/v1 Deployment only); otherwise the release is partition style.
    """

    steps: Annotated[list[CanaryStep], _MAX_STEPS] | None = Field(
        default=None, description=_STEPS_DESCRIPTION
    )
    traffic_routings: list[TrafficRoutingRef] | None = Field(
        default=None, description=_TRAFFIC_ROUTINGS_DESCRIPTION
    )
    failure_threshold: IntOrString | None = Field(default=None, description=_FAILURE_THRESHOLD_DESCRIPTION)
    patch_pod_template_metadata: PatchPodTemplateMetadata | None = Field(
        default=None,
        description="PatchPodTemplateMetadata indicates patch configuration(e.g. labels, annotations) to the "
        "canary deployment podTemplateSpec.metadata only support for canary deployment",
    )
    enable_extra_workload_for_canary: Bool | None = Field(
        default=None,
        description="If true, then it will create new deployment for canary, such as: workload-demo-canary. "
        "When user verifies that the canary version is ready, we will remove the canary deployment and "
        "release the deployment workload-demo in full. Current only support k8s native deployment",
    )
    traffic_routing_ref: str | None = Field(
        default=None, description="TrafficRoutingRef is TrafficRouting's Name"
    )
    analysis: RolloutBackgroundAnalysis | None = Field(
        default=None,
        description="kruise extension: background metric analysis from startingStep until the release ends.",
    )
    disable_generate_canary_service: Bool | None = Field(
        default=None,
        description="canary service will not be generated if DisableGenerateCanaryService is true",
    )


class BlueGreenStrategy(KubeModel):
    """BlueGreenStrategy defines parameters for Blue Green Release

    Mirrors ``BlueGreenStrategy``: the canary fields minus the extra workload and template patch.
    """

    steps: Annotated[list[CanaryStep], _MAX_STEPS] | None = Field(
        default=None, description=_STEPS_DESCRIPTION
    )
    traffic_routings: list[TrafficRoutingRef] | None = Field(
        default=None, description=_TRAFFIC_ROUTINGS_DESCRIPTION
    )
    failure_threshold: IntOrString | None = Field(default=None, description=_FAILURE_THRESHOLD_DESCRIPTION)
    traffic_routing_ref: str | None = Field(
        default=None, description="TrafficRoutingRef is TrafficRouting's Name"
    )
    disable_generate_canary_service: Bool | None = Field(
        default=None,
        description="canary service will not be generated if DisableGenerateCanaryService is true",
    )


class RolloutStrategy(KubeModel):
    """RolloutStrategy defines strategy to apply during next rollout

    Mirrors v1beta1 ``RolloutStrategy`` and its helpers (``GetRollingStyle``, ``GetSteps``,
    ``GetTrafficRouting``).
    """

    paused: Bool | None = Field(
        default=None, description="Paused indicates that the Rollout is paused. Default value is false"
    )
    canary: CanaryStrategy | None = Field(
        default=None, description="CanaryStrategy defines parameters for a Replica Based Canary"
    )
    blue_green: BlueGreenStrategy | None = Field(
        default=None, description="BlueGreenStrategy defines parameters for Blue Green Release"
    )

    def rolling_style(self) -> RollingStyle | None:
        """``GetRollingStyle``: BlueGreen if set, Canary if the extra workload is enabled, else Partition.

        Returns ``None`` when neither strategy is set (upstream dereferences a nil pointer there).
        """
        if self.blue_green is not None:
            return RollingStyle.BLUE_GREEN
        if self.canary is None:
            return None
        if self.canary.enable_extra_workload_for_canary:
            return RollingStyle.CANARY
        return RollingStyle.PARTITION

    def steps(self) -> list[CanaryStep]:
        """``GetSteps``: the steps of the active strategy (empty when none)."""
        if self.blue_green is not None:
            return list(self.blue_green.steps or [])
        if self.canary is not None:
            return list(self.canary.steps or [])
        return []

    def traffic_routings(self) -> list[TrafficRoutingRef] | None:
        """``GetTrafficRouting``: the traffic routings of the active strategy, as stored (may be None)."""
        if self.blue_green is not None:
            return self.blue_green.traffic_routings
        if self.canary is not None:
            return self.canary.traffic_routings
        return None


class RolloutSpec(KubeModel):
    """RolloutSpec defines the desired state of Rollout

    Mirrors v1beta1 ``RolloutSpec``: ``workloadRef`` and ``strategy`` are required in the CRD.
    ``progressDeadlineSeconds`` (at least 1) and ``progressDeadlineAbort`` are kruise's additive
    fields (:mod:`kruise.rollouts.rollout.deadline`); v1alpha1 has neither.
    """

    workload_ref: Annotated[ObjectRef, SchemaRequired()] = Field(
        default_factory=ObjectRef,
        description="WorkloadRef contains enough information to let you identify a workload for Rollout "
        "Batch release of the bypass",
    )
    strategy: Annotated[RolloutStrategy, SchemaRequired()] = Field(
        default_factory=RolloutStrategy, description="rollout strategy"
    )
    disabled: Bool = Field(
        default=False,
        description="if a rollout disabled, then the rollout would not watch changes of workload",
    )
    progress_deadline_seconds: Annotated[Int32, SchemaExtra({"minimum": 1})] | None = Field(
        default=None,
        description="kruise (Argo Rollouts' field): seconds a release may go without progress "
        "(pauses excluded) before it is reported ProgressDeadlineExceeded; unset: no deadline",
    )
    progress_deadline_abort: bool | None = Field(
        default=None,
        description="kruise (Argo Rollouts' field): abort the release when progressDeadlineSeconds "
        "passes (traffic and pods back to stable, the new template held); needs "
        "progressDeadlineSeconds",
    )


class Rollout(KubeObject):
    """Rollout is the Schema for the rollouts API

    Mirrors Kruise Rollouts' v1beta1 ``Rollout`` (the storage version).
    """

    API_VERSION: ClassVar[str] = f"{GROUP}/{V1BETA1}"
    KIND: ClassVar[str] = "Rollout"

    spec: Annotated[RolloutSpec, SchemaRequired(False)] = Field(default_factory=RolloutSpec)
    status: RolloutStatus | None = None


AGE_COLUMN = PrinterColumn(name="AGE", type="date", json_path=".metadata.creationTimestamp")
"""``+kubebuilder:printcolumn:name="AGE",type=date`` as Kruise Rollouts declares it (no description)."""


def _rollout_columns(status_prefix: str) -> tuple[PrinterColumn, ...]:
    return (
        PrinterColumn("STATUS", "string", ".status.phase", "The rollout status phase"),
        PrinterColumn(
            "CANARY_STEP", "integer", f"{status_prefix}.currentStepIndex", "The rollout canary status step"
        ),
        PrinterColumn(
            "CANARY_STATE",
            "string",
            f"{status_prefix}.currentStepState",
            "The rollout canary status step state",
        ),
        PrinterColumn("MESSAGE", "string", ".status.message", "The rollout canary status message"),
        AGE_COLUMN,
    )


ROLLOUT_CRD = CRDSpec(
    group=GROUP,
    kind="Rollout",
    plural="rollouts",
    singular="rollout",
    scope="Namespaced",
    versions=(
        CRDVersion(
            name=V1ALPHA1,
            model=RolloutV1alpha1,
            served=True,
            storage=False,
            printer_columns=_rollout_columns(".status.canaryStatus"),
        ),
        CRDVersion(
            name=V1BETA1,
            model=Rollout,
            served=True,
            storage=True,
            printer_columns=_rollout_columns(".status"),
        ),
    ),
)
"""The Rollout CRD: v1alpha1 served, v1beta1 served and stored, status subresource, no short names.

Printer columns as upstream: v1alpha1 reads the step from ``.status.canaryStatus``, v1beta1 from
the top-level mirrors ``.status.currentStepIndex``/``.status.currentStepState``."""
