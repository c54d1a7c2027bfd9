"""ResourceDistribution (``apps.kruise.io/v1alpha1``, cluster-scoped, ``distributor``): the model
tree and its CRD.

Field names, types and descriptions follow OpenKruise's
``apis/apps/v1alpha1/resourcedistribution_types.go`` (v1.8): ``spec.resource`` is a whole
Secret or ConfigMap kept verbatim (an embedded resource), ``spec.targets`` picks namespaces;
the status counts ``desired``/``succeeded``/``failed`` namespaces and keeps six conditions
(one per failure kind, ``failedNamespace`` listing the namespaces). Printer columns ``TOTAL``,
``SUCCEED``, ``FAILED`` as upstream.

The ``*View`` ``TypedDict``\\ s are the raw (orjson) shape the controller and webhook read.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, TypedDict

from pydantic import Field

from kruise.core.api import (
    EmbeddedResource,
    Int32,
    Int64,
    KubeModel,
    KubeObject,
    LabelSelector,
    SchemaRequired,
    Time,
)
from kruise.core.crdgen import CRDSpec, CRDVersion, PrinterColumn
from kruise.core.kube.resources import Resource

__all__ = [
    "CONDITION_TYPES",
    "RESOURCEDISTRIBUTIONS",
    "RESOURCEDISTRIBUTION_CRD",
    "RESOURCE_FROM_ANNOTATION",
    "RESOURCE_HASH_ANNOTATION",
    "ConditionView",
    "ResourceDistribution",
    "ResourceDistributionView",
    "TargetsView",
]

GROUP = "apps.kruise.io"
VERSION = "v1alpha1"
KIND = "ResourceDistribution"
RESOURCEDISTRIBUTIONS = Resource(GROUP, VERSION, "resourcedistributions", KIND, namespaced=False)

RESOURCE_HASH_ANNOTATION = "kruise.io/resourcedistribution.resource.hashcode"
"""On each copy: SHA-256 (hex) of the RD's ``spec.resource`` JSON."""
RESOURCE_FROM_ANNOTATION = "kruise.io/resourcedistribution.resource.from"
"""On each copy: the name of the ResourceDistribution it came from."""

CONDITION_TYPES = (
    "GetResourceFailed",
    "CreateResourceFailed",
    "UpdateResourceFailed",
    "DeleteResourceFailed",
    "ConflictOccurred",
    "NamespaceNotExists",
)
"""``status.conditions[i].type`` in upstream's fixed order (indices 0..5)."""


class ResourceDistributionNamespace(KubeModel):
    """ResourceDistributionNamespace contains a namespace name"""

    name: str | None = Field(default=None, description="Namespace name")


class ResourceDistributionTargetNamespaces(KubeModel):
    """ResourceDistributionTargetNamespaces contains a list of namespaces"""

    namespaces: list[ResourceDistributionNamespace] | None = Field(default=None, alias="list")


class ResourceDistributionTargets(KubeModel):
    """ResourceDistributionTargets defines the targets of Resource.
    Four options are provided to select target namespaces."""

    all_namespaces: bool | None = Field(
        default=None,
        description="If AllNamespaces is true, Resource will be distributed to the all namespaces (except "
        'some forbidden namespaces, such as "kube-system" and "kube-public").',
    )
    excluded_namespaces: ResourceDistributionTargetNamespaces | None = Field(
        default=None,
        description="If ExcludedNamespaces is not empty, Resource will never be distributed to the listed "
        "namespaces.",
    )
    included_namespaces: ResourceDistributionTargetNamespaces | None = Field(
        default=None,
        description="If IncludedNamespaces is not empty, Resource will be distributed to the listed "
        "namespaces.",
    )
    namespace_label_selector: LabelSelector | None = Field(
        default=None,
        description="If NamespaceLabelSelector is not empty, Resource will be distributed to the matched "
        "namespaces.",
    )


class ResourceDistributionSpec(KubeModel):
    """ResourceDistributionSpec defines the desired state of ResourceDistribution."""

    resource: Annotated[EmbeddedResource, SchemaRequired()] = Field(
        description="Resource must be the complete yaml that users want to distribute."
    )
    targets: Annotated[ResourceDistributionTargets, SchemaRequired()] = Field(
        description="Targets defines the namespaces that users want to distribute to."
    )


