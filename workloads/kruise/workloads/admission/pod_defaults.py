"""Kubernetes pod-template defaults as OpenKruise's webhooks inject them.

Mirrors ``apis/apps/defaults/pod.go`` ``SetDefaultPodSpec`` (OpenKruise v1.8), which applies
Kubernetes' ``pkg/apis/core/v1/defaults.go`` functions field by field:

- ``SetDefaults_PodSpec``: ``dnsPolicy: ClusterFirst``, ``restartPolicy: Always``,
  ``securityContext: {}``, ``terminationGracePeriodSeconds: 30``,
  ``schedulerName: default-scheduler``.
- ``SetDefaults_Container`` for init, regular and (only ports/env/resources/probes/lifecycle)
  ephemeral containers: ``terminationMessagePath: /dev/termination-log``,
  ``terminationMessagePolicy: File`` and ``imagePullPolicy`` ``Always`` for a ``:latest`` or
  untagged image, else ``IfNotPresent``. **OpenKruise difference:** regular containers get
  ``imagePullPolicy: Always`` whatever the tag ("for in-place update"); init containers keep
  the Kubernetes rule.
- ports ``protocol: TCP``; ``env[].valueFrom.fieldRef.apiVersion: v1``; resource limits and
  requests rounded up to milli and canonicalised (:mod:`.quantity`); probes
  ``timeoutSeconds 1, periodSeconds 10, successThreshold 1, failureThreshold 3``; probe and
  lifecycle ``httpGet`` ``path: /``, ``scheme: HTTP``.
- volumes (``SetDefaultPodVolumes``): a volume without a source becomes ``emptyDir: {}``;
  ``hostPath.type: ""``; secret/configMap/downwardAPI/projected ``defaultMode: 420`` (0644);
  downward-API ``fieldRef.apiVersion: v1``; projected ``serviceAccountToken.expirationSeconds:
  3600``.
- ``overhead`` is rounded like resources.

Not applied, as upstream at v1.8: hostNetwork ``hostPort`` defaulting (gate
``DefaultHostNetworkHostPortsInPodTemplates``, off) and ``enableServiceLinks`` (pods only).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

from kruise.workloads.admission.quantity import canonical_quantity, default_resource_list

__all__ = [
    "VOLUME_SOURCES",
    "add_marshal_artifacts",
    "claim_marshal_artifacts",
    "default_claim_template",
    "default_container",
    "default_pod_spec",
    "default_pod_template",
    "default_volumes",
    "image_tag",
]

DEFAULT_FILE_MODE = 0o644
VOLUME_SOURCES = (
    "hostPath", "emptyDir", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "secret", "nfs",
    "iscsi", "glusterfs", "persistentVolumeClaim", "rbd", "flexVolume", "cinder", "cephfs", "flocker",
    "downwardAPI", "fc", "azureFile", "configMap", "vsphereVolume", "quobyte", "azureDisk",
    "photonPersistentDisk", "projected", "portworxVolume", "scaleIO", "storageos", "csi", "ephemeral",
    "image",
)  # fmt: skip
"""The ``VolumeSource`` members; a volume naming none of them (or only nulls) gets ``emptyDir``."""


def image_tag(image: str) -> str:
    """The tag of an image reference as ``parsers.ParseImageName`` sees it (``latest`` if none).

    ``repo:tag`` -> ``tag``; a ``@digest`` reference has no tag; ``host:5000/repo`` is untagged.
    """
    name = image.split("@", 1)[0]
    last = name.rsplit("/", 1)[-1]
    if ":" in last:
        return last.rsplit(":", 1)[1]
    return "" if "@" in image else "latest"


def _set(obj: dict[str, Any], key: str, value: Any) -> None:
    if obj.get(key) in (None, ""):
        obj[key] = value


def _http_get(handler: Any) -> None:
    if isinstance(handler, dict) and isinstance(handler.get("httpGet"), dict):
        _set(handler["httpGet"], "path", "/")
        _set(handler["httpGet"], "scheme", "HTTP")


def _probe(probe: Any) -> None:
    if not isinstance(probe, dict):
        return
    for key, value in (
        ("timeoutSeconds", 1),
        ("periodSeconds", 10),
        ("successThreshold", 1),
        ("failureThreshold", 3),
    ):
        if not probe.get(key):
            probe[key] = value
    _http_get(probe)


def _field_ref(holder: Any) -> None:
    if isinstance(holder, dict) and isinstance(holder.get("fieldRef"), dict):
        _set(holder["fieldRef"], "apiVersion", "v1")


def _container_common(container: dict[str, Any], *, full: bool) -> None:
    """Ports, env, resources, probes and lifecycle hooks; ``full`` adds ``SetDefaults_Container``."""
    if full:
        if not container.get("imagePullPolicy"):
            tag = image_tag(str(container.get("image") or ""))
            container["imagePullPolicy"] = "Always" if tag == "latest" else "IfNotPresent"
        _set(container, "terminationMessagePath", "/dev/termination-log")
        _set(container, "terminationMessagePolicy", "File")
    for port in container.get("ports") or []:
        if isinstance(port, dict):
            _set(port, "protocol", "TCP")
    for env in container.get("env") or []:
        if isinstance(env, dict):
            _field_ref(env.get("valueFrom"))
    resources = container.get("resources")
    if isinstance(resources, dict):
        for key in ("limits", "requests"):
            if isinstance(resources.get(key), Mapping):
                resources[key] = default_resource_list(resources[key])
    for key in ("livenessProbe", "readinessProbe", "startupProbe"):
        _probe(container.get(key))
    lifecycle = container.get("lifecycle")
    if isinstance(lifecycle, dict):
        _http_get(lifecycle.get("postStart"))
        _http_get(lifecycle.get("preStop"))


def _default_mode(source: Any) -> None:
    if isinstance(source, dict) and source.get("defaultMode") is None:
        source["defaultMode"] = DEFAULT_FILE_MODE


def _volume(volume: dict[str, Any]) -> None:
    if all(volume.get(key) is None for key in VOLUME_SOURCES):
        volume["emptyDir"] = {}
    if isinstance(volume.get("hostPath"), dict) and volume["hostPath"].get("type") is None:
        volume["hostPath"]["type"] = ""
    for key in ("secret", "configMap"):
        _default_mode(volume.get(key))
    downward = volume.get("downwardAPI")
    if isinstance(downward, dict):
        _default_mode(downward)
        for item in downward.get("items") or []:
            _field_ref(item)
    projected = volume.get("projected")
    if isinstance(projected, dict):
        _default_mode(projected)
        for source in projected.get("sources") or []:
            if not isinstance(source, dict):
                continue
            if isinstance(source.get("downwardAPI"), dict):
                for item in source["downwardAPI"].get("items") or []:
                    _field_ref(item)
            token = source.get("serviceAccountToken")
            if isinstance(token, dict) and token.get("expirationSeconds") is None:
                token["expirationSeconds"] = 3600


def _each_dict(items: Any, apply: Callable[[dict[str, Any]], None]) -> None:
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict):
            apply(item)


def default_pod_spec(spec: Mapping[str, Any]) -> dict[str, Any]:
    """``SetDefaultPodSpec`` on a copy of a pod spec dict (see the module docstring)."""
    out = copy.deepcopy(dict(spec))
    _set(out, "dnsPolicy", "ClusterFirst")
    _set(out, "restartPolicy", "Always")
    if out.get("securityContext") is None:
        out["securityContext"] = {}
    if out.get("terminationGracePeriodSeconds") is None:
        out["terminationGracePeriodSeconds"] = 30
    _set(out, "schedulerName", "default-scheduler")
    _each_dict(out.get("volumes"), _volume)
    _each_dict(out.get("initContainers"), lambda c: _container_common(c, full=True))

    def regular(container: dict[str, Any]) -> None:
        if not container.get("imagePullPolicy"):
            container["imagePullPolicy"] = "Always"
        _container_common(container, full=True)

    _each_dict(out.get("containers"), regular)
    _each_dict(out.get("ephemeralContainers"), lambda c: _container_common(c, full=False))
    if isinstance(out.get("overhead"), Mapping):
        out["overhead"] = default_resource_list(out["overhead"])
    return out


def default_pod_template(template: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a ``PodTemplateSpec`` dict with :func:`default_pod_spec` applied to ``spec``.

    The input is never mutated. A missing ``spec`` is defaulted from ``{}``.
    """
    out = copy.deepcopy(dict(template))
    spec = out.get("spec")
    out["spec"] = default_pod_spec(spec if isinstance(spec, Mapping) else {})
    return out


