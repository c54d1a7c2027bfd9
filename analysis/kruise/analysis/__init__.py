"""kruise.analysis: AnalysisTemplate/AnalysisRun, metric providers and evaluation.

Modelled on Argo Rollouts' analysis so that an Argo AnalysisTemplate ports by changing only its
``apiVersion`` to ``rollouts.kruise.io/v1alpha1``.

- ``api``: the kinds (AnalysisTemplate, ClusterAnalysisTemplate, AnalysisRun) and their CRDs.
- ``condition`` / ``exprvalues``: the safe evaluator of ``successCondition``/``failureCondition``.
- ``evaluate``: measurement, metric and run outcomes; ``schedule``: when to measure;
  ``rules``: dry-run and retention; ``args``: ``{{args.x}}``; ``decide``: the controller's pure core.
- ``providers``: the MetricProvider port, Prometheus and web.
- ``controller``: the AnalysisRun controller shell and its wiring spec.
- ``templates``: building a run from templates and reading its outcome (for the Rollout gate).
"""
