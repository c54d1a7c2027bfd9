"""PodUnavailableBudget (``policy.kruise.io/v1alpha1``, ``pub``): the model tree and its CRD.

Field names, types and descriptions follow OpenKruise's
``apis/policy/v1alpha1/podunavailablebudget_types.go`` (v1.8 line). As upstream:

- exactly one of ``selector``/``targetRef`` and one of ``maxUnavailable``/``minAvailable`` is a
  rule of the validating webhook, not of the schema (so the webhook answers with upstream's text);
- the status counters have no ``omitempty`` and are listed as required; the two pod maps are
  ``name -> RFC 3339 time``;
- the printer columns are ``Allowed``, ``Current``, ``Desired`` and ``Total`` (no ``AGE``: the
  explicit kubebuilder columns replace it), short name ``pub``.

The ``*View`` ``TypedDict``\\ s are the raw (orjson) shape the controller and webhooks read.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, TypedDict

from pydantic import Field

from kruise.core.api import (
    Int32,
    Int64,
    IntOrString,
    KubeModel,
    KubeObject,
    LabelSelector,
    SchemaRequired,
    Time,
)
from kruise.core.crdgen import CRDSpec, CRDVersion, PrinterColumn
from kruise.core.kube.resources import Resource

__all__ = [
    "NO_PROTECT_ANNOTATION",
    "PROTECT_OPERATIONS_ANNOTATION",
    "PROTECT_TOTAL_REPLICAS_ANNOTATION",
    "PUBS",
    "PUB_CRD",
    "RELATED_PUB_ANNOTATION",
    "PodUnavailableBudget",
    "PodUnavailableBudgetSpec",
    "PodUnavailableBudgetStatus",
    "PubSpecView",
    "PubStatusView",
    "PubView",
    "TargetReference",
    "TargetReferenceView",
]

GROUP = "policy.kruise.io"
VERSION = "v1alpha1"
PUBS = Resource(GROUP, VERSION, "podunavailablebudgets", "PodUnavailableBudget")

PROTECT_OPERATIONS_ANNOTATION = "kruise.io/pub-protect-operations"
"""PUB annotation: comma-separated operations protected (``DELETE``, ``UPDATE``, ``EVICT``);
absent or empty protects all three."""
PROTECT_TOTAL_REPLICAS_ANNOTATION = "pub.kruise.io/protect-total-replicas"
"""PUB annotation: the expected pod count, instead of the workload's ``spec.replicas``."""
NO_PROTECT_ANNOTATION = "pub.kruise.io/no-protect"
"""Pod annotation: ``"true"`` takes the pod out of every budget (forced deletions)."""
RELATED_PUB_ANNOTATION = "kruise.io/related-pub"
"""Pod annotation: the name of the PUB protecting the pod (written by the PUB controller)."""


class TargetReference(KubeModel):
    """TargetReference contains enough information to let you identify an workload for PodUnavailableBudget"""

    api_version: str | None = Field(default=None, description="API version of the referent.")
    kind: str | None = Field(default=None, description="Kind of the referent.")
    name: str | None = Field(default=None, description="Name of the referent.")


class PodUnavailableBudgetSpec(KubeModel):
    """PodUnavailableBudgetSpec defines the desired state of PodUnavailableBudget"""

    selector: LabelSelector | None = Field(
        default=None, description="Selector label query over pods managed by the budget"
    )
    target_ref: TargetReference | None = Field(
        default=None,
        alias="targetRef",
        description="TargetReference contains enough information to let you identify an workload for "
        "PodUnavailableBudget Selector and TargetReference are mutually exclusive, TargetReference is "
        "priority to take effect",
    )
    max_unavailable: IntOrString | None = Field(
        default=None,
        description="Delete pod, evict pod or update pod specification is allowed if at most "
        '"maxUnavailable" pods selected by "selector" or "targetRef"  are unavailable after the above '
        "operation for pod. "
        "MaxUnavailable and MinAvailable are mutually exclusive, MaxUnavailable is priority to take effect",
    )
    min_available: IntOrString | None = Field(
        default=None,
        description="Delete pod, evict pod or update pod specification is allowed if at least "
        '"minAvailable" pods selected by "selector" or "targetRef" will still be available after the above '
        "operation for pod.",
    )


