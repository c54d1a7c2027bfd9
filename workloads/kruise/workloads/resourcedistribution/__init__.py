"""ResourceDistribution: copy one Secret or ConfigMap into a set of namespaces (OpenKruise's
``resourcedistribution-controller`` and ``vresourcedistribution.kb.io``, v1.8)."""