def add_marshal_artifacts(template: Mapping[str, Any]) -> dict[str, Any]:
    """What Go's ``json.Marshal`` of a ``PodTemplateSpec`` adds to a template dict.

    ``metadata`` (a struct) always appears, with ``creationTimestamp: null``; every container's
    ``resources`` (a struct) appears as ``{}`` at least; quantities (container limits/requests,
    ``emptyDir.sizeLimit``) are printed canonically, without rounding. Returns a copy.
    """
    out = copy.deepcopy(dict(template))
    metadata = out.get("metadata")
    metadata = dict(metadata) if isinstance(metadata, Mapping) else {}
    metadata.setdefault("creationTimestamp", None)
    out["metadata"] = metadata
    spec = out.get("spec")
    if isinstance(spec, dict):
        for key in ("initContainers", "containers", "ephemeralContainers"):
            _each_dict(spec.get(key), _resources_struct)
        _each_dict(spec.get("volumes"), _size_limit)
    return out


def _resources_struct(container: dict[str, Any]) -> None:
    resources = container.get("resources")
    if not isinstance(resources, dict):
        container["resources"] = {}
        return
    for key in ("limits", "requests"):
        if isinstance(resources.get(key), Mapping):
            items = resources[key].items()
            resources[key] = {k: canonical_quantity(v, round_to_milli=False) for k, v in items}


