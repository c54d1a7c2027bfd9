"""ContainerRecreateRequest (``apps.kruise.io/v1alpha1``, short name ``crr``): models, raw shape, CRD.

Field names, types, required lists and descriptions follow OpenKruise's
``apis/apps/v1alpha1/containerrecreaterequest_types.go`` (v1.8.4). A CRR asks kruise-daemon on
the pod's node to stop some containers of one running pod (running their preStop hooks first);
the kubelet then starts them again, so the pod keeps its name, UID, IP and volumes.

- ``spec`` is immutable once created; the mutating webhook fills in the labels
  (:data:`ACTIVE_LABEL`, :data:`POD_UID_LABEL`, :data:`NODE_NAME_LABEL`), each container's
  ``preStop``/``ports`` copied from the pod and its ``statusContext`` (the container ID and
  restart count at creation), ``strategy.failurePolicy`` (``Fail``) and
  ``strategy.terminationGracePeriodSeconds`` (the pod's).
- ``status.phase`` goes ``Pending`` (another CRR of the pod goes first) -> ``Recreating`` ->
  ``Completed`` (with ``completionTime``); per container, ``containerRecreateStates`` go
  ``Pending`` -> ``Recreating`` -> ``Succeeded`` | ``Failed``.
- :class:`ContainerRecreateRequestView` and friends are the raw (orjson dict) shape the
  controllers read, as ``TypedDict``\\ s; the pydantic models stay the schema.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, ClassVar, TypedDict

from pydantic import Field

from kruise.core.api import Bool, Int32, Int64, IntOrString, KubeModel, KubeObject, SchemaRequired, Time
from kruise.core.crdgen import AGE_COLUMN, CRDSpec, CRDVersion, PrinterColumn

__all__ = [
    "ACTIVE_LABEL",
    "CONTAINERRECREATEREQUEST_CRD",
    "FAILURE_POLICY_FAIL",
    "FAILURE_POLICY_IGNORE",
    "NODE_NAME_LABEL",
    "POD_UID_LABEL",
    "SYNC_CONTAINER_STATUSES_ANNOTATION",
    "UNREADY_ACQUIRED_KEY",
    "ContainerRecreateRequest",
    "ContainerRecreateRequestContainer",
    "ContainerRecreateRequestContainerContext",
    "ContainerRecreateRequestContainerRecreateState",
    "ContainerRecreateRequestPhase",
    "ContainerRecreateRequestSpec",
    "ContainerRecreateRequestStatus",
    "ContainerRecreateRequestStrategy",
    "ContainerRecreateRequestView",
    "ContainerRecreateStateView",
    "CrrContainerView",
    "CrrSpecView",
    "CrrStatusView",
    "CrrStrategyView",
    "ProbeHandler",
    "SyncContainerStatusView",
]

GROUP = "apps.kruise.io"
VERSION = "v1alpha1"

POD_UID_LABEL = "crr.apps.kruise.io/pod-uid"
"""CRR label: the UID of the pod (set by the webhook, immutable)."""
NODE_NAME_LABEL = "crr.apps.kruise.io/node-name"
"""CRR label: the pod's node (set by the webhook, immutable); the daemon lists its CRRs by it."""
ACTIVE_LABEL = "crr.apps.kruise.io/active"
"""CRR label ``"true"`` while the CRR is not completed (the manager removes it on completion)."""
SYNC_CONTAINER_STATUSES_ANNOTATION = "crr.apps.kruise.io/sync-container-statuses"
"""CRR annotation: JSON list of :class:`SyncContainerStatusView`, the pod's running container
statuses (started after the CRR was created), written by the manager for the daemon."""
UNREADY_ACQUIRED_KEY = "crr.apps.kruise.io/unready-acquired"
"""CRR annotation (RFC 3339 time the pod was made not-ready) and finalizer of the same name."""

