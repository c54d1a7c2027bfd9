"""API model kernel: the pydantic base, scalar types and the ``meta/v1`` models every kind uses.

Kinds live next to their layer (``kruise.workloads.api.cloneset``...); this package holds only
what they share. The CRD generator is :mod:`kruise.core.crdgen`.
"""

from kruise.core.api.base import (
    EMBEDDED_RESOURCE_SCHEMA,
    INT_OR_STRING_SCHEMA,
    PRESERVE_UNKNOWN_OBJECT_SCHEMA,
    SCHEMALESS_SCHEMA,
    Bool,
    EmbeddedResource,
    Int32,
    Int64,
    IntOrPercentError,
    IntOrString,
    KubeModel,
    PreservedObject,
    SchemaExtra,
    Schemaless,
    SchemaModel,
    SchemaOverride,
    SchemaRequired,
    Time,
    format_time,
    int_or_percent_value,
    scaled_value_from_int_or_percent,
)
from kruise.core.api.conditions import Condition, ConditionStatus, WorkloadCondition
from kruise.core.api.meta import (
    API_VERSION_DESCRIPTION,
    KIND_DESCRIPTION,
    KubeObject,
    LabelSelector,
    LabelSelectorRequirement,
    ObjectMeta,
    OwnerReference,
)

__all__ = [
    "API_VERSION_DESCRIPTION",
    "EMBEDDED_RESOURCE_SCHEMA",
    "INT_OR_STRING_SCHEMA",
    "KIND_DESCRIPTION",
    "PRESERVE_UNKNOWN_OBJECT_SCHEMA",
    "SCHEMALESS_SCHEMA",
    "Bool",
    "Condition",
    "ConditionStatus",
    "EmbeddedResource",
    "Int32",
    "Int64",
    "IntOrPercentError",
    "IntOrString",
    "KubeModel",
    "KubeObject",
    "LabelSelector",
    "LabelSelectorRequirement",
    "ObjectMeta",
    "OwnerReference",
    "PreservedObject",
    "SchemaExtra",
    "SchemaModel",
    "SchemaOverride",
    "SchemaRequired",
    "Schemaless",
    "Time",
    "WorkloadCondition",
    "format_time",
    "int_or_percent_value",
    "scaled_value_from_int_or_percent",
]
