"""The Kubernetes I/O port (``Resource`` descriptors, ``KubeClient``) and its adapter.

Objects cross this boundary as plain JSON dicts; models are built from and
dumped to them by the callers. See docs/design.md for why the adapter talks to
the API with aiohttp directly instead of through generated client models.
"""

from kruise.core.kube.client import KubeClient, WatchEvent
from kruise.core.kube.config import KubeConfig, load_kube_config
from kruise.core.kube.resources import Resource

__all__ = ["KubeClient", "KubeConfig", "Resource", "WatchEvent", "load_kube_config"]
