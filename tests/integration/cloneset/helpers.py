"""Small helpers for the CloneSet integration scenarios (upstream's ``CloneSetTester``).

Every CloneSet here selects its pods with ``app: <name>``, so several CloneSets can share a
namespace; pods are listed by that label and, unless asked, terminating pods are left out
(upstream's ``ListPodsForCloneSet`` filters on ``IsPodActive`` the same way).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
from typing import Any

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, CONTROLLER_REVISIONS, EVENTS, PODS, PVCS
from tests.support.wait import eventually, wait_observed

JSON = dict[str, Any]
IMAGE = "registry.example.com/nginx:1.25"
NEW_IMAGE = "registry.example.com/nginx:1.26"
INSTANCE_ID = "apps.kruise.io/cloneset-instance-id"
LIFECYCLE = "lifecycle.apps.kruise.io/state"
SPECIFIED_DELETE = "apps.kruise.io/specified-delete"
REVISION = "controller-revision-hash"


def new_cloneset(
    name: str,
    replicas: int,
    *,
    strategy: JSON | None = None,
    image: str = IMAGE,
    template_labels: JSON | None = None,
    **spec: Any,
) -> JSON:
    """A CloneSet like upstream's ``NewCloneSet``: one ``nginx`` container, selector ``app=<name>``."""
    labels = {"app": name, **(template_labels or {})}
    body: JSON = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "nginx", "image": image}]},
            },
            "updateStrategy": dict(strategy or {}),
            **spec,
        },
    }
    return body


async def create(kube: KubeClient, namespace: str, body: JSON) -> JSON:
    return await kube.create(CLONESETS, copy.deepcopy(body), namespace)


async def get(kube: KubeClient, namespace: str, name: str) -> JSON:
    return await kube.get(CLONESETS, name, namespace)


async def patch_spec(kube: KubeClient, namespace: str, name: str, spec: JSON) -> JSON:
    """Merge-patch ``spec`` (a list such as ``containers`` is replaced whole)."""
    return await kube.patch(CLONESETS, name, {"spec": spec}, namespace, patch_type="merge")


async def set_image(kube: KubeClient, namespace: str, name: str, image: str, **container: Any) -> JSON:
    """Replace the template's single container with ``nginx`` running ``image``."""
    spec = {"template": {"spec": {"containers": [{"name": "nginx", "image": image, **container}]}}}
    return await patch_spec(kube, namespace, name, spec)


async def pods(
    kube: KubeClient, namespace: str, name: str, *, include_terminating: bool = False
) -> list[JSON]:
    items = (await kube.list(PODS, namespace, label_selector=f"app={name}"))["items"]
    if include_terminating:
        return list(items)
    return [
        p
        for p in items
        if not p["metadata"].get("deletionTimestamp")
        and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
    ]


async def pvcs(kube: KubeClient, namespace: str) -> list[JSON]:
    items = (await kube.list(PVCS, namespace))["items"]
    return [c for c in items if not c["metadata"].get("deletionTimestamp")]


async def revisions(kube: KubeClient, namespace: str, name: str) -> list[JSON]:
    items = (await kube.list(CONTROLLER_REVISIONS, namespace, label_selector=f"app={name}"))["items"]
    return sorted(items, key=lambda r: int(r.get("revision") or 0))


async def events(kube: KubeClient, namespace: str, name: str) -> list[JSON]:
    items = (await kube.list(EVENTS, namespace))["items"]
    return [
        e
        for e in items
        if (e.get("involvedObject") or {}).get("kind") == "CloneSet"
        and (e.get("involvedObject") or {}).get("name") == name
    ]


def ready(pod: JSON) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (pod.get("status") or {}).get("conditions") or []
    )


def ready_time(pod: JSON) -> str:
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready" and cond.get("status") == "True":
            return str(cond.get("lastTransitionTime"))
    raise AssertionError(f"pod {pod['metadata']['name']} is not ready")


def names(items: list[JSON]) -> set[str]:
    return {i["metadata"]["name"] for i in items}


def label(obj: JSON, key: str) -> str | None:
    value = (obj["metadata"].get("labels") or {}).get(key)
    return None if value is None else str(value)


