"""EphemeralJob on the real node: the controller injects an ephemeral container into a pod the
kubelet runs, the kubelet starts it in the pod's sandbox (``kruise.local/busybox`` running
``sh -c 'exit <n>'``) and reports its end in ``ephemeralContainerStatuses``, and the job's
phase follows from that report alone (what the stand-in kubelet imitates in
``tests/integration/ephemeraljob``): exit 0 -> Succeeded, exit 1 -> Failed.

Then upstream's e2e "Create Ephemeral Container" context on a CloneSet pod: a running ephemeral
container leaves the main container alone ("test ephemeral container impact main container")
and is never restarted when the main container is, by an in-place update ("test ephemeral
container in in-place-update") or a ContainerRecreateRequest ("test ephemeral container in crr").
"""

from __future__ import annotations

from typing import Any

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, CONTAINERRECREATEREQUESTS, EPHEMERALJOBS, PODS
from kruise.core.localcluster.realnode import busybox
from kruise.workloads.api.ephemeraljob import EJOB_ENV_KEY
from tests.integration.ephemeraljob.helpers import condition, wait_job
from tests.integration.realnode.conftest import (
    RealNode,
    container_status,
    real_pod_spec,
    wait_pod,
    web_container,
)
from tests.integration.realnode.test_containerrecreate import completed, crr_body
from tests.integration.rollouts.helpers import wait_settled

pytestmark = pytest.mark.usefixtures("manager")
JSON = dict[str, Any]


def ephemeral_job(name: str, code: int, command: tuple[str, ...] | None = None) -> JSON:
    """A job running ``sh -c 'exit <code>'`` (or ``command``) in the pod labelled ``run: web``."""
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
                        "command": list(command or ("sh", "-c", f"exit {code}")),
                        "imagePullPolicy": "IfNotPresent",
                        "terminationMessagePolicy": "File",
                    }
                ]
            },
        },
    }


async def _run(
    kube: KubeClient,
    namespace: str,
    node: RealNode,
    code: int,
    phase: str,
    command: tuple[str, ...] | None = None,
) -> tuple[JSON, JSON]:
    """A Ready pod on the real node, a job running ``exit <code>`` (or ``command``) in it; the job
    once ``phase`` and the pod then."""
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "labels": {"run": "web"}}}
    await kube.create(PODS, {**body, "spec": real_pod_spec(web_container())}, namespace)
    pod = await wait_pod(kube, namespace, "web", timeout=120)
    assert pod["spec"]["nodeName"] == node.name
    created = await kube.create(EPHEMERALJOBS, ephemeral_job("job", code, command), namespace)
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


async def test_create_ephemeral_running_err_command_job(
    kube: KubeClient, namespace: str, real_node: RealNode
) -> None:
    """e2e "create ephemeral running err command job": a command the image does not have never
    starts; the kubelet reports the container waiting with ``RunContainerError`` (runc: executable
    file not found), which counts as failed, and the job ends Failed."""
    job, pod = await _run(kube, namespace, real_node, 0, "Failed", ("sdkfjk",))
    assert (job["status"]["failed"], job["status"]["succeeded"]) == (1, 0)
    (status,) = pod["status"]["ephemeralContainerStatuses"]
    waiting = status["state"]["waiting"]
    assert waiting["reason"] == "RunContainerError" and "executable file not found" in waiting["message"]


def _cloneset() -> JSON:
    """CloneSet ``web`` of one pod on the real node, updated in place."""
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"run": "web"}},
            "template": {"metadata": {"labels": {"run": "web"}}, "spec": real_pod_spec(web_container())},
            "updateStrategy": {"type": "InPlaceIfPossible"},
        },
    }


async def _running_debugger(kube: KubeClient, namespace: str) -> tuple[JSON, JSON]:
    """A CloneSet pod with a ``sleep`` debugger the kubelet runs; (pod before, pod after)."""
    await kube.create(CLONESETS, _cloneset(), namespace)
    await wait_settled(kube, namespace, 1, timeout=120)
    (before,) = (await kube.list(PODS, namespace, label_selector="run=web"))["items"]
    await kube.create(EPHEMERALJOBS, ephemeral_job("job", 0, ("sleep", "99999")), namespace)
    await wait_job(kube, namespace, "job", running=1, phase="Running", timeout=120)
    after = await kube.get(PODS, before["metadata"]["name"], namespace)
    return before, after


