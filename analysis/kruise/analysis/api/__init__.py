"""The analysis API (``rollouts.kruise.io/v1alpha1``): AnalysisTemplate, ClusterAnalysisTemplate,
AnalysisRun, modelled on Argo Rollouts' ``argoproj.io/v1alpha1`` kinds of the same names so that
an Argo manifest applies after changing only its ``apiVersion``."""

from kruise.analysis.api.common import (
    GROUP,
    V1ALPHA1,
    AnalysisPhase,
    Argument,
    DryRun,
    FieldRef,
    MeasurementRetention,
    Metric,
    SecretKeyRef,
    ValueFrom,
)
from kruise.analysis.api.providers import (
    Authentication,
    MetricProvider,
    PrometheusMetric,
    WebMetric,
    WebMetricHeader,
)
from kruise.analysis.api.run import (
    ANALYSISRUN_CRD,
    AnalysisRun,
    AnalysisRunSpec,
    AnalysisRunStatus,
    Measurement,
    MetricResult,
    RunSummary,
)
from kruise.analysis.api.template import (
    ANALYSISTEMPLATE_CRD,
    CLUSTERANALYSISTEMPLATE_CRD,
    AnalysisTemplate,
    AnalysisTemplateSpec,
    ClusterAnalysisTemplate,
)

ANALYSIS_CRDS = (ANALYSISTEMPLATE_CRD, CLUSTERANALYSISTEMPLATE_CRD, ANALYSISRUN_CRD)
"""The three analysis CRDs, in install order."""

__all__ = [
    "ANALYSISRUN_CRD",
    "ANALYSISTEMPLATE_CRD",
    "ANALYSIS_CRDS",
    "CLUSTERANALYSISTEMPLATE_CRD",
    "GROUP",
    "V1ALPHA1",
    "AnalysisPhase",
    "AnalysisRun",
    "AnalysisRunSpec",
    "AnalysisRunStatus",
    "AnalysisTemplate",
    "AnalysisTemplateSpec",
    "Argument",
    "Authentication",
    "ClusterAnalysisTemplate",
    "DryRun",
    "FieldRef",
    "Measurement",
    "MeasurementRetention",
    "Metric",
    "MetricProvider",
    "MetricResult",
    "PrometheusMetric",
    "RunSummary",
    "SecretKeyRef",
    "ValueFrom",
    "WebMetric",
    "WebMetricHeader",
]
