"""What every kruise-daemon controller is built from: the API client, the node's CRI and its name.

Upstream's daemon (``K:pkg/daemon/daemon.go``) hands each of its controllers the same
``NewDaemonOptions`` (kube client, CRI runtime, node name, event recorder). :class:`NodeDeps`
is that bundle; each controller adds its own cache view (from the runtime) and knobs.
"""

from __future__ import annotations

from dataclasses import dataclass

from kruise.core.events import EventRecorder
from kruise.core.kube import KubeClient
from kruise.daemon.cri.port import CriRuntime

__all__ = ["NodeDeps"]


@dataclass(frozen=True)
class NodeDeps:
    """The node-wide dependencies of one daemon process (``node_name``'s kruise-daemon)."""

    kube: KubeClient
    cri: CriRuntime
    node_name: str

    def recorder(self, component: str) -> EventRecorder:
        """Events reported as ``kruise-daemon-<component>/<node>`` (upstream's event source)."""
        return EventRecorder(self.kube, f"kruise-daemon-{component}/{self.node_name}")
