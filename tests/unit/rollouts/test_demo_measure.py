"""The comparison act's numbers (:mod:`kruise.rollouts.demo.measure`) and its HTTP client."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Callable
from typing import Any

import pytest
from aiohttp import web

from kruise.rollouts.demo.measure import (
    PodSample,
    Pull,
    VariantResult,
    kubelet_pulls,
    longest_unready,
    pod_alive,
    pod_ready,
    pulls_by_batch,
    ready_endpoints,
    row,
)
from kruise.rollouts.demo.probes import Client

JSON = dict[str, Any]
IMAGE = "kruise.local/compare-rollout-abc123:v2"


def pod(name: str, ip: str = "", ready: bool = True, deleting: bool = False) -> JSON:
    meta: JSON = {"name": name}
    if deleting:
        meta["deletionTimestamp"] = "2026-12-04T07:00:00Z"
    status: JSON = {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}
    if ip:
        status["podIP"] = ip
    return {"metadata": meta, "status": status}


def event(reason: str, pod: str, message: str, node: str = "real-node-1", **extra: Any) -> JSON:
    return {
        "reason": reason,
        "message": message,
        "involvedObject": {"kind": "Pod", "name": pod},
        "source": {"component": "kubelet", "host": node},
        **extra,
    }


# ------------------------------------------------------------------------------------ pods
def test_ready_follows_the_ready_condition_and_a_pod_without_one_is_not_ready() -> None:
    assert pod_ready(pod("a"))
    assert not pod_ready(pod("a", ready=False))
    assert not pod_ready({"metadata": {"name": "a"}, "status": {}})
    assert pod_alive(pod("a")) and not pod_alive(pod("a", deleting=True))


def test_ready_endpoints_are_the_ready_alive_pods_with_an_ip() -> None:
    pods = [
        pod("a", "10.201.1.2"),
        pod("b", "10.201.2.2", ready=False),
        pod("c", "10.201.3.2", deleting=True),
        pod("d"),
        pod("e", "10.201.1.3"),
    ]
    assert ready_endpoints(pods) == ["10.201.1.2", "10.201.1.3"]


# ------------------------------------------------------------------------------------ unready
def test_longest_unready_is_the_longest_span_of_one_pod() -> None:
    samples = [
        PodSample(0.0, "a", True, True),
        PodSample(1.0, "a", True, False),  # in-place restart: 1.0 .. 4.5
        PodSample(4.5, "a", True, True),
        PodSample(2.0, "b", True, False),  # 2.0 .. 3.0
        PodSample(3.0, "b", True, True),
    ]
    assert longest_unready(samples, 0.0, 10.0) == pytest.approx(3.5)


def test_a_new_pod_counts_from_creation_and_a_terminating_one_not_at_all() -> None:
    samples = [
        PodSample(0.5, "old", True, True),
        PodSample(2.0, "old", False, False),  # terminating: leaving, not unready
        PodSample(9.0, "old", False, False),
        PodSample(1.0, "new", True, False),  # created unready, pulls, Ready at 3.0
        PodSample(3.0, "new", True, True),
    ]
    assert longest_unready(samples, 0.0, 10.0) == pytest.approx(2.0)


def test_spans_are_clipped_to_the_window_and_an_open_one_runs_to_its_end() -> None:
    samples = [
        PodSample(-5.0, "a", True, False),  # unready since before the window
        PodSample(1.0, "a", True, True),
        PodSample(8.0, "b", True, False),  # still unready when the window closes
    ]
    assert longest_unready(samples, 0.0, 10.0) == pytest.approx(2.0)
    assert longest_unready(samples, 0.0, 0.5) == pytest.approx(0.5)
    assert longest_unready([], 0.0, 1.0) == 0.0


def test_samples_out_of_order_are_sorted_by_time() -> None:
    samples = [PodSample(4.0, "a", True, True), PodSample(1.0, "a", True, False)]
    assert longest_unready(samples, 0.0, 5.0) == pytest.approx(3.0)


def test_a_window_that_ends_before_it_starts_is_refused() -> None:
    with pytest.raises(ValueError, match="before start"):
        longest_unready([], 2.0, 1.0)


# ------------------------------------------------------------------------------------ pulls
def test_only_the_kubelets_pulling_events_of_the_image_count() -> None:
    events = [
        event("Pulling", "web-a", f'Pulling image "{IMAGE}"', "real-node-1"),
        event("Pulled", "web-a", f'Successfully pulled image "{IMAGE}" in 2.1s'),
        event("Pulled", "web-b", f'Container image "{IMAGE}" already present on machine and can be accessed'),
        event("Pulling", "web-c", 'Pulling image "kruise.local/compare-web:v1"'),
        event("Pulling", "web-d", f'Pulling image "{IMAGE}-other"'),
        {**event("Pulling", "web-e", f'Pulling image "{IMAGE}"'), "source": {"component": "kruise-daemon"}},
        event("Pulling", "web-f", f'Pulling image "{IMAGE}"', "real-node-3", count=2),
    ]
    assert kubelet_pulls(events, IMAGE) == [
        Pull("web-a", "real-node-1"),
        Pull("web-f", "real-node-3"),
        Pull("web-f", "real-node-3"),
    ]


def test_events_of_the_events_api_name_their_node_in_reporting_instance() -> None:
    newer = {
        "reason": "Pulling",
        "message": f'Pulling image "{IMAGE}"',
        "involvedObject": {"name": "web-a"},
        "reportingComponent": "kubelet",
        "reportingInstance": "real-node-2",
    }
    assert kubelet_pulls([newer], IMAGE) == [Pull("web-a", "real-node-2")]


def test_pulls_are_counted_per_batch_and_pods_of_no_batch_are_left_out() -> None:
    pulls = [Pull("web-a", "n1"), Pull("web-c", "n3"), Pull("web-x", "n1")]
    assert pulls_by_batch(pulls, [{"web-a"}, {"web-b"}, {"web-c"}]) == [1, 0, 1]
    assert pulls_by_batch([], [{"web-a"}]) == [0]


# ------------------------------------------------------------------------------------ the table
def test_a_row_shows_the_measurements_and_a_rollout_its_batches() -> None:
    result = VariantResult(
        "Rollout",
        completed=True,
        seconds=23.44,
        longest_unready=5.36,
        pulls=[Pull("web-a", "n1")],
        batches=[1, 0, 0],
        sent=801,
        failed=2,
        before="v2 on no node",
    )
    assert row(result) == ["Rollout", "23.4s", "5.4s", "1 (per batch 1 / 0 / 0)", "2 / 801", "v2 on no node"]


def test_a_variant_that_did_not_complete_says_so() -> None:
    result = VariantResult("Deployment", note="compare-deployment: 3 pods Ready on v2 within 180s")
    assert row(result)[:2] == ["Deployment", "DID NOT COMPLETE"]
    assert row(result)[-1] == result.note


# ------------------------------------------------------------------------------------ the client
def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_the_client_counts_answers_refusals_and_no_endpoint() -> None:
    async def hello(_: web.Request) -> web.Response:
        return web.Response(text="busybox v2\n")

    app = web.Application()
    app.router.add_get("/", hello)
    runner = web.AppRunner(app)
    await runner.setup()
    port = _free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    endpoints: list[str] = ["127.0.0.1"]
    # a generous timeout: on a loaded machine a slow answer must not count as a failure here
    client = Client(lambda: list(endpoints), workers=1, every=0.01, port=port, timeout=30.0)
    task = asyncio.create_task(client.run())

    async def until(done: Callable[[], bool]) -> None:
        deadline = time.monotonic() + 75  # longer than the client's timeout: a cut request may wait it out
        while time.monotonic() < deadline:
            if done():
                return
            await asyncio.sleep(0.01)
        raise AssertionError(f"client: sent {client.sent}, failed {client.failed}: {client.reasons}")

    try:
        await until(lambda: client.sent >= 5)
        assert client.failed == 0  # the server answered 200
        await runner.cleanup()  # nothing listens any more: connections are refused
        await until(lambda: client.reasons.get("ConnectError", 0) >= 3)
        endpoints.clear()
        await until(lambda: client.reasons.get("no ready endpoint", 0) >= 3)
        # the one request in flight when the server went may end another way (it was accepted
        # and never answered): at most one such failure, and only a transport error
        cut = {r: n for r, n in client.reasons.items() if r not in ("ConnectError", "no ready endpoint")}
        assert set(cut) <= {"ReadTimeout", "ReadError", "RemoteProtocolError"} and sum(cut.values()) <= 1, cut
        assert client.failed == sum(client.reasons.values())
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await runner.cleanup()
