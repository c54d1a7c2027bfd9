"""EphemeralJob on the real node: the controller injects an ephemeral container into a pod the
kubelet runs, the kubelet starts it in the pod's sandbox (``kruise.local/busybox`` running
``sh -c 'exit <n>'``) and reports its end in ``ephemeralContainerStatuses``, and the job's
phase follows from that report alone (what the stand-in kubelet imitates in
``tests/integration/ephemeraljob``): exit 0 -> Succeeded, exit 1 -> Failed."""

from __future__ import annotations

from typing import Any

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import EPHEMERALJOBS, PODS
from kruise.core.localcluster.realnode import busybox
from kruise.workloads.api.ephemeraljob import EJOB_ENV_KEY
from tests.integration.ephemeraljob.helpers import condition, wait_job
from tests.integration.realnode.conftest import RealNode, real_pod_spec, wait_pod, web_container

pytestmark = pytest.mark.usefixtures("manager")
JSON = dict[str, Any]


def ephemeral_job(name: str, code: int) -> JSON:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "EphemeralJob",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"run": "web"}},
            "replicas": 1,
            "parallelism": 1,
            "template": {
                "ephemeralContainers": [
                    {
                        "name": "debugger",
                        "targetContainerName": "web",
                        "image": busybox("v1"),
                        "command": ["sh", "-c", f"exit {code}"],
                        "imagePullPolicy": "IfNotPresent",
                        "terminationMessagePolicy": "File",
                    }
                ]
            },
        },
    }


async def _run(kube: KubeClient, namespace: str, node: RealNode, code: int, phase: str) -> tuple[JSON, JSON]:
    """A Ready pod on the real node, a job running ``exit <code>`` in it; the job once ``phase``
    and the pod then."""
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "labels": {"run": "web"}}}
    await kube.create(PODS, {**body, "spec": real_pod_spec(web_container())}, namespace)
    pod = await wait_pod(kube, namespace, "web", timeout=120)
    assert pod["spec"]["nodeName"] == node.name
    created = await kube.create(EPHEMERALJOBS, ephemeral_job("job", code), namespace)
    job = await wait_job(kube, namespace, "job", phase=phase, timeout=120)
    pod = await kube.get(PODS, "web", namespace)
    (injected,) = pod["spec"]["ephemeralContainers"]
    assert {"name": EJOB_ENV_KEY, "value": created["metadata"]["uid"]} in injected["env"]
    return job, pod


def _kubelet_report(node: RealNode, pod: JSON) -> JSON:
    """The kubelet's ``ephemeralContainerStatuses`` entry of the debugger, checked against the
    container containerd ran in the pod's sandbox."""
    (status,) = pod["status"]["ephemeralContainerStatuses"]
    assert status["name"] == "debugger"
    terminated = status["state"]["terminated"]
    assert terminated["containerID"].startswith("containerd://") and terminated["finishedAt"]
    (sandbox,) = node.sandboxes(pod["metadata"]["uid"])
    (ran,) = node.containers(sandbox["id"], "debugger")
    assert terminated["containerID"] == f"containerd://{ran['id']}"
    assert ran["state"] == "CONTAINER_EXITED"
    return dict(terminated)


async def test_exit_0_in_the_ephemeral_container_succeeds_the_job(
    kube: KubeClient, namespace: str, real_node: RealNode
) -> None:
    job, pod = await _run(kube, namespace, real_node, 0, "Succeeded")
    st = job["status"]
    assert (st["match"], st["succeeded"], st["failed"], st["running"], st["waiting"]) == (1, 1, 0, 0, 0)
    assert condition(job, "JobSucceeded") is not None and st["completionTime"]
    terminated = _kubelet_report(real_node, pod)
    assert (terminated["exitCode"], terminated["reason"]) == (0, "Completed")
    assert pod["status"]["phase"] == "Running"  # the pod's own container is untouched


async def test_exit_1_in_the_ephemeral_container_fails_the_job(
    kube: KubeClient, namespace: str, real_node: RealNode
) -> None:
    job, pod = await _run(kube, namespace, real_node, 1, "Failed")
    st = job["status"]
    assert (st["match"], st["succeeded"], st["failed"]) == (1, 0, 1)
    failed = condition(job, "JobFailed")
    assert failed is not None and failed["reason"] == "CreateFailed" and st["completionTime"]
    terminated = _kubelet_report(real_node, pod)
    assert (terminated["exitCode"], terminated["reason"]) == (1, "Error")
