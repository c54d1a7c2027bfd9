"""Node selection fragments of ``k8s.io/api/core/v1`` that kinds embed typed (not preserved).

UnitedDeployment's ``topology.subsets[].nodeSelectorTerm`` and WorkloadSpread's subsets carry a
``NodeSelectorTerm``; upstream's CRDs type it fully, so unknown fields in it are pruned and a
missing ``key``/``operator`` is refused by the API server. Tolerations are
:class:`kruise.core.api.pod.Toleration`.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import ConfigDict, Field

from kruise.core.api.base import KubeModel, SchemaExtra

__all__ = ["NodeSelectorRequirement", "NodeSelectorTerm"]

_AtomicList = SchemaExtra({"x-kubernetes-list-type": "atomic"})


class NodeSelectorRequirement(KubeModel):
    """A node selector requirement is a selector that contains values, a key, and an operator that
    relates the key and values.

    Mirrors ``corev1.NodeSelectorRequirement``: ``key`` and ``operator`` are required; the
    operator's value (In, NotIn, Exists, DoesNotExist, Gt, Lt) is judged by webhooks.
    """

    key: str = Field(description="The label key that the selector applies to.")
    operator: str = Field(
        description="Represents a key's relationship to a set of values. Valid operators are In, NotIn, "
        "Exists, DoesNotExist. Gt, and Lt."
    )
    values: Annotated[list[str], _AtomicList] | None = Field(
        default=None,
        description="An array of string values. If the operator is In or NotIn, the values array must be "
        "non-empty. If the operator is Exists or DoesNotExist, the values array must be empty. If the "
        "operator is Gt or Lt, the values array must have a single element, which will be interpreted as "
        "an integer. This array is replaced during a strategic merge patch.",
    )


class NodeSelectorTerm(KubeModel):
    """A null or empty node selector term matches no objects. The requirements of them are ANDed.

    Mirrors ``corev1.NodeSelectorTerm`` (a ``structType=atomic`` map in the CRD schema).
    """

    model_config = ConfigDict(json_schema_extra={"x-kubernetes-map-type": "atomic"})

    match_expressions: Annotated[list[NodeSelectorRequirement], _AtomicList] | None = Field(
        default=None, description="A list of node selector requirements by node's labels."
    )
    match_fields: Annotated[list[NodeSelectorRequirement], _AtomicList] | None = Field(
        default=None, description="A list of node selector requirements by node's fields."
    )
