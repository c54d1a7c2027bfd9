"""PersistentPodState (``apps.kruise.io/v1alpha1``, namespaced): the model tree and its CRD.

Field names, types and descriptions follow OpenKruise's
``apis/apps/v1alpha1/persistent_pod_state_types.go`` (v1.8): ``spec.targetRef`` names a
StatefulSet (``apps/v1``) or an Advanced StatefulSet (``apps.kruise.io``), the required and
preferred topologies list node label keys to persist, ``persistentPodAnnotations`` pod
annotation keys; ``status.podStates`` maps a pod name to where it last ran. No printer columns,
no short name, status subresource (as upstream's v1alpha1).

The ``*View`` ``TypedDict``\\ s are the raw (orjson) shape the controller and webhooks read.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, TypedDict

from pydantic import Field

from kruise.core.api import Int32, Int64, KubeModel, KubeObject, SchemaRequired
from kruise.core.crdgen import CRDSpec, CRDVersion
from kruise.core.kube.resources import Resource

__all__ = [
    "AUTO_GENERATE_ANNOTATION",
    "INJECTED_ANNOTATION",
    "PERSISTENTPODSTATES",
    "PERSISTENTPODSTATE_CRD",
    "PERSISTENT_ANNOTATIONS_ANNOTATION",
    "PREFERRED_TOPOLOGY_ANNOTATION",
    "REQUIRED_TOPOLOGY_ANNOTATION",
    "WHEN_DELETED",
    "WHEN_SCALED",
    "PersistentPodState",
    "PersistentPodStateView",
    "PodStateView",
    "PpsSpecView",
    "PpsTargetView",
]

GROUP = "apps.kruise.io"
VERSION = "v1alpha1"
KIND = "PersistentPodState"
PERSISTENTPODSTATES = Resource(GROUP, VERSION, "persistentpodstates", KIND, namespaced=True)

AUTO_GENERATE_ANNOTATION = "kruise.io/auto-generate-persistent-pod-state"
"""StatefulSet annotation: ``"true"`` makes the controller keep a PersistentPodState named after
it (with one of the two topology annotations below; otherwise nothing is generated)."""
REQUIRED_TOPOLOGY_ANNOTATION = "kruise.io/required-persistent-topology"
"""StatefulSet annotation: comma-separated node label keys -> ``requiredPersistentTopology``."""
PREFERRED_TOPOLOGY_ANNOTATION = "kruise.io/preferred-persistent-topology"
"""StatefulSet annotation: comma-separated node label keys -> one preferred term of weight 100."""
PERSISTENT_ANNOTATIONS_ANNOTATION = "kruise.io/persistent-pod-annotations"
"""StatefulSet annotation: comma-separated pod annotation keys -> ``persistentPodAnnotations``."""
INJECTED_ANNOTATION = "kruise.io/injected-persistent-pod-state"
"""Pod annotation set by the pod webhook: the name of the PersistentPodState whose state it got."""

WHEN_SCALED = "WhenScaled"
"""Retention policy (the default, also when unset): a pod's state goes when the workload is
scaled in below its ordinal and the pod is gone."""
WHEN_DELETED = "WhenDeleted"
"""Retention policy: states are kept until the workload is deleted."""


class PpsTargetReference(KubeModel):
    """TargetReference contains enough information to let you identify an workload for PersistentPodState"""

    api_version: Annotated[str, SchemaRequired()] = Field(description="API version of the referent.")
    kind: Annotated[str, SchemaRequired()] = Field(description="Kind of the referent.")
    name: Annotated[str, SchemaRequired()] = Field(description="Name of the referent.")


class PersistentPodAnnotation(KubeModel):
    """One pod annotation key to persist."""

    key: Annotated[str, SchemaRequired()]


class NodeTopologyTerm(KubeModel):
    """Node label keys whose values the pod's state records."""

    node_topology_keys: Annotated[list[str], SchemaRequired()] = Field(
        description="A list of node selector requirements by node's labels."
    )


class PreferredTopologyTerm(KubeModel):
    """A preferred topology with its scheduling weight."""

    weight: Annotated[Int32, SchemaRequired()]
    preference: Annotated[NodeTopologyTerm, SchemaRequired()]