FAILURE_POLICY_FAIL = "Fail"
FAILURE_POLICY_IGNORE = "Ignore"


class ContainerRecreateRequestPhase(StrEnum):
    """Phase of a CRR and of each container in it."""

    PENDING = "Pending"
    RECREATING = "Recreating"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    COMPLETED = "Completed"


class _ExecAction(KubeModel):
    """ExecAction describes a "run in container" action."""

    command: list[str] | None = Field(
        default=None,
        description="Command is the command line to execute inside the container, the working directory "
        "for the command  is root ('/') in the container's filesystem.",
    )


class _HTTPHeader(KubeModel):
    """HTTPHeader describes a custom header to be used in HTTP probes"""

    name: str = Field(description="The header field name.")
    value: str = Field(description="The header field value")


class _HTTPGetAction(KubeModel):
    """HTTPGetAction describes an action based on HTTP Get requests."""

    path: str | None = Field(default=None, description="Path to access on the HTTP server.")
    port: IntOrString = Field(description="Name or number of the port to access on the container.")
    host: str | None = Field(default=None, description="Host name to connect to, defaults to the pod IP.")
    scheme: str | None = Field(default=None, description="Scheme to use for connecting to the host.")
    http_headers: list[_HTTPHeader] | None = Field(
        default=None, description="Custom headers to set in the request. HTTP allows repeated headers."
    )


class _TCPSocketAction(KubeModel):
    """TCPSocketAction describes an action based on opening a socket"""

    port: IntOrString = Field(description="Number or name of the port to access on the container.")
    host: str | None = Field(
        default=None, description=("Optional: Host name to connect to, defaults to the pod IP.")
    )


class ProbeHandler(KubeModel):
    """ProbeHandler defines a specific action that should be taken (the pod's preStop, copied)."""

    exec: _ExecAction | None = Field(
        default=None, description=("One and only one of the following should be specified.")
    )
    http_get: _HTTPGetAction | None = Field(
        default=None, description=("HTTPGet specifies the http request to perform.")
    )
    tcp_socket: _TCPSocketAction | None = Field(
        default=None, description="TCPSocket specifies an action involving a TCP port."
    )


class _ContainerPort(KubeModel):
    """ContainerPort represents a network port in a single container."""

    name: str | None = Field(default=None, description="If specified, this must be an IANA_SVC_NAME.")
    host_port: Int32 | None = Field(default=None, description="Number of port to expose on the host.")
    container_port: Int32 = Field(description="Number of port to expose on the pod's IP address.")
    protocol: str | None = Field(default=None, description="Protocol for port. Must be UDP, TCP, or SCTP.")
    host_ip: str | None = Field(
        default=None, alias="hostIP", description="What host IP to bind the external port to."
    )


class ContainerRecreateRequestContainerContext(KubeModel):
    """ContainerRecreateRequestContainerContext contains context status of the container that need to
    recreate."""

    container_id: str = Field(
        alias="containerID", description="Container's ID in the format 'docker://<container_id>'."
    )
    restart_count: Int32 = Field(
        description="The number of times the container has been restarted, currently based on the number "
        "of dead containers that have not yet been removed."
    )


class ContainerRecreateRequestContainer(KubeModel):
    """ContainerRecreateRequestContainer contains the name of the container."""

    name: str = Field(
        description=(
            "Name of the container that need to recreate. It must be existing in the real "
            "pod.Spec.Containers."
        )
    )
    pre_stop: ProbeHandler | None = Field(
        default=None,
        description=(
            "PreStop is synced from the real container in Pod spec during this "
            "ContainerRecreateRequest creating. "
            "Populated by the system. Read-only."
        ),
    )
    ports: list[_ContainerPort] | None = Field(
        default=None,
        description=(
            "Ports is synced from the real container in Pod spec during this ContainerRecreateRequest"
            " creating. "
            "Populated by the system. Read-only."
        ),
    )
    status_context: ContainerRecreateRequestContainerContext | None = Field(
        default=None,
        description=(
            "StatusContext is synced from the real Pod status during this ContainerRecreateRequest "
            "creating. "
            "Populated by the system. Read-only."
        ),
    )