class ResourceDistributionCondition(KubeModel):
    """ResourceDistributionCondition allows a row to be marked with additional information."""

    type: Annotated[str, SchemaRequired()] = Field(description="Type of ResourceDistributionCondition.")
    status: Annotated[str, SchemaRequired()] = Field(
        description="Status of the condition, one of True, False, Unknown."
    )
    last_transition_time: Time | None = Field(
        default=None,
        description="LastTransitionTime is the last time the condition transitioned from one status to "
        "another.",
    )
    reason: str | None = Field(
        default=None,
        description="Reason describe human readable message indicating details about last transition.",
    )
    failed_namespaces: list[str] | None = Field(
        default=None,
        alias="failedNamespace",
        description="FailedNamespaces describe all failed namespaces when Status is False",
    )


class ResourceDistributionStatus(KubeModel):
    """ResourceDistributionStatus defines the observed state of ResourceDistribution."""

    desired: Int32 | None = Field(
        default=None, description="Desired represents the number of total target namespaces."
    )
    succeeded: Int32 | None = Field(
        default=None, description="Succeeded represents the number of successful distributions."
    )
    failed: Int32 | None = Field(
        default=None, description="Failed represents the number of failed distributions."
    )
    observed_generation: Int64 | None = Field(
        default=None,
        description="ObservedGeneration represents the .metadata.generation that the condition was set "
        "based upon.",
    )
    conditions: list[ResourceDistributionCondition] | None = Field(
        default=None,
        description="Conditions describe the condition when Resource creating, updating and deleting.",
    )


class ResourceDistribution(KubeObject):
    """ResourceDistribution is the Schema for the resourcedistributions API."""

    API_VERSION: ClassVar[str] = f"{GROUP}/{VERSION}"
    KIND: ClassVar[str] = KIND

    spec: ResourceDistributionSpec | None = Field(
        default=None,
        description="ResourceDistributionSpec defines the desired state of ResourceDistribution.",
    )
    status: ResourceDistributionStatus | None = Field(
        default=None,
        description="ResourceDistributionStatus defines the observed state of ResourceDistribution.",
    )


def _column(name: str, path: str) -> PrinterColumn:
    return PrinterColumn(name=name, type="integer", json_path=path)


RESOURCEDISTRIBUTION_CRD = CRDSpec(
    group=GROUP,
    kind=KIND,
    plural="resourcedistributions",
    singular="resourcedistribution",
    short_names=("distributor",),
    scope="Cluster",
    versions=(
        CRDVersion(
            name=VERSION,
            model=ResourceDistribution,
            printer_columns=(
                _column("TOTAL", ".status.desired"),
                _column("SUCCEED", ".status.succeeded"),
                _column("FAILED", ".status.failed"),
            ),
        ),
    ),
)
"""The ResourceDistribution CRD: cluster-scoped, short name ``distributor``, status subresource."""


# ---------------------------------------------------------------------------- raw shapes


class NamespaceListView(TypedDict, total=False):
    list: list[dict[str, str]]


"""``targets.includedNamespaces`` / ``excludedNamespaces``: ``{"list": [{"name": ...}]}``."""


class TargetsView(TypedDict, total=False):
    """``spec.targets``."""

    allNamespaces: bool
    includedNamespaces: NamespaceListView
    excludedNamespaces: NamespaceListView
    namespaceLabelSelector: dict[str, object]


class SpecView(TypedDict, total=False):
    """``spec``: the embedded Secret/ConfigMap and the targets."""

    resource: dict[str, object]
    targets: TargetsView


class ConditionView(TypedDict, total=False):
    """One ``status.conditions`` entry (``lastTransitionTime`` RFC 3339)."""

    type: str
    status: str
    lastTransitionTime: str
    reason: str
    failedNamespace: list[str]


class StatusView(TypedDict, total=False):
    """``status``."""

    desired: int
    succeeded: int
    failed: int
    observedGeneration: int
    conditions: list[ConditionView]


class ResourceDistributionView(TypedDict, total=False):
    """A ResourceDistribution as the informers hold it."""

    apiVersion: str
    kind: str
    metadata: dict[str, object]
    spec: SpecView
    status: StatusView