class PersistentPodStateSpec(KubeModel):
    """PersistentPodStateSpec defines the desired state of PersistentPodState"""

    target_ref: Annotated[PpsTargetReference, SchemaRequired()] = Field(
        alias="targetRef",
        description="TargetReference contains enough information to let you identify an workload for "
        "PersistentPodState Selector and TargetReference are mutually exclusive, TargetReference is "
        "priority to take effect current only support StatefulSet",
    )
    persistent_pod_annotations: list[PersistentPodAnnotation] | None = Field(
        default=None,
        description="Persist the annotations information of the pods that need to be saved",
    )
    required_persistent_topology: NodeTopologyTerm | None = Field(
        default=None,
        description="Pod rebuilt topology required for node labels for example kubernetes.io/hostname, "
        "failure-domain.beta.kubernetes.io/zone",
    )
    preferred_persistent_topology: list[PreferredTopologyTerm] | None = Field(
        default=None,
        description="Pod rebuilt topology preferred for node labels, with xx weight for example  "
        "kubernetes.io/hostname, failure-domain.beta.kubernetes.io/zone",
    )
    persistent_pod_state_retention_policy: str | None = Field(
        default=None,
        description="PersistentPodStateRetentionPolicy describes the policy used for PodState. The default "
        "policy of 'WhenScaled' causes when scale down statefulSet, deleting it.",
    )


class PodState(KubeModel):
    """Where a pod last ran, and the annotations kept from it."""

    node_name: str | None = Field(default=None, description="pod.spec.nodeName")
    node_topology_labels: dict[str, str] | None = Field(
        default=None, description="node topology labels key=value for example kubernetes.io/hostname=node-1"
    )
    annotations: dict[str, str] | None = Field(default=None, description="pod persistent annotations")


class PersistentPodStateStatus(KubeModel):
    """The recorded pod states."""

    observed_generation: Annotated[Int64, SchemaRequired()] = Field(
        description="observedGeneration is the most recent generation observed for this PersistentPodState. "
        "It corresponds to the PersistentPodState's generation, which is updated on mutation by the API "
        "Server."
    )
    pod_states: dict[str, PodState] | None = Field(
        default=None,
        description="When the pod is ready, record some status information of the pod, such as: labels, "
        "annotations, topologies, etc. map[string]PodState -> map[Pod.Name]PodState",
    )


class PersistentPodState(KubeObject):
    """PersistentPodState is the Schema for the PersistentPodState API"""

    API_VERSION: ClassVar[str] = f"{GROUP}/{VERSION}"
    KIND: ClassVar[str] = KIND

    spec: PersistentPodStateSpec | None = Field(
        default=None, description="PersistentPodStateSpec defines the desired state of PersistentPodState"
    )
    status: PersistentPodStateStatus | None = None


PERSISTENTPODSTATE_CRD = CRDSpec(
    group=GROUP,
    kind=KIND,
    plural="persistentpodstates",
    singular="persistentpodstate",
    scope="Namespaced",
    versions=(CRDVersion(name=VERSION, model=PersistentPodState),),
)
"""The PersistentPodState CRD: namespaced, status subresource."""


# ---------------------------------------------------------------------------- raw shapes


class PpsTargetView(TypedDict, total=False):
    """``spec.targetRef``."""

    apiVersion: str
    kind: str
    name: str


class TopologyTermView(TypedDict, total=False):
    """``requiredPersistentTopology`` / ``preference``."""

    nodeTopologyKeys: list[str]


class PreferredTermView(TypedDict, total=False):
    """One ``preferredPersistentTopology`` entry."""

    weight: int
    preference: TopologyTermView


class PpsSpecView(TypedDict, total=False):
    """``spec``."""

    targetRef: PpsTargetView
    persistentPodAnnotations: list[dict[str, str]]
    requiredPersistentTopology: TopologyTermView
    preferredPersistentTopology: list[PreferredTermView]
    persistentPodStateRetentionPolicy: str


class PodStateView(TypedDict, total=False):
    """One ``status.podStates`` value."""

    nodeName: str
    nodeTopologyLabels: dict[str, str]
    annotations: dict[str, str]


class PpsStatusView(TypedDict, total=False):
    """``status``."""

    observedGeneration: int
    podStates: dict[str, PodStateView]


class PersistentPodStateView(TypedDict, total=False):
    """A PersistentPodState as the informers hold it."""

    apiVersion: str
    kind: str
    metadata: dict[str, object]
    spec: PpsSpecView
    status: PpsStatusView
