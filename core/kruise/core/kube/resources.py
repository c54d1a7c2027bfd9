"""Descriptors of the API resources kruise reads and writes.

The rule for where a descriptor lives: a resource read or written by more than one source root
(``workloads``, ``rollouts``, ``daemon``...) is defined here, since ``kruise.core`` is the only
layer they all import; a resource only one root uses stays in that root's ``api`` package
(e.g. ``kruise.daemon.api.nodeimage.NODEIMAGES``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Resource:
    """An API resource: ``group`` ("" for core), ``version``, ``plural``, ``kind``, scope."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool = True

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(
        self, namespace: str | None = None, name: str | None = None, subresource: str | None = None
    ) -> str:
        """URL path, e.g. ``/apis/apps.kruise.io/v1alpha1/namespaces/ns/clonesets/web/status``."""
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{namespace}"
        base += f"/{self.plural}"
        if name:
            base += f"/{name}"
            if subresource:
                base += f"/{subresource}"
        return base


def resource_of_path(path: str) -> tuple[str, ...]:
    """``(resource.group, name)`` of an API path, as kubectl names them (``("pods", "web")`` for
    ``/api/v1/namespaces/shop/pods/web``, ``("rollouts.rollouts.kruise.io",)`` for a list); ``()``
    for a path that is not a resource's."""
    parts = [p for p in path.split("?", 1)[0].split("/") if p]
    if parts[:1] == ["api"] and len(parts) >= 3:
        group, rest = "", parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 4:
        group, rest = parts[1], parts[3:]
    else:
        return ()
    if len(rest) >= 2 and rest[0] == "namespaces" and len(rest) != 2:
        rest = rest[2:]  # /namespaces/<ns>/<resource>...; a bare /namespaces/<name> is a namespace
    if not rest:
        return ()
    resource = f"{rest[0]}.{group}" if group else rest[0]
    return (resource, rest[1]) if len(rest) > 1 else (resource,)


# core and built-in kinds
NAMESPACES = Resource("", "v1", "namespaces", "Namespace", namespaced=False)
NODES = Resource("", "v1", "nodes", "Node", namespaced=False)
PODS = Resource("", "v1", "pods", "Pod")
PVCS = Resource("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim")
SERVICES = Resource("", "v1", "services", "Service")
CONFIGMAPS = Resource("", "v1", "configmaps", "ConfigMap")
SECRETS = Resource("", "v1", "secrets", "Secret")
EVENTS = Resource("", "v1", "events", "Event")
SERVICEACCOUNTS = Resource("", "v1", "serviceaccounts", "ServiceAccount")
DEPLOYMENTS = Resource("apps", "v1", "deployments", "Deployment")
REPLICASETS = Resource("apps", "v1", "replicasets", "ReplicaSet")
NATIVE_STATEFULSETS = Resource("apps", "v1", "statefulsets", "StatefulSet")
PVS = Resource("", "v1", "persistentvolumes", "PersistentVolume", namespaced=False)
STORAGE_CLASSES = Resource("storage.k8s.io", "v1", "storageclasses", "StorageClass", namespaced=False)
NATIVE_DAEMONSETS = Resource("apps", "v1", "daemonsets", "DaemonSet")
CONTROLLER_REVISIONS = Resource("apps", "v1", "controllerrevisions", "ControllerRevision")
LEASES = Resource("coordination.k8s.io", "v1", "leases", "Lease")
CRDS = Resource("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", False)
MUTATING_WEBHOOKS = Resource(
    "admissionregistration.k8s.io",
    "v1",
    "mutatingwebhookconfigurations",
    "MutatingWebhookConfiguration",
    False,
)
VALIDATING_WEBHOOKS = Resource(
    "admissionregistration.k8s.io",
    "v1",
    "validatingwebhookconfigurations",
    "ValidatingWebhookConfiguration",
    False,
)
INGRESSES = Resource("networking.k8s.io", "v1", "ingresses", "Ingress")

# OpenKruise
CLONESETS = Resource("apps.kruise.io", "v1alpha1", "clonesets", "CloneSet")
STATEFULSETS = Resource("apps.kruise.io", "v1beta1", "statefulsets", "StatefulSet")
"""Advanced StatefulSets, read and written at their stored version."""
DAEMONSETS = Resource("apps.kruise.io", "v1alpha1", "daemonsets", "DaemonSet")
"""Advanced DaemonSets (``daemon``/``ads``)."""
BROADCASTJOBS = Resource("apps.kruise.io", "v1alpha1", "broadcastjobs", "BroadcastJob")
"""BroadcastJobs (``bcj``): one pod per eligible node, run to completion."""
ADVANCEDCRONJOBS = Resource("apps.kruise.io", "v1alpha1", "advancedcronjobs", "AdvancedCronJob")
"""AdvancedCronJobs (``acj``): Jobs or BroadcastJobs created on a cron schedule."""
EPHEMERALJOBS = Resource("apps.kruise.io", "v1alpha1", "ephemeraljobs", "EphemeralJob")
"""EphemeralJobs (``ejob``): ephemeral containers injected into the pods a selector picks."""
JOBS = Resource("batch", "v1", "jobs", "Job")
"""batch/v1 Jobs (run by kube-controller-manager's job-controller), made by AdvancedCronJobs."""
IMAGELISTPULLJOBS = Resource("apps.kruise.io", "v1alpha1", "imagelistpulljobs", "ImageListPullJob")
"""ImageListPullJobs (kruise-daemon's kind; the daemon's API module re-exports it), made by
AdvancedCronJobs."""
SIDECARSETS = Resource("apps.kruise.io", "v1alpha1", "sidecarsets", "SidecarSet", namespaced=False)
UNITEDDEPLOYMENTS = Resource("apps.kruise.io", "v1alpha1", "uniteddeployments", "UnitedDeployment")
"""UnitedDeployments (``ud``): one workload per topology subset."""
CONTAINERRECREATEREQUESTS = Resource(
    "apps.kruise.io", "v1alpha1", "containerrecreaterequests", "ContainerRecreateRequest"
)
"""ContainerRecreateRequests (``crr``): restart containers of one pod in place (kruise-daemon)."""
IMAGEPULLJOBS = Resource("apps.kruise.io", "v1alpha1", "imagepulljobs", "ImagePullJob")
"""ImagePullJobs: pull an image on the nodes of selected pods or nodes (kruise-daemon). Defined
here so the workload controllers (image pre-download) and Rollouts can create them; the daemon's
API module re-exports it."""


def object_key(kind: str, namespace: str | None, name: str) -> str:
    """``<Kind>/<namespace>/<name>`` (namespace empty for a cluster-scoped object): one object's
    key, e.g. in :func:`kruise.core.kube.recorded.recorded_writes`."""
    return f"{kind}/{namespace or ''}/{name}"