class ContainerRecreateRequestStrategy(KubeModel):
    """ContainerRecreateRequestStrategy contains the strategies for containers recreation."""

    failure_policy: str | None = Field(
        default=None,
        description="FailurePolicy decides whether to continue if one container fails to recreate",
    )
    ordered_recreate: Bool | None = Field(
        default=None,
        description=(
            "OrderedRecreate indicates whether to recreate the next container only if the previous "
            "one has recreated completely."
        ),
    )
    force_recreate: Bool | None = Field(
        default=None,
        description=(
            "ForceRecreate indicates whether to force kill the container even if the previous "
            "container is starting."
        ),
    )
    termination_grace_period_seconds: Int64 | None = Field(
        default=None,
        description=(
            "TerminationGracePeriodSeconds is the optional duration in seconds to wait the container "
            "terminating gracefully. "
            "Value must be non-negative integer. The value zero indicates delete immediately. "
            "If this value is nil, we will use pod.Spec.TerminationGracePeriodSeconds as default value."
        ),
    )
    unready_grace_period_seconds: Int64 | None = Field(
        default=None,
        description=(
            "UnreadyGracePeriodSeconds is the optional duration in seconds to mark Pod as not ready "
            "over this duration "
            "before executing preStop hook and stopping the container."
        ),
    )
    min_started_seconds: Int32 | None = Field(
        default=None,
        description=(
            "Minimum number of seconds for which a newly created container should be started and "
            "ready "
            "without any of its container crashing, for it to be considered Succeeded. "
            "Defaults to 0 (container will be considered Succeeded as soon as it is started and ready)"
        ),
    )


class ContainerRecreateRequestSpec(KubeModel):
    """ContainerRecreateRequestSpec defines the desired state of ContainerRecreateRequest"""

    pod_name: str = Field(description="PodName is name of the Pod that owns the recreated containers.")
    containers: list[ContainerRecreateRequestContainer] = Field(
        description="Containers contains the containers that need to recreate in the Pod."
    )
    strategy: ContainerRecreateRequestStrategy | None = Field(
        default=None, description="Strategy defines strategies for containers recreation."
    )
    active_deadline_seconds: Int64 | None = Field(
        default=None,
        description=("ActiveDeadlineSeconds is the deadline duration of this ContainerRecreateRequest."),
    )
    ttl_seconds_after_finished: Int32 | None = Field(
        default=None,
        alias="ttlSecondsAfterFinished",
        description=(
            "TTLSecondsAfterFinished is the TTL duration after this ContainerRecreateRequest has completed."
        ),
    )


class ContainerRecreateRequestContainerRecreateState(KubeModel):
    """ContainerRecreateRequestContainerRecreateState contains the recreation state of the container."""

    name: str = Field(description="Name of the container.")
    phase: str = Field(description="Phase indicates the recreation phase of the container.")
    message: str | None = Field(
        default=None, description=("A human readable message indicating details about this state.")
    )
    is_killed: Bool | None = Field(default=None, description="Containers are killed by kruise daemon")


class ContainerRecreateRequestStatus(KubeModel):
    """ContainerRecreateRequestStatus defines the observed state of ContainerRecreateRequest"""

    phase: Annotated[str, SchemaRequired()] = Field(
        default="",
        description="Phase of this ContainerRecreateRequest, e.g. Pending, Recreating, Completed",
    )
    completion_time: Time | None = Field(
        default=None, description="Represents time when the ContainerRecreateRequest was completed."
    )
    message: str | None = Field(
        default=None,
        description=("A human readable message indicating details about this ContainerRecreateRequest."),
    )
    container_recreate_states: list[ContainerRecreateRequestContainerRecreateState] | None = Field(
        default=None, description="ContainerRecreateStates contains the recreation states of the containers."
    )


