"""EphemeralJob builders, waits, and the stand-in kubelet of the KWOK scenarios.

KWOK runs no container, and none of our KWOK stages (``kwok-stages.yaml``) reports
``status.ephemeralContainerStatuses``: a KWOK pod's ephemeral containers stay unreported. So in
these scenarios :class:`FakeKubelet` **plays the kubelet**: it watches the namespace's pods and,
for each ephemeral container in a pod's spec, writes through the pod's ``status`` subresource
first a ``running`` state, then (unless told to keep it running) a ``terminated`` one with the
exit code of its ``exit`` map. Everything else (the injection through the real API server's
``ephemeralcontainers`` subresource, the controller reading the statuses back) is real; the real
kubelet's own statuses are proven in ``tests/integration/realnode/test_ephemeraljob.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
from collections.abc import AsyncIterator
from typing import Any

from kruise.core.errors import KruiseError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import EPHEMERALJOBS, PODS
from tests.support.wait import eventually, wait_status

JSON = dict[str, Any]


def debugger(name: str = "debugger", command: tuple[str, ...] = ("sleep", "3")) -> JSON:
    """An ephemeral container as upstream's e2e writes it (pull and termination policies given)."""
    return {
        "name": name,
        "targetContainerName": "nginx",
        "image": "busybox:1.36",
        "command": list(command),
        "imagePullPolicy": "IfNotPresent",
        "terminationMessagePolicy": "File",
    }


def new_job(
    name: str, *containers: JSON, replicas: int | None = None, parallelism: int | None = None, **spec: Any
) -> JSON:
    body: JSON = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "EphemeralJob",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"run": "nginx"}},
            "template": {"ephemeralContainers": list(containers) or [debugger()]},
            **spec,
        },
    }
    if replicas is not None:
        body["spec"]["replicas"] = replicas
    if parallelism is not None:
        body["spec"]["parallelism"] = parallelism
    return body


def nginx_pod(name: str, labels: dict[str, str] | None = None) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"run": "nginx"} if labels is None else labels},
        "spec": {
            "terminationGracePeriodSeconds": 0,
            "containers": [{"name": "nginx", "image": "registry.example.com/nginx:1"}],
        },
    }


async def running_pods(
    kube: KubeClient, namespace: str, *names: str, labels: dict[str, str] | None = None
) -> None:
    """Create the pods one after another (so creation order is age order) and wait until KWOK
    runs them all."""
    for name in names:
        await kube.create(PODS, nginx_pod(name, labels), namespace)
        await asyncio.sleep(1.05)  # creationTimestamp has one-second resolution

    async def all_running() -> bool:
        pods = (await kube.list(PODS, namespace))["items"]
        phases = {p["metadata"]["name"]: (p.get("status") or {}).get("phase") for p in pods}
        return all(phases.get(n) == "Running" for n in names)

    await eventually(all_running, timeout=60, what=f"pods {names} running")


async def pod(kube: KubeClient, namespace: str, name: str) -> JSON:
    result: JSON = await kube.get(PODS, name, namespace)
    return result


async def wait_job(kube: KubeClient, namespace: str, name: str, *, timeout: float = 60, **want: Any) -> JSON:
    """Wait until the job's status has every ``want`` field."""
    return await wait_status(kube, EPHEMERALJOBS, name, namespace, timeout=timeout, **want)


def condition(job: JSON, kind: str) -> JSON | None:
    for c in (job.get("status") or {}).get("conditions") or ():
        if c.get("type") == kind:
            return dict(c)
    return None


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class FakeKubelet:
    """Plays the kubelet for ephemeral containers on KWOK pods (see the module docstring).

    ``exit`` maps a container name to its exit code (default 0); names in ``keep_running`` never
    terminate. ``most_in_flight`` is the largest number of pods seen at once with an ephemeral
    container injected and not yet terminated (what ``parallelism`` bounds); ``injected`` the
    pods that got one, in the order seen.
    """

    def __init__(
        self,
        kube: KubeClient,
        namespace: str,
        *,
        exit: dict[str, int] | None = None,
        keep_running: tuple[str, ...] = (),
        run_seconds: float = 0.5,
    ) -> None:
        self.kube, self.namespace = kube, namespace
        self.exit = exit or {}
        self.keep_running = keep_running
        self.run_seconds = run_seconds
        self.most_in_flight = 0
        self.injected: list[str] = []
        self._started: dict[tuple[str, str], float] = {}

    async def _tick(self) -> None:
        loop = asyncio.get_running_loop()
        in_flight = 0
        for p in (await self.kube.list(PODS, self.namespace))["items"]:
            pod_name = p["metadata"]["name"]
            specs = p["spec"].get("ephemeralContainers") or []
            if specs and pod_name not in self.injected:
                self.injected.append(pod_name)
            reported = {s["name"]: s for s in (p.get("status") or {}).get("ephemeralContainerStatuses") or []}
            statuses, changed, busy = [], False, False
            for c in specs:
                name = c["name"]
                state = (reported.get(name) or {}).get("state") or {}
                key = (pod_name, name)
                if not state:
                    state, changed = {"running": {"startedAt": _now()}}, True
                    self._started[key] = loop.time()
                elif (
                    "running" in state
                    and name not in self.keep_running
                    and loop.time() - self._started.get(key, 0) >= self.run_seconds
                ):
                    code = self.exit.get(name, 0)
                    started = state["running"]["startedAt"]
                    state = {
                        "terminated": {
                            "exitCode": code,
                            "startedAt": started,
                            "finishedAt": _now(),
                            "reason": "Completed" if code == 0 else "Error",
                        }
                    }
                    changed = True
                busy = busy or "terminated" not in state
                statuses.append(
                    {
                        "name": name,
                        "image": c["image"],
                        "imageID": "",
                        "ready": False,
                        "restartCount": 0,
                        "state": state,
                    }
                )
            in_flight += busy
            if changed:
                patch = {"status": {"ephemeralContainerStatuses": statuses}}
                with contextlib.suppress(KruiseError):
                    await self.kube.patch(PODS, pod_name, patch, self.namespace, subresource="status")
        self.most_in_flight = max(self.most_in_flight, in_flight)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[FakeKubelet]:
        """Run until the block ends."""

        async def loop() -> None:
            while True:
                await self._tick()
                await asyncio.sleep(0.1)

        task = asyncio.create_task(loop())
        try:
            yield self
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
