"""Small SidecarSet and pod dicts for the pure-core tests."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

from kruise.workloads.admission.sidecarset_defaults import default_sidecarset
from kruise.workloads.sidecarset.hashing import sidecarset_hash, sidecarset_hash_without_image
from kruise.workloads.sidecarset.keys import HASH_ANNOTATION, HASH_WITHOUT_IMAGE_ANNOTATION

JSON = dict[str, Any]
NOW = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)


def sidecarset(
    name: str = "log",
    *,
    containers: list[JSON] | None = None,
    init_containers: list[JSON] | None = None,
    selector: JSON | None = None,
    **spec: Any,
) -> JSON:
    """A defaulted SidecarSet with its hash annotations, as the mutating webhook stores it."""
    body: JSON = {
        "selector": selector if selector is not None else {"matchLabels": {"app": "web"}},
        "containers": containers if containers is not None else [{"name": "sidecar", "image": "busybox:1"}],
        **spec,
    }
    if init_containers is not None:
        body["initContainers"] = init_containers
    obj = default_sidecarset(
        {
            "apiVersion": "apps.kruise.io/v1alpha1",
            "kind": "SidecarSet",
            "metadata": {"name": name, "uid": f"uid-{name}", "generation": 1, "resourceVersion": "7"},
            "spec": body,
        }
    )
    return with_hashes(obj)


def with_hashes(obj: JSON) -> JSON:
    out = copy.deepcopy(obj)
    annotations = out["metadata"].setdefault("annotations", {})
    annotations[HASH_ANNOTATION] = sidecarset_hash(out)
    annotations[HASH_WITHOUT_IMAGE_ANNOTATION] = sidecarset_hash_without_image(out)
    return out


def with_image(obj: JSON, image: str, index: int = 0) -> JSON:
    out = copy.deepcopy(obj)
    out["spec"]["containers"][index]["image"] = image
    return with_hashes(out)


def pod(
    name: str = "web-0",
    *,
    labels: JSON | None = None,
    containers: list[JSON] | None = None,
    namespace: str = "ns",
    annotations: JSON | None = None,
    **spec: Any,
) -> JSON:
    """A pod being created (no status)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": labels if labels is not None else {"app": "web"},
            "annotations": dict(annotations or {}),
        },
        "spec": {
            "containers": containers if containers is not None else [{"name": "app", "image": "nginx:1"}],
            **spec,
        },
    }


def running(obj: JSON, *, ready: bool = True, not_ready: tuple[str, ...] = (), restarts: int = 0) -> JSON:
    """``obj`` Running on a node with KWOK-like container statuses (imageID = the image's digest)."""
    out = copy.deepcopy(obj)
    out["spec"]["nodeName"] = "node-1"
    out["status"] = {
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
        "containerStatuses": [
            {
                "name": c["name"],
                "image": c["image"],
                "imageID": f"sha256:{c['image']}",
                "ready": c["name"] not in not_ready,
                "restartCount": restarts,
            }
            for c in out["spec"]["containers"]
        ],
    }
    return out


def kubelet_applied(obj: JSON) -> JSON:
    """What the kubelet reports once it runs the spec's images (KWOK's in-place stage)."""
    out = copy.deepcopy(obj)
    images = {c["name"]: c["image"] for c in out["spec"]["containers"]}
    for status in out["status"]["containerStatuses"]:
        if status["image"] != images[status["name"]]:
            status["image"] = images[status["name"]]
            status["imageID"] = f"sha256:{images[status['name']]}"
            status["restartCount"] += 1
    return out