class ContainerRecreateRequest(KubeObject):
    """ContainerRecreateRequest is the Schema for the containerrecreaterequests API"""

    API_VERSION: ClassVar[str] = f"{GROUP}/{VERSION}"
    KIND: ClassVar[str] = "ContainerRecreateRequest"

    spec: Annotated[ContainerRecreateRequestSpec, SchemaRequired(False)]
    status: ContainerRecreateRequestStatus | None = None


CONTAINERRECREATEREQUEST_CRD = CRDSpec(
    group=GROUP,
    kind="ContainerRecreateRequest",
    plural="containerrecreaterequests",
    singular="containerrecreaterequest",
    short_names=("crr",),
    scope="Namespaced",
    versions=(
        CRDVersion(
            name=VERSION,
            model=ContainerRecreateRequest,
            served=True,
            storage=True,
            printer_columns=(
                PrinterColumn(
                    name="PHASE",
                    type="string",
                    json_path=".status.phase",
                    description="Phase of this ContainerRecreateRequest.",
                ),
                PrinterColumn(
                    name="POD",
                    type="string",
                    json_path=".spec.podName",
                    description="Pod name of this ContainerRecreateRequest.",
                ),
                PrinterColumn(
                    name="NODE",
                    type="string",
                    json_path=".metadata.labels.crr\\.apps\\.kruise\\.io/node-name",
                    description="Pod name of this ContainerRecreateRequest.",
                ),
                AGE_COLUMN,
            ),
        ),
    ),
)
"""The ContainerRecreateRequest CRD: namespaced, short name ``crr``, a status subresource and
upstream's printer columns (PHASE, POD, NODE, AGE; NODE keeps upstream's copied description)."""


# ---------------------------------------------------------------------------- raw shapes


class CrrStrategyView(TypedDict, total=False):
    """``spec.strategy`` as stored (the webhook always sets ``failurePolicy``)."""

    failurePolicy: str
    orderedRecreate: bool
    forceRecreate: bool
    terminationGracePeriodSeconds: int
    unreadyGracePeriodSeconds: int
    minStartedSeconds: int


class StatusContextView(TypedDict):
    """``spec.containers[].statusContext``: the container as the pod status showed it at creation."""

    containerID: str
    restartCount: int


class CrrContainerView(TypedDict, total=False):
    """``spec.containers[]``: ``preStop`` is a pod ``LifecycleHandler`` subset (exec/httpGet/tcpSocket)."""

    name: str
    preStop: dict[str, object]
    ports: list[dict[str, object]]
    statusContext: StatusContextView


class CrrSpecView(TypedDict, total=False):
    """``spec``."""

    podName: str
    containers: list[CrrContainerView]
    strategy: CrrStrategyView
    activeDeadlineSeconds: int
    ttlSecondsAfterFinished: int


class ContainerRecreateStateView(TypedDict, total=False):
    """``status.containerRecreateStates[]``."""

    name: str
    phase: str
    message: str
    isKilled: bool


class CrrStatusView(TypedDict, total=False):
    """``status``; ``completionTime`` is RFC 3339."""

    phase: str
    completionTime: str
    message: str
    containerRecreateStates: list[ContainerRecreateStateView]


class ContainerRecreateRequestView(TypedDict, total=False):
    """A whole CRR as the informer holds it (``metadata`` stays an open mapping)."""

    apiVersion: str
    kind: str
    metadata: dict[str, object]
    spec: CrrSpecView
    status: CrrStatusView


class SyncContainerStatusView(TypedDict):
    """One entry of :data:`SYNC_CONTAINER_STATUSES_ANNOTATION` (upstream
    ``ContainerRecreateRequestSyncContainerStatus``; ``containerID`` omitted when empty)."""

    name: str
    ready: bool
    restartCount: int
    containerID: str
