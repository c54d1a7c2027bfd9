"""PodProbeMarker (namespaced) and NodePodProbe (cluster-scoped), ``apps.kruise.io/v1alpha1``.

Field names, required lists and descriptions follow OpenKruise's ``pod_probe_marker_types.go`` and
``node_pod_probe_types.go`` (v1.8.4); neither CRD has printer columns or short names upstream.

- A PodProbeMarker names pods (``selector``) and custom probes of one of their containers
  (``probes[{name, containerName, probe, podConditionType, markerPolicy}]``).
- The manager folds every marker into one NodePodProbe per node (named after the node):
  ``spec.podProbes[{name, namespace, uid, IP, probes[{name: <marker>#<probe>, containerName,
  probe}]}]``; the node's kruise-daemon runs them and writes
  ``status.podProbeStatuses[{name, namespace, uid, probeStates[{name, state, lastProbeTime,
  lastTransitionTime, message}]}]``; the manager then sets the pod condition
  ``podConditionType`` and the labels/annotations of the matching ``markerPolicy``.
- The ``*View`` ``TypedDict``\\ s are the raw shape the controllers read.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, TypedDict

from pydantic import Field

from kruise.core.api import Int64, KubeModel, KubeObject, LabelSelector, SchemaRequired, Time
from kruise.core.api.pod import Probe
from kruise.core.crdgen import CRDSpec, CRDVersion
from kruise.core.kube.resources import Resource

__all__ = [
    "NODEPODPROBES",
    "NODEPODPROBE_CRD",
    "PODPROBEMARKERS",
    "PODPROBEMARKER_ANNOTATION",
    "PODPROBEMARKER_CRD",
    "PODPROBEMARKER_FINALIZER",
    "PODPROBEMARKER_LIST_ANNOTATION",
    "PROBE_FAILED",
    "PROBE_SUCCEEDED",
    "PROBE_UNKNOWN",
    "ContainerProbe",
    "ContainerProbeState",
    "ContainerProbeStateView",
    "ContainerProbeView",
    "NodePodProbe",
    "NodePodProbeView",
    "PodContainerProbe",
    "PodProbe",
    "PodProbeMarker",
    "PodProbeMarkerView",
    "PodProbeStatus",
    "PodProbeStatusView",
    "PodProbeView",
    "ProbeMarkerPolicy",
]

GROUP = "apps.kruise.io"
VERSION = "v1alpha1"
PODPROBEMARKERS = Resource(GROUP, VERSION, "podprobemarkers", "PodProbeMarker")
NODEPODPROBES = Resource(GROUP, VERSION, "nodepodprobes", "NodePodProbe", namespaced=False)

PODPROBEMARKER_FINALIZER = "kruise.io/node-pod-probe-cleanup"
"""Finalizer the manager puts on every PodProbeMarker; removed once its probes left the NodePodProbes."""
PODPROBEMARKER_ANNOTATION = "kruise.io/podprobe"
"""Pod annotation (serverless pods, upstream's pod webhook): the JSON list of the pod's probes."""
PODPROBEMARKER_LIST_ANNOTATION = "kruise.io/podprobemarker-list"
"""Pod annotation (serverless pods): the comma-separated names of the injected markers."""

PROBE_SUCCEEDED = "Succeeded"
PROBE_FAILED = "Failed"
PROBE_UNKNOWN = "Unknown"


class ProbeMarkerPolicy(KubeModel):
    """ProbeMarkerPolicy: what to patch on the pod in one probe state."""

    state: str = Field(
        description="probe status, True or False For example: State=Succeeded, "
        "annotations[controller.kubernetes.io/pod-deletion-cost] = '10'. State=Failed, "
        "annotations[controller.kubernetes.io/pod-deletion-cost] = '-10'. In addition, if State=Failed is "
        "not defined, Exec execution fails, and the annotations[controller.kubernetes.io/pod-deletion-cost] "
        "will be Deleted"
    )
    labels: dict[str, str] | None = Field(default=None, description="Patch Labels pod.labels")
    annotations: dict[str, str] | None = Field(default=None, description="Patch annotations pod.annotations")


class PodContainerProbe(KubeModel):
    """PodContainerProbe: one custom probe of a container of the selected pods."""

    name: str = Field(
        description="probe name, unique within the Pod(Even between different containers, they cannot be "
        "the same)"
    )
    container_name: str = Field(description="container name")
    probe: Probe = Field(description="container probe spec")
    marker_policy: list[ProbeMarkerPolicy] | None = Field(
        default=None,
        description="According to the execution result of ContainerProbe, perform specific actions, such as: "
        "patch Pod labels, annotations, ReadinessGate Condition It cannot be null at the same time as "
        "PodConditionType.",
    )
    pod_condition_type: str | None = Field(
        default=None,
        description="If it is not empty, the Probe execution result will be recorded on the Pod condition. "
        "It cannot be null at the same time as MarkerPolicy. For example "
        "PodConditionType=game.kruise.io/healthy, pod.status.condition.type = game.kruise.io/healthy. When "
        "probe is Succeeded, pod.status.condition.status = True. Otherwise, when the probe fails to execute, "
        "pod.status.condition.status = False.",
    )


class PodProbeMarkerSpec(KubeModel):
    """PodProbeMarkerSpec defines the desired state of PodProbeMarker"""

    selector: LabelSelector = Field(
        description="Selector is a label query over pods that should exec custom probe It must match the pod "
        "template's labels. More info: "
        "https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors"
    )
    probes: list[PodContainerProbe] = Field(
        description="Custom container probe, current only support Exec(). Probe Result will record in "
        "Pod.Status.Conditions, and condition.type=probe.name. condition.status=True indicates probe success "
        "condition.status=False indicates probe fails"
    )


class PodProbeMarkerStatus(KubeModel):
    """PodProbeMarkerStatus: what the manager last saw."""

    observed_generation: Annotated[Int64, SchemaRequired()] = Field(
        default=0,
        description="observedGeneration is the most recent generation observed for this PodProbeMarker. It "
        "corresponds to the PodProbeMarker's generation, which is updated on mutation by the API Server.",
    )
    matched_pods: Int64 | None = Field(default=None, description="matched Pods")


class PodProbeMarker(KubeObject):
    """PodProbeMarker is the Schema for the PodProbeMarker API"""

    API_VERSION: ClassVar[str] = f"{GROUP}/{VERSION}"
    KIND: ClassVar[str] = "PodProbeMarker"

    spec: Annotated[PodProbeMarkerSpec, SchemaRequired(False)] = Field(
        description="PodProbeMarkerSpec defines the desired state of PodProbeMarker"
    )
    status: PodProbeMarkerStatus | None = None


class ContainerProbe(KubeModel):
    """ContainerProbe: one probe of one container, as the node's daemon runs it."""

    name: str = Field(description="Name is podProbeMarker.Name#probe.Name")
    container_name: str = Field(description="container name")
    probe: Probe = Field(description="container probe spec")


class PodProbe(KubeModel):
    """PodProbe: the probes of one pod of the node."""

    name: str = Field(description="pod name")
    namespace: str = Field(description="pod namespace")
    uid: str = Field(description="pod uid")
    ip: str = Field(alias="IP", description="pod ip")
    probes: list[ContainerProbe] | None = Field(
        default=None,
        description="Custom container probe, supports Exec, Tcp, and returns the result to Pod yaml",
    )


class NodePodProbeSpec(KubeModel):
    """NodePodProbeSpec defines the desired state of NodePodProbe"""

    pod_probes: list[PodProbe] | None = None


class ContainerProbeState(KubeModel):
    """ContainerProbeState: the last result of one probe."""

    name: str = Field(description="Name is podProbeMarker.Name#probe.Name")
    state: str = Field(description="container probe exec state, True or False")
    last_probe_time: Time | None = Field(default=None, description="Last time we probed the condition.")
    last_transition_time: Time | None = Field(
        default=None, description="Last time the condition transitioned from one status to another."
    )
    message: str | None = Field(
        default=None,
        description="If Status=True, Message records the return result of Probe. If Status=False, Message "
        "records Probe's error message",
    )


class PodProbeStatus(KubeModel):
    """PodProbeStatus: the results of one pod's probes."""

    name: str = Field(description="pod name")
    namespace: str = Field(description="pod namespace")
    uid: str = Field(description="pod uid")
    probe_states: list[ContainerProbeState] | None = Field(default=None, description="pod probe result")


class NodePodProbeStatus(KubeModel):
    """NodePodProbeStatus: the daemon's results."""

    pod_probe_statuses: list[PodProbeStatus] | None = Field(default=None, description="pod probe results")


class NodePodProbe(KubeObject):
    """NodePodProbe is the Schema for the NodePodProbe API"""

    API_VERSION: ClassVar[str] = f"{GROUP}/{VERSION}"
    KIND: ClassVar[str] = "NodePodProbe"

    spec: NodePodProbeSpec | None = Field(
        default=None, description="NodePodProbeSpec defines the desired state of NodePodProbe"
    )
    status: NodePodProbeStatus | None = None


PODPROBEMARKER_CRD = CRDSpec(
    group=GROUP,
    kind="PodProbeMarker",
    plural="podprobemarkers",
    singular="podprobemarker",
    scope="Namespaced",
    versions=(CRDVersion(name=VERSION, model=PodProbeMarker, served=True, storage=True),),
)
"""The PodProbeMarker CRD: namespaced, a status subresource, no printer columns (as upstream)."""

NODEPODPROBE_CRD = CRDSpec(
    group=GROUP,
    kind="NodePodProbe",
    plural="nodepodprobes",
    singular="nodepodprobe",
    scope="Cluster",
    versions=(CRDVersion(name=VERSION, model=NodePodProbe, served=True, storage=True),),
)
"""The NodePodProbe CRD: cluster-scoped, a status subresource, no printer columns (as upstream)."""


# ---------------------------------------------------------------------------- raw shapes


class ContainerProbeView(TypedDict, total=False):
    """``spec.podProbes[].probes[]``; ``probe`` is a core ``Probe``."""

    name: str
    containerName: str
    probe: dict[str, object]


class PodProbeView(TypedDict, total=False):
    """``spec.podProbes[]``."""

    name: str
    namespace: str
    uid: str
    IP: str
    probes: list[ContainerProbeView]


class ContainerProbeStateView(TypedDict, total=False):
    """``status.podProbeStatuses[].probeStates[]`` (times RFC 3339)."""

    name: str
    state: str
    lastProbeTime: str
    lastTransitionTime: str
    message: str


class PodProbeStatusView(TypedDict, total=False):
    """``status.podProbeStatuses[]``."""

    name: str
    namespace: str
    uid: str
    probeStates: list[ContainerProbeStateView]


class NodePodProbeView(TypedDict, total=False):
    """A whole NodePodProbe as the informer holds it."""

    apiVersion: str
    kind: str
    metadata: dict[str, object]
    spec: dict[str, list[PodProbeView]]
    status: dict[str, list[PodProbeStatusView]]


class PodProbeMarkerView(TypedDict, total=False):
    """A whole PodProbeMarker as the informer holds it (spec kept open: selector, probes)."""

    apiVersion: str
    kind: str
    metadata: dict[str, object]
    spec: dict[str, object]
    status: dict[str, int]
