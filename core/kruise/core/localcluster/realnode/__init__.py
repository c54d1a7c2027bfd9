"""Real nodes of the local cluster: a kubelet and its own containerd beside the KWOK nodes.

``kruise cluster up --real-nodes N`` (and :meth:`LocalCluster.add_real_nodes`) runs them
so that what KWOK only imitates (container restarts, image pulls, probes, readiness) is
done by a real kubelet on real containers. Pods reach a real node with
:func:`~kruise.core.localcluster.realnode.plan.pod_placement` (node selector
``type=real`` and a toleration of the ``kruise.io/real-node`` taint) and use the images
of :mod:`~kruise.core.localcluster.realnode.images` (``kruise.local/busybox:v1`` ...),
served by the cluster's own registry on loopback.
"""

from kruise.core.localcluster.realnode.images import BUSYBOX_TAGS, PAUSE_IMAGE, busybox
from kruise.core.localcluster.realnode.plan import NODE_SELECTOR, TAINT, TOLERATION, pod_placement

__all__ = ["BUSYBOX_TAGS", "NODE_SELECTOR", "PAUSE_IMAGE", "TAINT", "TOLERATION", "busybox", "pod_placement"]
