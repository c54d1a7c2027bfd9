"""BroadcastJob builders and waits for the integration scenarios.

Every job selects the test's own KWOK nodes (``bcj-test: <pool prefix>``), the only difference
from upstream's e2e, which broadcasts to every node of its cluster. The pod's run is played by
KWOK's completion stages: ``kwok.kruise.local/exit-code`` and ``kwok.kruise.local/run-duration``
(see ``kwok-stages.yaml``).
"""

from __future__ import annotations

from typing import Any

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import BROADCASTJOBS, PODS
from tests.support.nodes import NodePool
from tests.support.wait import wait_status

JSON = dict[str, Any]
EXIT_CODE = "kwok.kruise.local/exit-code"
RUN_DURATION = "kwok.kruise.local/run-duration"


def node_label(pool: NodePool) -> dict[str, str]:
    return {"bcj-test": pool.prefix}


def new_job(
    name: str,
    pool: NodePool,
    *,
    exit_code: int | None = 0,
    run: str = "1s",
    restart: str = "Never",
    **spec: Any,
) -> JSON:
    """A BroadcastJob on the pool's nodes whose pods exit with ``exit_code`` after ``run``
    (``None``: they run until deleted)."""
    annotations = {} if exit_code is None else {EXIT_CODE: str(exit_code), RUN_DURATION: run}
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "BroadcastJob",
        "metadata": {"name": name},
        "spec": {
            "template": {
                "metadata": {"labels": {"app": name}, "annotations": annotations},
                "spec": {
                    "nodeSelector": node_label(pool),
                    "restartPolicy": restart,
                    "containers": [{"name": "job", "image": "busybox", "command": ["sh", "-c", "exit 0"]}],
                },
            },
            **spec,
        },
    }


async def job_pods(kube: KubeClient, namespace: str, name: str) -> list[JSON]:
    return list((await kube.list(PODS, namespace, label_selector=f"broadcastjob-name={name}"))["items"])


async def wait_job(kube: KubeClient, namespace: str, name: str, *, timeout: float = 60, **want: Any) -> JSON:
    """Wait until the job's status has every ``want`` field."""
    return await wait_status(kube, BROADCASTJOBS, name, namespace, timeout=timeout, **want)


def condition(job: JSON, kind: str) -> JSON | None:
    for c in (job.get("status") or {}).get("conditions") or ():
        if c.get("type") == kind and c.get("status") == "True":
            return dict(c)
    return None
