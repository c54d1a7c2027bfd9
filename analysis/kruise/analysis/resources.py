"""API resources of the analysis kinds, for :class:`kruise.core.kube.KubeClient` calls."""

from __future__ import annotations

from kruise.analysis.api import GROUP, V1ALPHA1
from kruise.core.kube.resources import Resource

__all__ = ["ANALYSIS_RUNS", "ANALYSIS_TEMPLATES", "CLUSTER_ANALYSIS_TEMPLATES"]

ANALYSIS_RUNS = Resource(GROUP, V1ALPHA1, "analysisruns", "AnalysisRun")
ANALYSIS_TEMPLATES = Resource(GROUP, V1ALPHA1, "analysistemplates", "AnalysisTemplate")
CLUSTER_ANALYSIS_TEMPLATES = Resource(
    GROUP, V1ALPHA1, "clusteranalysistemplates", "ClusterAnalysisTemplate", namespaced=False
)
