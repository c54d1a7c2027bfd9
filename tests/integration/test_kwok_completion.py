"""The KWOK completion stages on the real KWOK: a pod annotated ``kwok.kruise.local/exit-code``
(and ``kwok.kruise.local/run-duration``) finishes its containers as a kubelet would: exit 0 gives
Succeeded, a non-zero code Failed under ``restartPolicy: Never`` and a restart (restartCount + 1,
Running again) under ``OnFailure``; each only after the run duration (see ``kwok-stages.yaml``)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import PODS
from tests.support.wait import eventually

JSON = dict[str, Any]
EXIT_CODE = "kwok.kruise.local/exit-code"
RUN_DURATION = "kwok.kruise.local/run-duration"


def _pod(name: str, restart: str, code: str | None, run: str | None = None) -> JSON:
    annotations = {EXIT_CODE: code} if code is not None else {}
    if run is not None:
        annotations[RUN_DURATION] = run
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "annotations": annotations},
        "spec": {"restartPolicy": restart, "containers": [{"name": "c", "image": "busybox"}]},
    }


async def _phase(kube: KubeClient, namespace: str, name: str, phase: str, timeout: float = 30.0) -> JSON:
    async def probe() -> JSON | None:
        pod = await kube.get(PODS, name, namespace)
        return pod if pod["status"].get("phase") == phase else None

    result: JSON = await eventually(probe, timeout=timeout, what=f"pod {name} {phase}")
    return result


async def _started_running(kube: KubeClient, namespace: str, name: str) -> float:
    await _phase(kube, namespace, name, "Running")
    return time.monotonic()


async def test_exit_0_under_never_succeeds_after_the_run_duration(kube: KubeClient, namespace: str) -> None:
    await kube.create(PODS, _pod("ok", "Never", "0", "3s"), namespace)
    running_at = await _started_running(kube, namespace, "ok")
    pod = await _phase(kube, namespace, "ok", "Succeeded")
    assert time.monotonic() - running_at >= 2.0, "finished before its run duration"
    status = pod["status"]["containerStatuses"][0]
    assert status["state"]["terminated"]["exitCode"] == 0
    assert status["state"]["terminated"]["reason"] == "Completed"
    assert status["ready"] is False and status["restartCount"] == 0
    ready = [c for c in pod["status"]["conditions"] if c["type"] == "Ready"]
    assert ready and ready[0]["status"] == "False"


async def test_exit_0_under_on_failure_succeeds(kube: KubeClient, namespace: str) -> None:
    await kube.create(PODS, _pod("ok2", "OnFailure", "0"), namespace)
    pod = await _phase(kube, namespace, "ok2", "Succeeded")
    assert pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 0


async def test_non_zero_exit_under_never_fails(kube: KubeClient, namespace: str) -> None:
    await kube.create(PODS, _pod("bad", "Never", "3", "1s"), namespace)
    pod = await _phase(kube, namespace, "bad", "Failed")
    terminated = pod["status"]["containerStatuses"][0]["state"]["terminated"]
    assert terminated["exitCode"] == 3 and terminated["reason"] == "Error"


async def test_non_zero_exit_under_on_failure_restarts(kube: KubeClient, namespace: str) -> None:
    await kube.create(PODS, _pod("flaky", "OnFailure", "1", "1s"), namespace)

    async def restarted_twice() -> JSON | None:
        pod = await kube.get(PODS, "flaky", namespace)
        statuses = pod["status"].get("containerStatuses") or [{}]
        return pod if statuses[0].get("restartCount", 0) >= 2 else None

    pod = await eventually(restarted_twice, timeout=30, what="two restarts")
    assert pod["status"]["phase"] == "Running"
    status = pod["status"]["containerStatuses"][0]
    assert status["lastState"]["terminated"]["exitCode"] == 1
    assert "running" in status["state"]


async def test_an_unannotated_pod_keeps_running(kube: KubeClient, namespace: str) -> None:
    await kube.create(PODS, _pod("plain", "Never", None), namespace)
    await _phase(kube, namespace, "plain", "Running")
    await asyncio.sleep(2.0)
    pod = await kube.get(PODS, "plain", namespace)
    assert pod["status"]["phase"] == "Running"
