"""KubeClient's client-go metrics against the real API server (and a closed port)."""

from __future__ import annotations

import asyncio
import contextlib
from urllib.parse import urlsplit

import pytest
from prometheus_client import REGISTRY

from kruise.core.errors import NotFoundError, TransientError
from kruise.core.kube import KubeClient
from kruise.core.kube.config import KubeConfig
from kruise.core.kube.recorded import recorded_writes
from kruise.core.kube.resources import CONFIGMAPS, object_key
from kruise.core.localcluster.cluster import free_port
from tests.support.cluster import TestCluster


def requests(host: str, method: str, code: str) -> float:
    labels = {"host": host, "method": method, "code": code}
    return REGISTRY.get_sample_value("rest_client_requests_total", labels) or 0.0


def durations(host: str, verb: str) -> float:
    labels = {"host": host, "verb": verb}
    return REGISTRY.get_sample_value("rest_client_request_duration_seconds_count", labels) or 0.0


async def test_requests_and_watches_are_counted_by_code_method_and_host(
    cluster: TestCluster, namespace: str
) -> None:
    async with await KubeClient.from_kubeconfig(cluster.kubeconfig) as kube:
        host = urlsplit(kube.config.server).netloc
        before = {
            "get404": requests(host, "GET", "404"),
            "post201": requests(host, "POST", "201"),
            "get200": requests(host, "GET", "200"),
            "get_seconds": durations(host, "GET"),
            "post_seconds": durations(host, "POST"),
        }
        with pytest.raises(NotFoundError):
            await kube.get(CONFIGMAPS, "absent", namespace)
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "m"}, "data": {"a": "b"}}
        await kube.create(CONFIGMAPS, body, namespace)
        await kube.list(CONFIGMAPS, namespace)
        stream = kube.watch(CONFIGMAPS, namespace, timeout_seconds=1)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(10):
                async for _ in stream:
                    pass
        assert requests(host, "GET", "404") == before["get404"] + 1
        assert requests(host, "POST", "201") == before["post201"] + 1
        assert requests(host, "GET", "200") == before["get200"] + 2, "the list and the watch"
        assert durations(host, "GET") == before["get_seconds"] + 2, "the 404 and the list, not the watch"
        assert durations(host, "POST") == before["post_seconds"] + 1


async def test_a_request_without_an_answer_counts_as_error() -> None:
    port = free_port()
    config = KubeConfig(server=f"http://127.0.0.1:{port}", ssl_context=False, qps=0)
    host = f"127.0.0.1:{port}"
    async with KubeClient(config) as kube:
        with pytest.raises(TransientError):
            await kube.get(CONFIGMAPS, "x", "default")
        with pytest.raises(TransientError):
            async for _ in kube.watch(CONFIGMAPS, "default"):
                pass
    assert requests(host, "GET", "<error>") == 2
    assert durations(host, "GET") == 1


async def test_recorded_writes_hold_the_answers_to_this_tasks_stores_only(
    cluster: TestCluster, namespace: str
) -> None:
    """recorded_writes: the object as our write stored it, whatever happens to it afterwards."""
    async with await KubeClient.from_kubeconfig(cluster.kubeconfig) as kube:
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "r"}, "data": {"a": "1"}}
        outside = asyncio.Event()

        async def other_task_writes() -> None:  # started before the block: not recorded
            await outside.wait()
            await kube.patch(CONFIGMAPS, "r", {"data": {"a": "3"}}, namespace)

        other = asyncio.create_task(other_task_writes())
        with recorded_writes() as stored:
            await kube.create(CONFIGMAPS, body, namespace)
            patched = await kube.patch(CONFIGMAPS, "r", {"data": {"a": "2"}}, namespace)
            await kube.patch(CONFIGMAPS, "r", {"data": {"a": "9"}}, namespace, dry_run=True)
            outside.set()
            await other
            await kube.get(CONFIGMAPS, "r", namespace)
        after = await kube.patch(CONFIGMAPS, "r", {"data": {"a": "4"}}, namespace)
        key = object_key("ConfigMap", namespace, "r")
        assert list(stored) == [key]
        assert stored[key]["data"] == {"a": "2"} and stored[key] == patched
        assert after["data"] == {"a": "4"} and stored[key]["data"] == {"a": "2"}
