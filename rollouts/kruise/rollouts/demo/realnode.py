"""The demo's last act: an in-place update on a real kubelet.

A CloneSet ``shop/web-real`` of three pods runs on the cluster's real nodes (kubelet +
containerd each, ``kruise cluster up --real-nodes``); its image goes from ``kruise.local/busybox:v1``
to ``:v2`` and the table shows what OpenKruise promises and the kubelet really did: the same
pods (UID, IP), each container restarted once in its sandbox, a new container and image ID.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.table import Table

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, PODS
from kruise.core.localcluster.realnode import busybox, pod_placement

NAME = "web-real"
REPLICAS = 3
JSON = dict[str, Any]
Crictl = Callable[..., str]


def cloneset(
    name: str = NAME,
    replicas: int = REPLICAS,
    strategy: str = "InPlaceIfPossible",
    max_unavailable: int | str = 1,
) -> JSON:
    """A CloneSet of busybox v1 pods on the real node (container ``web``, Ready once it serves
    HTTP on 8080, probed every second); also what ``bench/realnode.py`` updates."""
    container = {
        "name": "web",
        "image": busybox("v1"),
        "readinessProbe": {"httpGet": {"path": "/", "port": 8080}, "periodSeconds": 1, "failureThreshold": 1},
    }
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {**pod_placement(), "terminationGracePeriodSeconds": 5, "containers": [container]},
            },
            "updateStrategy": {"type": strategy, "maxUnavailable": max_unavailable},
        },
    }


async def _settled(kube: KubeClient, namespace: str, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        cs = await kube.get(CLONESETS, NAME, namespace)
        st = cs.get("status") or {}
        if (
            st.get("observedGeneration") == cs["metadata"]["generation"]
            and st.get("updatedReadyReplicas") == REPLICAS
            and st.get("readyReplicas") == REPLICAS
        ):
            return
        await asyncio.sleep(0.5)
    raise TimeoutError(f"CloneSet {namespace}/{NAME} did not settle within {timeout:.0f}s")


def _web(pod: JSON) -> JSON:
    return dict(((pod.get("status") or {}).get("containerStatuses") or [{}])[0])


async def _pods(kube: KubeClient, namespace: str) -> dict[str, JSON]:
    items = (await kube.list(PODS, namespace, label_selector=f"app={NAME}"))["items"]
    return {p["metadata"]["name"]: p for p in items if not p["metadata"].get("deletionTimestamp")}


async def inplace_on_real_node(kube: KubeClient, namespace: str, crictl: Crictl, console: Console) -> bool:
    """Run the act in ``namespace`` on the real nodes; True when every pod was updated in place.
    ``crictl(node, *args)`` runs crictl against a real node's containerd."""
    await kube.create(CLONESETS, cloneset(), namespace)
    await _settled(kube, namespace)
    before = await _pods(kube, namespace)
    start = time.monotonic()
    patch = [{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": busybox("v2")}]
    await kube.patch(CLONESETS, NAME, patch, namespace, patch_type="json")
    await asyncio.sleep(1)
    await _settled(kube, namespace)
    seconds = time.monotonic() - start
    after = await _pods(kube, namespace)
    nodes = ", ".join(sorted({str(p["spec"].get("nodeName")) for p in after.values()}))
    table = Table(
        title=f"in place on {nodes}: {busybox('v1')} -> v2 in {seconds:.1f}s (kubelet + containerd)"
    )
    for col in ("pod", "same UID / IP", "restarts", "container ID", "image ID", "attempts in its sandbox"):
        table.add_column(col)
    ok = after.keys() == before.keys()
    for name, pod in sorted(after.items()):
        old = before.get(name, {})
        same = pod["metadata"]["uid"] == old.get("metadata", {}).get("uid") and pod["status"].get(
            "podIP"
        ) == old.get("status", {}).get("podIP")
        web, old_web = _web(pod), _web(old) if old else {}
        attempts = crictl(
            pod["spec"]["nodeName"],
            "ps", "--all", "--quiet", "--label", f"io.kubernetes.pod.uid={pod['metadata']['uid']}",
        )  # fmt: skip
        count = len(attempts.split())
        ok = ok and same and web.get("restartCount") == 1 and count == 2
        ok = (
            ok
            and web.get("containerID") != old_web.get("containerID")
            and web.get("imageID") != old_web.get("imageID")
        )
        table.add_row(
            name,
            "yes" if same else "NO",
            str(web.get("restartCount")),
            f"{_short(old_web.get('containerID'))} -> {_short(web.get('containerID'))}",
            f"{_short(old_web.get('imageID'))} -> {_short(web.get('imageID'))}",
            str(count),
        )
    console.print(table)
    return ok


async def run(kubeconfig: str, namespace: str, crictl: Crictl, console: Console) -> bool:
    """:func:`inplace_on_real_node` with its own client."""
    kube = await KubeClient.from_kubeconfig(kubeconfig)
    try:
        return await inplace_on_real_node(kube, namespace, crictl, console)
    finally:
        await kube.close()


def _short(ref: object) -> str:
    text = str(ref or "")
    return text.rsplit("/", 1)[-1].rsplit(":", 1)[-1][:12]
