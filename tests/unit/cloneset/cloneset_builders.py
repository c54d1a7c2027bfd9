"""Small builders for CloneSet / Pod / ControllerRevision JSON dicts used by the cloneset unit tests."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

NOW = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
OLD = "cs-oldhash"
NEW = "cs-newhash"


def ts(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def template(
    image: str = "nginx:1.25", *, labels: dict[str, str] | None = None, **spec_extra: Any
) -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": "demo", **(labels or {})}},
        "spec": {"containers": [{"name": "main", "image": image}], **spec_extra},
    }


def cloneset(
    replicas: int | None = 5,
    *,
    partition: int | str | None = None,
    max_unavailable: int | str | None = None,
    max_surge: int | str | None = None,
    paused: bool = False,
    update_type: str | None = None,
    min_ready_seconds: int | None = None,
    lifecycle: dict[str, Any] | None = None,
    pods_to_delete: list[str] | None = None,
    scale_max_unavailable: int | str | None = None,
    priority: dict[str, Any] | None = None,
    scatter: list[dict[str, str]] | None = None,
    grace_seconds: int | None = None,
    tmpl: dict[str, Any] | None = None,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    update: dict[str, Any] = {}
    for key, value in (
        ("partition", partition),
        ("maxUnavailable", max_unavailable),
        ("maxSurge", max_surge),
        ("type", update_type),
        ("priorityStrategy", priority),
        ("scatterStrategy", scatter),
    ):
        if value is not None:
            update[key] = value
    if paused:
        update["paused"] = True
    if grace_seconds is not None:
        update["inPlaceUpdateStrategy"] = {"gracePeriodSeconds": grace_seconds}
    scale: dict[str, Any] = {}
    if pods_to_delete is not None:
        scale["podsToDelete"] = pods_to_delete
    if scale_max_unavailable is not None:
        scale["maxUnavailable"] = scale_max_unavailable
    spec: dict[str, Any] = {
        "selector": {"matchLabels": {"app": "demo"}},
        "template": tmpl or template(),
        "updateStrategy": update,
        "scaleStrategy": scale,
    }
    if replicas is not None:
        spec["replicas"] = replicas
    if min_ready_seconds is not None:
        spec["minReadySeconds"] = min_ready_seconds
    if lifecycle is not None:
        spec["lifecycle"] = lifecycle
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "cs", "namespace": "default", "uid": "cs-uid", "labels": labels or {}},
        "spec": spec,
        "status": {},
    }


_counter = iter(range(1_000_000))


def pod(
    revision: str = NEW,
    *,
    name: str | None = None,
    ready: bool = True,
    phase: str = "Running",
    state: str | None = "Normal",
    specified_delete: bool = False,
    node: str | None = "node-a",
    created: datetime | None = None,
    ready_since: datetime | None = None,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    finalizers: list[str] | None = None,
    restarts: int = 0,
    in_place_ready: bool | None = None,
    image: str = "nginx:1.25",
) -> dict[str, Any]:
    index = next(_counter)
    pod_labels = {"app": "demo", "controller-revision-hash": revision, **(labels or {})}
    if state is not None:
        pod_labels["lifecycle.apps.kruise.io/state"] = state
    if specified_delete:
        pod_labels["apps.kruise.io/specified-delete"] = "true"
    conditions: list[dict[str, Any]] = [
        {
            "type": "Ready",
            "status": "True" if ready else "False",
            "lastTransitionTime": ts(ready_since or NOW - timedelta(hours=1)),
        }
    ]
    if in_place_ready is not None:
        conditions.append({"type": "InPlaceUpdateReady", "status": "True" if in_place_ready else "False"})
    result: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name or f"cs-{index:05d}",
            "namespace": "default",
            "uid": f"uid-{index}",
            "labels": pod_labels,
            "annotations": dict(annotations or {}),
            "creationTimestamp": ts(created or NOW - timedelta(days=1)),
        },
        "spec": {"containers": [{"name": "main", "image": image}]},
        "status": {
            "phase": phase,
            "conditions": conditions,
            "containerStatuses": [
                {
                    "name": "main",
                    "image": image,
                    "imageID": f"docker-pullable://{image}@sha256:aaa",
                    "ready": ready,
                }
            ]
            if restarts == 0
            else [{"name": "main", "image": image, "restartCount": restarts, "ready": ready}],
        },
    }
    if node is not None:
        result["spec"]["nodeName"] = node
    if finalizers:
        result["metadata"]["finalizers"] = finalizers
    return result


def revision(name: str, tmpl: dict[str, Any], number: int) -> dict[str, Any]:
    data_template = copy.deepcopy(tmpl)
    data_template["$patch"] = "replace"
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {"name": name, "namespace": "default"},
        "data": {"spec": {"template": data_template}},
        "revision": number,
    }
