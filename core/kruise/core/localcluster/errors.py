"""Errors of the local cluster."""

from __future__ import annotations


class ClusterError(RuntimeError):
    """The local control plane failed to start or is not running."""


class ClusterRunningError(ClusterError):
    """A cluster is already running in the directory asked for; nothing was started or stopped."""


class RealNodeError(ClusterError):
    """A real node (kubelet + containerd) could not start, or its host is not ready for it."""


class RealNodesBusyError(RealNodeError):
    """Another cluster on this machine runs real nodes (only one may: the kubelet changes
    machine-wide settings)."""
