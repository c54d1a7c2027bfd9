"""kruise.analysis: AnalysisTemplate/AnalysisRun, metric providers and evaluation."""
