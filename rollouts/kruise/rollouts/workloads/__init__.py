"""The workload port: what a release needs from each workload kind and release style.

The Rollout engine (``kruise.rollouts.rollout``) and the BatchRelease controller
(``kruise.rollouts.batchrelease``) talk to workloads only through this package; each kind is one
module here plus a registry entry.
"""
