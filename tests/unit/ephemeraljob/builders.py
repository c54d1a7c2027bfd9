"""EphemeralJob and pod dicts for the unit tests of the pure core."""

from __future__ import annotations

import datetime
from typing import Any

from kruise.core.api.base import format_time
from kruise.workloads.api.ephemeraljob import EJOB_ENV_KEY
from kruise.workloads.ephemeraljob.plan import FINALIZER

JSON = dict[str, Any]
NOW = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
UID = "job-uid-1"
NS = "ns"


def container(name: str = "debugger", **extra: Any) -> JSON:
    return {
        "name": name,
        "image": "busybox",
        "imagePullPolicy": "IfNotPresent",
        "terminationMessagePolicy": "File",
        **extra,
    }


def job(
    *,
    containers: list[JSON] | None = None,
    status: JSON | None = None,
    finalizers: tuple[str, ...] = (FINALIZER,),
    deleting: bool = False,
    **spec: Any,
) -> JSON:
    meta: JSON = {"name": "ejob", "namespace": NS, "uid": UID, "finalizers": list(finalizers)}
    if deleting:
        meta["deletionTimestamp"] = format_time(NOW)
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "EphemeralJob",
        "metadata": meta,
        "spec": {
            "selector": {"matchLabels": {"run": "nginx"}},
            "template": {"ephemeralContainers": [container()] if containers is None else containers},
            **spec,
        },
        "status": status or {},
    }


def injected(name: str = "debugger", uid: str = UID) -> JSON:
    """An ephemeral container as it sits in a pod's spec after a job (``uid``) injected it."""
    return container(name, env=[{"name": EJOB_ENV_KEY, "value": uid}])


def pod(
    name: str,
    *,
    age: int = 0,
    phase: str = "Running",
    labels: JSON | None = None,
    ephemeral: list[JSON] | None = None,
    states: dict[str, JSON] | None = None,
    namespace: str = NS,
    deleting: bool = False,
) -> JSON:
    """A pod created ``age`` seconds before the others of age 0 (older sorts first); ``states``
    maps an ephemeral container's name to its ``state`` in ``ephemeralContainerStatuses``."""
    meta: JSON = {
        "name": name,
        "namespace": namespace,
        "uid": f"uid-{name}",
        "labels": {"run": "nginx"} if labels is None else labels,
        "creationTimestamp": format_time(NOW - datetime.timedelta(hours=1, seconds=age)),
    }
    if deleting:
        meta["deletionTimestamp"] = format_time(NOW)
    return {
        "metadata": meta,
        "spec": {"containers": [{"name": "nginx", "image": "nginx"}], "ephemeralContainers": ephemeral or []},
        "status": {
            "phase": phase,
            "ephemeralContainerStatuses": [{"name": n, "state": s} for n, s in (states or {}).items()],
        },
    }


RUNNING: JSON = {"running": {"startedAt": format_time(NOW)}}
WAITING: JSON = {"waiting": {"reason": "ContainerCreating"}}
EXIT_0: JSON = {"terminated": {"exitCode": 0, "finishedAt": format_time(NOW)}}
EXIT_1: JSON = {"terminated": {"exitCode": 1, "finishedAt": format_time(NOW)}}
RUN_ERROR: JSON = {"waiting": {"reason": "RunContainerError"}}
