"""``meta/v1`` models shared by every kind: ObjectMeta, OwnerReference, LabelSelector (and
``core/v1`` ObjectReference).

These are subsets of ``k8s.io/apimachinery/pkg/apis/meta/v1`` with the fields controllers read
and write. Unknown metadata (``managedFields`` entries, ``selfLink``, future fields) is kept by
``KubeModel``'s ``extra="allow"``, so objects survive a read-modify-write unchanged.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import ConfigDict, Field

from kruise.core.api.base import Bool, Int64, KubeModel, SchemaExtra, SchemaOverride, Time

__all__ = [
    "API_VERSION_DESCRIPTION",
    "KIND_DESCRIPTION",
    "KubeObject",
    "LabelSelector",
    "LabelSelectorRequirement",
    "ObjectMeta",
    "ObjectReference",
    "OwnerReference",
]

API_VERSION_DESCRIPTION = (
    "APIVersion defines the versioned schema of this representation of an object. Servers "
    "should convert recognized schemas to the latest internal value, and may reject "
    "unrecognized values. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"
)
KIND_DESCRIPTION = (
    "Kind is a string value representing the REST resource this object represents. Servers "
    "may infer this from the endpoint the client submits requests to. Cannot be updated. In "
    "CamelCase. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"
)


class ObjectReference(KubeModel):
    """ObjectReference contains enough information to let you inspect or modify the referred object."""

    api_version: str | None = Field(default=None, description="API version of the referent.")
    field_path: str | None = Field(default=None, description="If referring to a piece of an object.")
    kind: str | None = Field(default=None, description="Kind of the referent.")
    name: str | None = Field(default=None, description="Name of the referent.")
    namespace: str | None = Field(default=None, description="Namespace of the referent.")
    resource_version: str | None = Field(default=None, description="Specific resourceVersion referred to.")
    uid: str | None = Field(default=None, description="UID of the referent.")


class OwnerReference(KubeModel):
    """OwnerReference contains enough information to let you identify an owning object.

    Mirrors ``metav1.OwnerReference``; ``controller: true`` marks the managing controller.
    """

    api_version: str = Field(description="API version of the referent.")
    kind: str = Field(description="Kind of the referent.")
    name: str = Field(description="Name of the referent.")
    uid: str = Field(description="UID of the referent.")
    controller: Bool | None = Field(
        default=None, description="If true, this reference points to the managing controller."
    )
    block_owner_deletion: Bool | None = Field(
        default=None,
        description="If true, AND if the owner has the foregroundDeletion finalizer, then the owner "
        "cannot be deleted from the key-value store until this reference is removed.",
    )


class ObjectMeta(KubeModel):
    """ObjectMeta is metadata that all persisted resources must have.

    Subset of ``metav1.ObjectMeta``: the identity, labels/annotations, ownership, finalizers and
    bookkeeping fields a controller uses. Other fields (``managedFields``...) round-trip as extras.
    """

    name: str | None = Field(default=None, description="Name must be unique within a namespace.")
    generate_name: str | None = Field(
        default=None, description="GenerateName is an optional prefix used by the server to generate a name."
    )
    namespace: str | None = Field(
        default=None, description="Namespace defines the space within which each name must be unique."
    )
    uid: str | None = Field(
        default=None, description="UID is the unique in time and space value for this object."
    )
    resource_version: str | None = Field(
        default=None, description="An opaque value that represents the internal version of this object."
    )
    generation: Int64 | None = Field(
        default=None, description="A sequence number representing a specific generation of the desired state."
    )
    creation_timestamp: Time | None = Field(
        default=None,
        description="CreationTimestamp is a timestamp representing the server time when this object was "
        "created.",
    )
    deletion_timestamp: Time | None = Field(
        default=None,
        description="DeletionTimestamp is RFC 3339 date and time at which this resource will be deleted.",
    )
    deletion_grace_period_seconds: Int64 | None = Field(
        default=None, description="Number of seconds allowed for this object to gracefully terminate."
    )
    labels: dict[str, str] | None = Field(
        default=None, description="Map of string keys and values used to select objects."
    )
    annotations: dict[str, str] | None = Field(
        default=None, description="Unstructured key value map stored with a resource."
    )
    owner_references: list[OwnerReference] | None = Field(
        default=None, description="List of objects depended by this object."
    )
    finalizers: list[str] | None = Field(
        default=None, description="Must be empty before the object is deleted from the registry."
    )
    managed_fields: list[dict[str, Any]] | None = Field(
        default=None,
        description="ManagedFields maps workflow-id and version to the set of fields that are managed.",
    )


class LabelSelectorRequirement(KubeModel):
    """A label selector requirement is a selector that contains values, a key, and an operator that
    relates the key and values.

    Mirrors ``metav1.LabelSelectorRequirement``; the operator is checked by webhooks, not the CRD.
    """

    key: str = Field(description="key is the label key that the selector applies to.")
    operator: str = Field(
        description="operator represents a key's relationship to a set of values. Valid operators "
        "are In, NotIn, Exists and DoesNotExist."
    )
    values: Annotated[list[str], SchemaExtra({"x-kubernetes-list-type": "atomic"})] | None = Field(
        default=None,
        description="values is an array of string values. If the operator is In or NotIn, the values "
        "array must be non-empty. If the operator is Exists or DoesNotExist, the values array must be "
        "empty. This array is replaced during a strategic merge patch.",
    )


class LabelSelector(KubeModel):
    """A label selector is a label query over a set of resources. The result of matchLabels and
    matchExpressions are ANDed. An empty label selector matches all objects. A null label selector
    matches no objects.

    Mirrors ``metav1.LabelSelector`` (a ``structType=atomic`` map in the CRD schema).
    """

    model_config = ConfigDict(json_schema_extra={"x-kubernetes-map-type": "atomic"})

    match_expressions: (
        Annotated[list[LabelSelectorRequirement], SchemaExtra({"x-kubernetes-list-type": "atomic"})] | None
    ) = Field(
        default=None,
        description="matchExpressions is a list of label selector requirements. The requirements are ANDed.",
    )
    match_labels: dict[str, str] | None = Field(
        default=None,
        description="matchLabels is a map of {key,value} pairs. A single {key,value} in the matchLabels map "
        'is equivalent to an element of matchExpressions, whose key field is "key", the operator is "In", '
        'and the values array contains only "value". The requirements are ANDed.',
    )


class KubeObject(KubeModel):
    """Base of a top-level kind: ``apiVersion``, ``kind`` and ``metadata``.

    Subclasses set ``API_VERSION`` and ``KIND``; an object built or parsed without them gets
    these values, so ``to_dict()`` always yields a complete manifest. In the CRD schema
    ``metadata`` is a bare ``{type: object}`` as the API server requires.
    """

    API_VERSION: ClassVar[str] = ""
    KIND: ClassVar[str] = ""

    api_version: str = Field(default="", description=API_VERSION_DESCRIPTION)
    kind: str = Field(default="", description=KIND_DESCRIPTION)
    metadata: Annotated[ObjectMeta, SchemaOverride({"type": "object"})] = Field(default_factory=ObjectMeta)

    def model_post_init(self, context: Any, /) -> None:
        """Fill ``apiVersion``/``kind`` from the class constants when the input omitted them."""
        if not self.api_version and self.API_VERSION:
            self.api_version = self.API_VERSION
        if not self.kind and self.KIND:
            self.kind = self.KIND