def _size_limit(volume: dict[str, Any]) -> None:
    empty_dir = volume.get("emptyDir")
    if isinstance(empty_dir, dict) and empty_dir.get("sizeLimit") is not None:
        empty_dir["sizeLimit"] = canonical_quantity(empty_dir["sizeLimit"], round_to_milli=False)


def _claim_map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def default_claim_template(claim: Any) -> Any:
    """``SetDefaults_PersistentVolumeClaim`` (status.phase Pending) and resource-list rounding."""
    if not isinstance(claim, dict):
        return claim
    status = claim.get("status")
    status = status if isinstance(status, dict) else {}
    if not status.get("phase"):
        status["phase"] = "Pending"
    if isinstance(status.get("capacity"), Mapping):
        status["capacity"] = default_resource_list(status["capacity"])
    claim["status"] = status
    resources = _claim_map(claim.get("spec")).get("resources")
    if isinstance(resources, dict):
        for key in ("limits", "requests"):
            if isinstance(resources.get(key), Mapping):
                resources[key] = default_resource_list(resources[key])
    return claim


def claim_marshal_artifacts(claim: Any) -> Any:
    """Go's ``json.Marshal`` of a PVC: ``metadata.creationTimestamp: null``, ``spec.resources: {}``,
    ``status: {}`` (structs are never omitted)."""
    if not isinstance(claim, dict):
        return claim
    if claim.get("status") is None:
        claim["status"] = {}
    metadata = claim.get("metadata")
    claim["metadata"] = {"creationTimestamp": None, **(metadata if isinstance(metadata, Mapping) else {})}
    spec = claim.get("spec")
    spec = spec if isinstance(spec, dict) else {}
    if spec.get("resources") is None:
        spec["resources"] = {}
    claim["spec"] = spec
    return claim


def default_container(container: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of one container with Kubernetes' ``SetDefaults_Container`` and friends applied
    (``imagePullPolicy`` by tag, termination message, ports, env fieldRefs, resources, probes,
    lifecycle handlers), as SidecarSet's ``setDefaultContainer``."""
    out = copy.deepcopy(dict(container))
    _container_common(out, full=True)
    return out


def default_volumes(volumes: Any) -> list[Any]:
    """A copy of a volume list with ``SetDefaultPodVolumes`` applied."""
    out = copy.deepcopy(list(volumes)) if isinstance(volumes, list) else []
    _each_dict(out, _volume)
    return out
