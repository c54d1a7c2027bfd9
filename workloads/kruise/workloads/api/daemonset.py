"""Advanced DaemonSet (``apps.kruise.io/v1alpha1``, kind ``DaemonSet``): models and CRD description.

Field names, types and descriptions follow OpenKruise's ``apis/apps/v1alpha1/daemonset_types.go``
(v1.8 line), with ``rollingUpdate.partition`` an int-or-percent as in master's v1alpha1 CRD
(Appendix A of the reference; v1.8 has an integer, which an int-or-string schema still accepts).
As upstream:

- ``template`` is kept verbatim (a plain dict); upstream's CRD leaves it schemaless, ours types it
  as the CloneSet's (:class:`~kruise.core.api.pod.PodTemplateSpec`, unknown fields kept), so a
  wrongly typed field is refused by name;
- defaults (``burstReplicas`` 250, ``RollingUpdate``/``Standard``, maxUnavailable 1, history
  10, ``Surging`` rewritten as Standard with maxSurge 1) are *not* in the model or the CRD: the
  mutating webhook applies them (``SetDefaultsDaemonSet``);
- enumerations (``updateStrategy.type``, ``rollingUpdateType``) are plain strings in the
  schema; the validating webhook rejects bad values with upstream's messages;
- the status counters without ``omitempty`` upstream are required in the CRD.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, ClassVar

from pydantic import Field

from kruise.core.api import (
    Bool,
    Int32,
    Int64,
    IntOrString,
    KubeModel,
    KubeObject,
    LabelSelector,
    SchemaModel,
    SchemaRequired,
    Time,
)
from kruise.core.api.pod import PodTemplateSpec
from kruise.core.crdgen import AGE_COLUMN, CRDSpec, CRDVersion, PrinterColumn
from kruise.workloads.api.pub import Lifecycle

__all__ = [
    "DAEMONSET_CRD",
    "DEFAULT_BURST_REPLICAS",
    "PROGRESSIVE_CREATE_POD_ANNOTATION",
    "DaemonSet",
    "DaemonSetCondition",
    "DaemonSetSpec",
    "DaemonSetStatus",
    "DaemonSetUpdateStrategy",
    "DaemonSetUpdateStrategyType",
    "RollingUpdateDaemonSet",
    "RollingUpdateType",
]

GROUP = "apps.kruise.io"
VERSION = "v1alpha1"

DEFAULT_BURST_REPLICAS = 250
"""``spec.burstReplicas`` when unset: pods created (and deleted) per reconcile at most."""
PROGRESSIVE_CREATE_POD_ANNOTATION = "daemonset.kruise.io/progressive-create-pod"
"""DaemonSet annotation: with ``"true"``, ``partition`` also limits how many new nodes get a pod."""


class DaemonSetUpdateStrategyType(StrEnum):
    """Values of ``spec.updateStrategy.type``; default RollingUpdate."""

    ROLLING_UPDATE = "RollingUpdate"
    ON_DELETE = "OnDelete"


class RollingUpdateType(StrEnum):
    """Values of ``spec.updateStrategy.rollingUpdate.rollingUpdateType``; default Standard.

    ``Surging`` is deprecated: the mutating webhook rewrites it as Standard (maxSurge 1,
    maxUnavailable 0 unless set).
    """

    STANDARD = "Standard"
    IN_PLACE_IF_POSSIBLE = "InPlaceIfPossible"
    SURGING = "Surging"


class RollingUpdateDaemonSet(KubeModel):
    """Spec to control the desired behavior of daemon set rolling update.

    Mirrors ``RollingUpdateDaemonSet``; int-or-percent values are scaled against
    ``status.desiredNumberScheduled`` by the controller (maxUnavailable and maxSurge rounding
    up, partition down).
    """

    rolling_update_type: str | None = Field(
        default=None,
        description="Type is to specify which kind of rollingUpdate.",
    )
    max_unavailable: IntOrString | None = Field(
        default=None,
        description="The maximum number of DaemonSet pods that can be unavailable during the update. "
        "Value can be an absolute number (ex: 5) or a percentage of total number of DaemonSet pods at "
        "the start of the update (ex: 10%). Absolute number is calculated from percentage by rounding "
        "up. This cannot be 0 if MaxSurge is 0 Default value is 1.",
    )
    max_surge: IntOrString | None = Field(
        default=None,
        description="The maximum number of nodes with an existing available DaemonSet pod that can have "
        "an updated DaemonSet pod during during an update. Value can be an absolute number (ex: 5) or a "
        "percentage of desired pods (ex: 10%). This can not be 0 if MaxUnavailable is 0. Absolute number "
        "is calculated from percentage by rounding up to a minimum of 1. Default value is 0.",
    )
    selector: LabelSelector | None = Field(
        default=None,
        description="A label query over nodes that are managed by the daemon set RollingUpdate. Must "
        "match in order to be controlled. It must match the node's labels.",
    )
    partition: IntOrString | None = Field(
        default=None,
        description="The number of DaemonSet pods remained to be old version. Default value is 0. "
        "Maximum value is status.DesiredNumberScheduled, which means no pod will be updated.",
    )
    paused: Bool | None = Field(
        default=None,
        description="Indicates that the daemon set is paused and will not be processed by the daemon "
        "set controller.",
    )


class DaemonSetUpdateStrategy(KubeModel):
    """DaemonSetUpdateStrategy is a struct used to control the update strategy for a DaemonSet."""

    type: str | None = Field(
        default=None,
        description='Type of daemon set update. Can be "RollingUpdate" or "OnDelete". Default is '
        "RollingUpdate.",
    )
    rolling_update: RollingUpdateDaemonSet | None = Field(
        default=None,
        description='Rolling update config params. Present only if type = "RollingUpdate".',
    )


class DaemonSetSpec(KubeModel):
    """DaemonSetSpec defines the desired state of DaemonSet

    Mirrors ``DaemonSetSpec``; ``selector`` and ``template`` are the only required fields.
    """

    selector: LabelSelector = Field(
        description="A label query over pods that are managed by the daemon set. Must match in order to "
        "be controlled. It must match the pod template's labels. More info: "
        "https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors",
    )
    template: Annotated[dict[str, Any], SchemaModel(PodTemplateSpec)] = Field(
        description="An object that describes the pod that will be created. The DaemonSet will create "
        "exactly one copy of this pod on every node that matches the template's node selector (or on "
        "every node if no node selector is specified). More info: "
        "https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#pod-template",
    )
    update_strategy: DaemonSetUpdateStrategy | None = Field(
        default=None,
        description="An update strategy to replace existing DaemonSet pods with new pods.",
    )
    min_ready_seconds: Int32 | None = Field(
        default=None,
        description="The minimum number of seconds for which a newly created DaemonSet pod should be "
        "ready without any of its container crashing, for it to be considered available. Defaults to 0 "
        "(pod will be considered available as soon as it is ready).",
    )
    burst_replicas: IntOrString | None = Field(
        default=None,
        description="BurstReplicas is a rate limiter for booting pods on a lot of pods. The default "
        "value is 250",
    )
    revision_history_limit: Int32 | None = Field(
        default=None,
        description="The number of old history to retain to allow rollback. This is a pointer to "
        "distinguish between explicit zero and not specified. Defaults to 10.",
    )
    lifecycle: Lifecycle | None = Field(
        default=None,
        description="Lifecycle defines the lifecycle hooks for Pods pre-delete, in-place update. "
        "Currently, we only support pre-delete hook for Advanced DaemonSet.",
    )


class DaemonSetCondition(KubeModel):
    """DaemonSetCondition describes the state of a DaemonSet at a certain point (apps/v1 shape)."""

    type: str = Field(description="Type of DaemonSet condition.")
    status: str = Field(description="Status of the condition, one of True, False, Unknown.")
    last_transition_time: Time | None = Field(
        default=None, description="Last time the condition transitioned from one status to another."
    )
    reason: str | None = Field(default=None, description="The reason for the condition's last transition.")
    message: str | None = Field(
        default=None, description="A human readable message indicating details about the transition."
    )


_REQUIRED = SchemaRequired()


class DaemonSetStatus(KubeModel):
    """DaemonSetStatus defines the observed state of DaemonSet

    Mirrors ``DaemonSetStatus``; the per-node counters are computed over the nodes that should run
    the daemon pod (``desiredNumberScheduled``) and those that run one although they should not
    (``numberMisscheduled``).
    """

    current_number_scheduled: Annotated[Int32, _REQUIRED] = Field(
        default=0,
        description="The number of nodes that are running at least 1 daemon pod and are supposed to run "
        "the daemon pod. More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/",
    )
    number_misscheduled: Annotated[Int32, _REQUIRED] = Field(
        default=0,
        description="The number of nodes that are running the daemon pod, but are not supposed to run "
        "the daemon pod. More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/",
    )
    desired_number_scheduled: Annotated[Int32, _REQUIRED] = Field(
        default=0,
        description="The total number of nodes that should be running the daemon pod (including nodes "
        "correctly running the daemon pod). More info: "
        "https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/",
    )
    number_ready: Annotated[Int32, _REQUIRED] = Field(
        default=0,
        description="The number of nodes that should be running the daemon pod and have one or more of "
        "the daemon pod running and ready.",
    )
    observed_generation: Int64 | None = Field(
        default=None,
        description="The most recent generation observed by the daemon set controller.",
    )
    updated_number_scheduled: Annotated[Int32, _REQUIRED] = Field(
        default=0,
        description="The total number of nodes that are running updated daemon pod",
    )
    number_available: Int32 | None = Field(
        default=None,
        description="The number of nodes that should be running the daemon pod and have one or more of "
        "the daemon pod running and available (ready for at least spec.minReadySeconds)",
    )
    number_unavailable: Int32 | None = Field(
        default=None,
        description="The number of nodes that should be running the daemon pod and have none of the "
        "daemon pod running and available (ready for at least spec.minReadySeconds)",
    )
    collision_count: Int32 | None = Field(
        default=None,
        description="Count of hash collisions for the DaemonSet. The DaemonSet controller uses this field "
        "as a collision avoidance mechanism when it needs to create the name for the newest "
        "ControllerRevision.",
    )
    conditions: list[DaemonSetCondition] | None = Field(
        default=None,
        description="Represents the latest available observations of a DaemonSet's current state.",
    )
    daemon_set_hash: str | None = Field(
        default=None,
        description="DaemonSetHash is the controller-revision-hash, which represents the latest version "
        "of the DaemonSet.",
    )


class DaemonSet(KubeObject):
    """DaemonSet is the Schema for the daemonsets API

    Mirrors OpenKruise's Advanced DaemonSet (apps.kruise.io/v1alpha1). ``spec`` is required by the
    model (controllers always need it) but not by the CRD, matching upstream's schema.
    """

    API_VERSION: ClassVar[str] = f"{GROUP}/{VERSION}"
    KIND: ClassVar[str] = "DaemonSet"

    spec: Annotated[DaemonSetSpec, SchemaRequired(False)]
    status: DaemonSetStatus | None = None


DAEMONSET_CRD = CRDSpec(
    group=GROUP,
    kind="DaemonSet",
    plural="daemonsets",
    singular="daemonset",
    short_names=("daemon", "ads"),
    scope="Namespaced",
    versions=(
        CRDVersion(
            name=VERSION,
            model=DaemonSet,
            served=True,
            storage=True,
            status_subresource=True,
            printer_columns=(
                PrinterColumn.integer(
                    "DESIRED", ".status.desiredNumberScheduled", "The desired number of pods."
                ),
                PrinterColumn.integer(
                    "CURRENT", ".status.currentNumberScheduled", "The current number of pods."
                ),
                PrinterColumn.integer("READY", ".status.numberReady", "The ready number of pods."),
                PrinterColumn.integer(
                    "UP-TO-DATE", ".status.updatedNumberScheduled", "The updated number of pods."
                ),
                PrinterColumn.integer("AVAILABLE", ".status.numberAvailable", "The updated number of pods."),
                AGE_COLUMN,
                PrinterColumn(
                    name="CONTAINERS",
                    type="string",
                    priority=1,
                    json_path=".spec.template.spec.containers[*].name",
                    description="The containers of currently  daemonset.",
                ),
                PrinterColumn(
                    name="IMAGES",
                    type="string",
                    priority=1,
                    json_path=".spec.template.spec.containers[*].image",
                    description="The images of currently advanced daemonset.",
                ),
            ),
        ),
    ),
)
"""The Advanced DaemonSet CRD: namespaced, short names ``daemon`` and ``ads``, a status
subresource (no scale) and the printer columns of OpenKruise master (DESIRED ... AGE; CONTAINERS
and IMAGES at -o wide)."""