async def test_ephemeral_container_impact_main_container(
    kube: KubeClient, namespace: str, real_node: RealNode
) -> None:
    """e2e "test ephemeral container impact main container": the main container keeps its
    containerID and restart count while the debugger runs beside it."""
    before, after = await _running_debugger(kube, namespace)
    assert after["metadata"]["uid"] == before["metadata"]["uid"]
    main_before, main_after = container_status(before, "web"), container_status(after, "web")
    assert main_after["containerID"] == main_before["containerID"]
    assert main_after["restartCount"] == main_before["restartCount"] == 0
    (debugger,) = after["status"]["ephemeralContainerStatuses"]
    assert "running" in debugger["state"] and debugger["containerID"].startswith("containerd://")


async def test_ephemeral_container_in_in_place_update(
    kube: KubeClient, namespace: str, real_node: RealNode
) -> None:
    """e2e "test ephemeral container in in-place-update": the CloneSet's image change restarts
    the main container in place (same pod UID, a new containerID, the new image). What the
    kubelet then does to the debugger (upstream's e2e does not look): it is never restarted (the
    same containerID), and as it lives in its target container's PID namespace it ends with that
    container's old process, killed (exit 137); the job counts it failed."""
    before, running = await _running_debugger(kube, namespace)
    image = {"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": busybox("v2")}
    await kube.patch(CLONESETS, "web", [image], namespace, patch_type="json")
    await wait_settled(kube, namespace, 1, timeout=120)
    after = await _debugger_killed_with_its_target(kube, namespace, before, running)
    assert container_status(after, "web")["image"] == busybox("v2")


async def test_ephemeral_container_in_crr(kube: KubeClient, namespace: str, real_node: RealNode) -> None:
    """e2e "test ephemeral container in crr": a ContainerRecreateRequest (kruise-daemon on the
    node) recreates the main container; the debugger in its PID namespace ends with it, is not
    restarted, and the job counts it failed."""
    before, running = await _running_debugger(kube, namespace)
    pod_name = before["metadata"]["name"]
    body = crr_body("crr", pod_name, "web", strategy={"minStartedSeconds": 1}, ttlSecondsAfterFinished=600)
    await kube.create(CONTAINERRECREATEREQUESTS, body, namespace)
    crr = await completed(kube, namespace, "crr", timeout=120)
    assert crr["status"]["containerRecreateStates"] == [
        {"name": "web", "phase": "Succeeded", "isKilled": True}
    ]
    await _debugger_killed_with_its_target(kube, namespace, before, running)


async def _debugger_killed_with_its_target(
    kube: KubeClient, namespace: str, before: JSON, running: JSON
) -> JSON:
    """After the main container's restart: the same pod, ``web`` restarted once (a new
    containerID), the debugger the same container, terminated by SIGKILL (137) and never
    restarted, the job Failed with it counted failed. Returns the pod."""
    job = await wait_job(kube, namespace, "job", phase="Failed", failed=1, timeout=60)
    after = await wait_pod(kube, namespace, before["metadata"]["name"], timeout=60)
    assert after["metadata"]["uid"] == before["metadata"]["uid"]
    main = container_status(after, "web")
    assert main["restartCount"] == 1 and main["containerID"] != container_status(before, "web")["containerID"]
    (debugger,) = running["status"]["ephemeralContainerStatuses"]
    (ended,) = after["status"]["ephemeralContainerStatuses"]
    terminated = ended["state"]["terminated"]
    assert terminated["containerID"] == debugger["containerID"] and terminated["exitCode"] == 137
    assert ended.get("restartCount", 0) == 0
    assert (job["status"]["running"], job["status"]["match"]) == (0, 1)
    return after
