"""AnalysisTemplate (namespaced) and ClusterAnalysisTemplate (cluster-scoped).

Mirrors Argo Rollouts' ``AnalysisTemplate``/``ClusterAnalysisTemplate``: a parameterised list
of metrics that a Rollout (or a person) instantiates as an AnalysisRun. ``templates`` composes
other templates, as Argo's "templates in template". Neither kind has a status.
"""

from __future__ import annotations

from typing import Annotated, ClassVar

from pydantic import Field

from kruise.analysis.api.common import GROUP, V1ALPHA1, Argument, DryRun, MeasurementRetention, Metric
from kruise.core.api import Bool, KubeModel, KubeObject, SchemaRequired
from kruise.core.crdgen import CRDSpec, CRDVersion, PrinterColumn

__all__ = [
    "ANALYSISTEMPLATE_CRD",
    "CLUSTERANALYSISTEMPLATE_CRD",
    "AnalysisTemplate",
    "AnalysisTemplateRef",
    "AnalysisTemplateSpec",
    "ClusterAnalysisTemplate",
]


class AnalysisTemplateRef(KubeModel):
    """AnalysisTemplateRef names a template whose metrics and args are merged into this one."""

    template_name: str | None = Field(default=None, description="Name of the referenced template.")
    cluster_scope: Bool | None = Field(
        default=None, description="Whether the reference is to a ClusterAnalysisTemplate."
    )


class AnalysisTemplateSpec(KubeModel):
    """AnalysisTemplateSpec lists the metrics to query and the arguments they take."""

    metrics: list[Metric] | None = Field(
        default=None, description="Metrics contains the list of metrics to query as part of an analysis run."
    )
    args: list[Argument] | None = Field(
        default=None, description="Args are the list of arguments to the template."
    )
    dry_run: list[DryRun] | None = Field(
        default=None,
        description="DryRun object contains the settings for running the analysis in Dry-Run mode.",
    )
    measurement_retention: list[MeasurementRetention] | None = Field(
        default=None,
        description="MeasurementRetention object contains the settings for retaining the number of "
        "measurements during the analysis.",
    )
    templates: list[AnalysisTemplateRef] | None = Field(
        default=None, description="Templates reference to a list of analysis templates to combine."
    )


class AnalysisTemplate(KubeObject):
    """AnalysisTemplate holds the template for performing canary analysis (namespaced)."""

    API_VERSION: ClassVar[str] = f"{GROUP}/{V1ALPHA1}"
    KIND: ClassVar[str] = "AnalysisTemplate"

    spec: Annotated[AnalysisTemplateSpec, SchemaRequired()] = Field(default_factory=AnalysisTemplateSpec)


class ClusterAnalysisTemplate(KubeObject):
    """ClusterAnalysisTemplate holds the template for performing canary analysis (cluster-scoped)."""

    API_VERSION: ClassVar[str] = f"{GROUP}/{V1ALPHA1}"
    KIND: ClassVar[str] = "ClusterAnalysisTemplate"

    spec: Annotated[AnalysisTemplateSpec, SchemaRequired()] = Field(default_factory=AnalysisTemplateSpec)


_AGE = PrinterColumn("AGE", "date", ".metadata.creationTimestamp", "Time since resource was created")

ANALYSISTEMPLATE_CRD = CRDSpec(
    group=GROUP,
    kind="AnalysisTemplate",
    plural="analysistemplates",
    singular="analysistemplate",
    scope="Namespaced",
    versions=(
        CRDVersion(name=V1ALPHA1, model=AnalysisTemplate, status_subresource=False, printer_columns=(_AGE,)),
    ),
)
"""The AnalysisTemplate CRD (namespaced, no status)."""

CLUSTERANALYSISTEMPLATE_CRD = CRDSpec(
    group=GROUP,
    kind="ClusterAnalysisTemplate",
    plural="clusteranalysistemplates",
    singular="clusteranalysistemplate",
    scope="Cluster",
    versions=(
        CRDVersion(
            name=V1ALPHA1, model=ClusterAnalysisTemplate, status_subresource=False, printer_columns=(_AGE,)
        ),
    ),
)
"""The ClusterAnalysisTemplate CRD (cluster-scoped, no status)."""