class PodUnavailableBudgetStatus(KubeModel):
    """PodUnavailableBudgetStatus defines the observed state of PodUnavailableBudget"""

    observed_generation: Int64 | None = Field(
        default=None,
        description="Most recent generation observed when updating this PUB status. UnavailableAllowed and "
        "other status information is valid only if observedGeneration equals to PUB's object generation.",
    )
    disrupted_pods: dict[str, Time] | None = Field(
        default=None,
        description="DisruptedPods contains information about pods whose eviction or deletion was processed "
        "by the API handler but has not yet been observed by the PodUnavailableBudget.",
    )
    unavailable_pods: dict[str, Time] | None = Field(
        default=None,
        description="UnavailablePods contains information about pods whose specification "
        "changed(inplace-update pod), once pod is available(consistent and ready) again, it will be "
        "removed from the list.",
    )
    unavailable_allowed: Annotated[Int32, SchemaRequired()] = Field(
        default=0, description="UnavailableAllowed number of pod unavailable that are currently allowed"
    )
    current_available: Annotated[Int32, SchemaRequired()] = Field(
        default=0, description="CurrentAvailable current number of available pods"
    )
    desired_available: Annotated[Int32, SchemaRequired()] = Field(
        default=0, description="DesiredAvailable minimum desired number of available pods"
    )
    total_replicas: Annotated[Int32, SchemaRequired()] = Field(
        default=0, description="TotalReplicas total number of pods counted by this unavailable budget"
    )


class PodUnavailableBudget(KubeObject):
    """PodUnavailableBudget is the Schema for the podunavailablebudgets API"""

    API_VERSION: ClassVar[str] = f"{GROUP}/{VERSION}"
    KIND: ClassVar[str] = "PodUnavailableBudget"

    spec: PodUnavailableBudgetSpec | None = Field(
        default=None, description="PodUnavailableBudgetSpec defines the desired state of PodUnavailableBudget"
    )
    status: PodUnavailableBudgetStatus | None = Field(
        default=None,
        description="PodUnavailableBudgetStatus defines the observed state of PodUnavailableBudget",
    )


def _column(name: str, path: str, description: str) -> PrinterColumn:
    return PrinterColumn(name=name, type="integer", json_path=path, description=description)


PUB_CRD = CRDSpec(
    group=GROUP,
    kind="PodUnavailableBudget",
    plural="podunavailablebudgets",
    singular="podunavailablebudget",
    short_names=("pub",),
    versions=(
        CRDVersion(
            name=VERSION,
            model=PodUnavailableBudget,
            printer_columns=(
                _column(
                    "Allowed",
                    ".status.unavailableAllowed",
                    "UnavailableAllowed number of pod unavailable that are currently allowed",
                ),
                _column(
                    "Current", ".status.currentAvailable", "CurrentAvailable current number of available pods"
                ),
                _column(
                    "Desired",
                    ".status.desiredAvailable",
                    "DesiredAvailable minimum desired number of available pods",
                ),
                _column(
                    "Total",
                    ".status.totalReplicas",
                    "TotalReplicas total number of pods counted by this budget",
                ),
            ),
        ),
    ),
)
"""The PodUnavailableBudget CRD: namespaced, short name ``pub``, status subresource, upstream's columns."""


# ---------------------------------------------------------------------------- raw shapes


class TargetReferenceView(TypedDict, total=False):
    """``spec.targetRef``."""

    apiVersion: str
    kind: str
    name: str


class PubSpecView(TypedDict, total=False):
    """``spec``; the budgets are an int or a ``"<n>%"`` string, the selector a ``LabelSelector``."""

    selector: dict[str, object]
    targetRef: TargetReferenceView
    maxUnavailable: int | str
    minAvailable: int | str


class PubStatusView(TypedDict, total=False):
    """``status`` (pod maps: name -> RFC 3339 time)."""

    observedGeneration: int
    disruptedPods: dict[str, str]
    unavailablePods: dict[str, str]
    unavailableAllowed: int
    currentAvailable: int
    desiredAvailable: int
    totalReplicas: int


class PubView(TypedDict, total=False):
    """A PodUnavailableBudget as the informers hold it."""

    apiVersion: str
    kind: str
    metadata: dict[str, object]
    spec: PubSpecView
    status: PubStatusView
