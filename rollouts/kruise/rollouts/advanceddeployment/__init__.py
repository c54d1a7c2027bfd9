"""Kruise Rollouts' "advanced deployment" controller: partition-style rolling of native Deployments.

``strategy`` (the annotations), ``replicasets`` and ``rolling`` are pure; ``controller`` is the
I/O shell with its wiring spec (feature gate ``AdvancedDeployment``).
"""
