"""kruise.core: the kernel every other layer builds on.

Models base, the Kubernetes I/O port and its adapter, conditions, events,
expectations, errors, CRD generation and the local control plane harness.
This package imports no other ``kruise.*`` package.
"""