def annotation(obj: JSON, key: str) -> str | None:
    value = (obj["metadata"].get("annotations") or {}).get(key)
    return None if value is None else str(value)


def image_of(pod: JSON, container: str = "nginx") -> str:
    return str(next(c["image"] for c in pod["spec"]["containers"] if c["name"] == container))


async def wait_status(
    kube: KubeClient, namespace: str, name: str, *, timeout: float = 30, **want: Any
) -> JSON:
    """Wait until the CloneSet's status (for its current generation) has every ``want`` field."""
    return await wait_observed(
        lambda: get(kube, namespace, name), timeout=timeout, what=f"CloneSet {name}", **want
    )


async def wait_pods(
    kube: KubeClient, namespace: str, name: str, count: int, *, timeout: float = 30, all_ready: bool = True
) -> list[JSON]:
    """Wait until exactly ``count`` active pods exist (and are all Ready unless told otherwise)."""

    async def probe() -> list[JSON] | None:
        found = await pods(kube, namespace, name)
        if len(found) != count or (all_ready and not all(ready(p) for p in found)):
            return None
        return found or [{}]

    found = await eventually(probe, timeout=timeout, what=f"{count} pods of {name}")
    return [p for p in found if p]


async def wait_gone(kube: KubeClient, namespace: str, pod_name: str, *, timeout: float = 30) -> None:
    async def probe() -> bool:
        return await kube.get_or_none(PODS, pod_name, namespace) is None

    await eventually(probe, timeout=timeout, what=f"pod {pod_name} deleted")


async def consistently(probe: Any, *, seconds: float, interval: float = 0.5, what: str = "condition") -> None:
    """Assert ``await probe()`` stays truthy for ``seconds`` (gomega's ``Consistently``)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while loop.time() < deadline:
        value = await probe()
        assert value, f"{what} stopped holding: {value!r}"
        await asyncio.sleep(interval)


async def patch_pod(kube: KubeClient, namespace: str, pod_name: str, patch: JSON) -> JSON:
    return await kube.patch(PODS, pod_name, patch, namespace, patch_type="strategic")


def counts_as_running(pod: JSON) -> bool:
    """Not terminating and not finished: a pod that holds a replica slot."""
    return not pod["metadata"].get("deletionTimestamp") and (pod.get("status") or {}).get("phase") not in (
        "Succeeded",
        "Failed",
    )


class PodWatcher:
    """Watch a CloneSet's pods and record the most non-terminating pods ever seen at once.

    Started before the test changes anything: a list gives the starting set and resourceVersion,
    then a watch applies every ADDED/MODIFIED/DELETED event in order, so no intermediate state is
    missed (polling could skip a short-lived surge).
    """

    def __init__(self, kube: KubeClient, namespace: str, name: str) -> None:
        self.kube, self.namespace, self.selector = kube, namespace, f"app={name}"
        self.pods: dict[str, JSON] = {}
        self.max_running = 0
        self.max_at: list[str] = []
        self.events = 0
        self._task: asyncio.Task[None] | None = None

    def running(self) -> list[str]:
        return sorted(n for n, p in self.pods.items() if counts_as_running(p))

    def _record(self) -> None:
        current = self.running()
        if len(current) > self.max_running:
            self.max_running, self.max_at = len(current), current

    async def start(self) -> None:
        listed = await self.kube.list(PODS, self.namespace, label_selector=self.selector)
        self.pods = {p["metadata"]["name"]: p for p in listed["items"]}
        self._record()
        self._task = asyncio.create_task(self._run(str(listed["metadata"]["resourceVersion"])))

    async def _run(self, resource_version: str) -> None:
        while True:
            async for event in self.kube.watch(
                PODS, self.namespace, resource_version=resource_version, label_selector=self.selector
            ):
                obj = event.object
                resource_version = str(obj["metadata"].get("resourceVersion") or resource_version)
                if event.type == "BOOKMARK":
                    continue
                self.events += 1
                if event.type == "DELETED":
                    self.pods.pop(obj["metadata"]["name"], None)
                else:
                    self.pods[obj["metadata"]["name"]] = obj
                self._record()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
