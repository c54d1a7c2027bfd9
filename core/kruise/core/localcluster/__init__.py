"""A real local Kubernetes control plane (etcd, kube-apiserver,
kube-controller-manager, kube-scheduler and KWOK) on loopback.

Used by ``kruise cluster up|down|env``, by the pytest session fixture and as
the embedded default of ``kruise demo``. Binaries come from ``hack/build-tools.sh``.
"""

from kruise.core.localcluster.cluster import ClusterState, LocalCluster, default_cluster_dir

__all__ = ["ClusterState", "LocalCluster", "default_cluster_dir"]
