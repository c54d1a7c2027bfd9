"""BroadcastJob on the real node: the kubelet runs ``sh -c 'exit <n>'`` in
``kruise.local/busybox`` and reports the outcome the job counts (what KWOK's completion stages
imitate for the other BroadcastJob tests): exit 0 completes the job, exit 1 under
``restartPolicy: Never`` fails it (FailFast), and under ``OnFailure`` the kubelet restarts the
container until ``restartLimit`` is passed."""

from __future__ import annotations

from typing import Any

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import BROADCASTJOBS, PODS
from kruise.core.localcluster.realnode import busybox, pod_placement
from tests.integration.broadcastjob.helpers import condition, job_pods, wait_job
from tests.integration.realnode.conftest import RealNode, container_status

pytestmark = pytest.mark.usefixtures("manager")
JSON = dict[str, Any]


def real_job(name: str, code: int, restart: str = "Never", **spec: Any) -> JSON:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "BroadcastJob",
        "metadata": {"name": name},
        "spec": {
            "template": {
                "spec": {
                    **pod_placement(),
                    "restartPolicy": restart,
                    "terminationGracePeriodSeconds": 1,
                    "containers": [
                        {"name": "job", "image": busybox("v1"), "command": ["sh", "-c", f"exit {code}"]}
                    ],
                }
            },
            **spec,
        },
    }


async def _only_pod(kube: KubeClient, namespace: str, name: str, node: str) -> JSON:
    pods = await job_pods(kube, namespace, name)
    assert len(pods) == 1, [p["metadata"]["name"] for p in pods]
    assert pods[0]["spec"]["nodeName"] == node
    return await kube.get(PODS, pods[0]["metadata"]["name"], namespace)


async def test_exit_0_completes_the_job(kube: KubeClient, namespace: str, real_node: RealNode) -> None:
    await kube.create(BROADCASTJOBS, real_job("ok", 0), namespace)
    job = await wait_job(kube, namespace, "ok", phase="completed", timeout=120)
    assert (job["status"]["desired"], job["status"]["succeeded"], job["status"]["failed"]) == (1, 1, 0)
    assert condition(job, "Complete") is not None
    pod = await _only_pod(kube, namespace, "ok", real_node.name)
    assert pod["status"]["phase"] == "Succeeded"
    terminated = container_status(pod, "job")["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (0, "Completed")


async def test_exit_1_under_never_fails_the_job(
    kube: KubeClient, namespace: str, real_node: RealNode
) -> None:
    await kube.create(BROADCASTJOBS, real_job("bad", 1), namespace)
    job = await wait_job(kube, namespace, "bad", phase="failed", timeout=120)
    assert job["status"]["failed"] == 1 and condition(job, "Failed") is not None
    pod = await _only_pod(kube, namespace, "bad", real_node.name)
    assert pod["status"]["phase"] == "Failed"
    assert container_status(pod, "job")["state"]["terminated"]["exitCode"] == 1


async def test_exit_1_under_on_failure_restarts_past_the_limit(
    kube: KubeClient, namespace: str, real_node: RealNode
) -> None:
    """The kubelet restarts the container (back-off 10 s, then 20 s); the second restart passes
    ``restartLimit: 1`` and FailFast fails the job."""
    body = real_job("flaky", 1, "OnFailure", failurePolicy={"type": "FailFast", "restartLimit": 1})
    await kube.create(BROADCASTJOBS, body, namespace)
    job = await wait_job(kube, namespace, "flaky", phase="failed", failed=1, timeout=150)
    assert condition(job, "Failed") is not None
    pod = await _only_pod(kube, namespace, "flaky", real_node.name)
    status = container_status(pod, "job")
    assert status["restartCount"] >= 2
    assert status["lastState"]["terminated"]["exitCode"] == 1
