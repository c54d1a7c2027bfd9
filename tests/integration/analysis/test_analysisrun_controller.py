"""AnalysisRuns in the real API server, measured by the controller running in this process.

The runs query the real Prometheus of the ``prometheus`` fixture (``good`` 0% errors, ``bad``
50%) and the local ``endpoint``; assertions are on the stored status and Events.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kruise.analysis.controller import AnalysisRunController, ApiRunSource, CachedRunSource, RunSource
from kruise.analysis.resources import ANALYSIS_RUNS
from kruise.core.events import EventRecorder
from kruise.core.informer import Informer
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import EVENTS, SECRETS
from kruise.core.runtime import Runtime
from kruise.core.workqueue import WorkQueue
from tests.integration.analysis.conftest import Endpoint
from tests.support.prometheus import PrometheusStack
from tests.support.wait import eventually

JSON = dict[str, Any]
DONE = ("Successful", "Failed", "Error", "Inconclusive")
ERROR_RATIO = (
    'sum(rate(http_requests_total{revision="{{args.revision}}",code=~"5.."}[5s])) / '
    'sum(rate(http_requests_total{revision="{{args.revision}}"}[5s]))'
)


def prom_metric(prometheus: PrometheusStack, name: str = "error-rate", **fields: Any) -> JSON:
    return {
        "name": name,
        "successCondition": "result[0] <= 0.05",
        "provider": {"prometheus": {"address": prometheus.address, "query": ERROR_RATIO}},
        **fields,
    }


def analysis_run(name: str, metrics: list[JSON], args: list[JSON] | None = None, **spec: Any) -> JSON:
    return {
        "apiVersion": "rollouts.kruise.io/v1alpha1",
        "kind": "AnalysisRun",
        "metadata": {"name": name},
        "spec": {"metrics": metrics, "args": args or [{"name": "revision", "value": "good"}], **spec},
    }


@contextlib.asynccontextmanager
async def controller_running(kube: KubeClient, source: RunSource | None = None) -> AsyncIterator[WorkQueue]:
    """The controller's reconcile behind a work queue the test feeds by hand (no watch)."""
    recorder = EventRecorder(kube, "analysisrun-controller")
    controller = AnalysisRunController(kube, recorder, source or ApiRunSource(kube))
    queue = WorkQueue()
    task = asyncio.create_task(queue.run(controller.reconcile, workers=2, name=controller.name))
    try:
        yield queue
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await recorder.flush()


async def until_done(kube: KubeClient, namespace: str, name: str, timeout: float = 40) -> JSON:
    async def probe() -> JSON | None:
        run = await kube.get(ANALYSIS_RUNS, name, namespace)
        return run if (run.get("status") or {}).get("phase") in DONE else None

    return await eventually(probe, timeout=timeout, what=f"AnalysisRun {name} to complete")


async def reasons(kube: KubeClient, namespace: str, name: str) -> list[str]:
    events = (await kube.list(EVENTS, namespace, field_selector=f"involvedObject.name={name}"))["items"]
    return sorted(e["reason"] for e in events)  # timestamps have second resolution: no order


async def run_to_completion(kube: KubeClient, namespace: str, body: JSON) -> JSON:
    await kube.create(ANALYSIS_RUNS, body, namespace)
    name = body["metadata"]["name"]
    async with controller_running(kube) as controller:
        controller.add(f"{namespace}/{name}")
        run = await until_done(kube, namespace, name)
        # the terminal event follows the status write in the same reconcile: let that reconcile
        # finish before the controller is stopped (a poll can see the status first)
        final = f"AnalysisRun{run['status']['phase']}"

        async def terminal_event() -> bool:
            return final in await reasons(kube, namespace, name)

        await eventually(terminal_event, timeout=10, what=f"event {final}")
        return run


async def test_a_run_succeeds_after_all_its_measurements(
    kube: KubeClient, namespace: str, prometheus: PrometheusStack
) -> None:
    body = analysis_run("success", [prom_metric(prometheus, interval="1s", count=3)])
    run = await run_to_completion(kube, namespace, body)
    status = run["status"]
    assert status["phase"] == "Successful", status
    (result,) = status["metricResults"]
    assert (result["phase"], result["count"], result["successful"]) == ("Successful", 3, 3)
    assert [m["value"] for m in result["measurements"]] == ["[0]", "[0]", "[0]"]
    assert all(
        m["phase"] == "Successful" and m["startedAt"] and m["finishedAt"] for m in result["measurements"]
    )
    assert status["startedAt"] and status["completedAt"]
    assert status["runSummary"] == {"count": 1, "successful": 1, "failed": 0, "inconclusive": 0, "error": 0}
    assert await reasons(kube, namespace, "success") == [
        "AnalysisRunRunning",
        "AnalysisRunSuccessful",
        "MetricSuccessful",
    ]


async def test_a_run_fails_once_failures_exceed_the_limit(
    kube: KubeClient, namespace: str, prometheus: PrometheusStack
) -> None:
    body = analysis_run(
        "failure",
        [prom_metric(prometheus, interval="1s", count=5, failureLimit=1)],
        [{"name": "revision", "value": "bad"}],
    )
    run = await run_to_completion(kube, namespace, body)
    status = run["status"]
    assert status["phase"] == "Failed"
    assert status["message"] == 'Metric "error-rate" assessed Failed due to failed (2) > failureLimit (1)'
    (result,) = status["metricResults"]
    assert (result["failed"], result["count"]) == (2, 2)
    assert "AnalysisRunFailed" in await reasons(kube, namespace, "failure")


async def test_secrets_dry_run_and_retention(
    kube: KubeClient, namespace: str, prometheus: PrometheusStack, endpoint: Endpoint
) -> None:
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "analysis"},
        "data": {
            "token": base64.b64encode(b"s3cret").decode(),
            "revision": base64.b64encode(b"good").decode(),
        },
    }
    await kube.create(SECRETS, secret, namespace)
    web = {
        "name": "web",
        "successCondition": "result == true",
        "provider": {
            "web": {
                "url": f"{endpoint.url}/secure",
                "headers": [{"key": "Authorization", "value": "Bearer {{args.token}}"}],
                "jsonPath": "{$.data.ok}",
            }
        },
    }
    dry = prom_metric(prometheus, "dry")
    dry["provider"]["prometheus"]["query"] = ERROR_RATIO.replace("args.revision", "args.bad")
    body = analysis_run(
        "secrets",
        [prom_metric(prometheus, interval="1s", count=3), web, dry],
        [
            {"name": "revision", "valueFrom": {"secretKeyRef": {"name": "analysis", "key": "revision"}}},
            {"name": "token", "valueFrom": {"secretKeyRef": {"name": "analysis", "key": "token"}}},
            {"name": "bad", "value": "bad"},
        ],
        dryRun=[{"metricName": "^dry$"}],
        measurementRetention=[{"metricName": "error-rate", "limit": 1}],
    )
    run = await run_to_completion(kube, namespace, body)
    status = run["status"]
    assert status["phase"] == "Successful", status
    results = {r["name"]: r for r in status["metricResults"]}
    assert (results["error-rate"]["count"], len(results["error-rate"]["measurements"])) == (3, 1)
    assert results["web"]["phase"] == "Successful"
    assert results["dry"]["phase"] == "Failed" and results["dry"]["dryRun"] is True
    assert status["dryRunSummary"]["failed"] == 1


async def test_an_invalid_run_errors(kube: KubeClient, namespace: str, prometheus: PrometheusStack) -> None:
    run = await run_to_completion(
        kube, namespace, analysis_run("invalid", [prom_metric(prometheus, count=3)])
    )
    assert run["status"]["phase"] == "Error"
    assert (
        run["status"]["message"]
        == "Analysis spec invalid: metrics[0]: interval must be specified when count > 1"
    )
    missing = await run_to_completion(
        kube,
        namespace,
        analysis_run(
            "no-secret",
            [prom_metric(prometheus)],
            [{"name": "revision", "valueFrom": {"secretKeyRef": {"name": "nope", "key": "k"}}}],
        ),
    )
    assert missing["status"]["message"] == 'Unable to resolve metric arguments: secrets "nope" not found'


async def test_terminate_ends_an_indefinite_run(
    kube: KubeClient, namespace: str, prometheus: PrometheusStack
) -> None:
    await kube.create(
        ANALYSIS_RUNS, analysis_run("forever", [prom_metric(prometheus, interval="1s")]), namespace
    )
    async with controller_running(kube) as controller:
        controller.add(f"{namespace}/forever")

        async def measured_twice() -> bool:
            run = await kube.get(ANALYSIS_RUNS, "forever", namespace)
            results = (run.get("status") or {}).get("metricResults") or []
            return bool(results) and results[0].get("count", 0) >= 2

        await eventually(measured_twice, timeout=20, what="two measurements")
        await kube.patch(ANALYSIS_RUNS, "forever", {"spec": {"terminate": True}}, namespace)
        controller.add(f"{namespace}/forever")
        run = await until_done(kube, namespace, "forever")
    assert (run["status"]["phase"], run["status"]["message"]) == ("Successful", "Run Terminated")


@pytest.fixture
async def wired_controller(kube: KubeClient, namespace: str) -> AsyncIterator[None]:
    """The controller as the manager wires it (its spec on a runtime, runs from the informer
    cache), with informers limited to this test's namespace."""
    runtime = Runtime(kube, informer_factory=lambda k, res: Informer(k, res, namespace=namespace))
    view = runtime.cache(AnalysisRunController.name)
    recorder = EventRecorder(kube, "analysisrun-controller")
    controller = AnalysisRunController(kube, recorder, CachedRunSource(view))
    runtime.add(controller.spec(), controller.reconcile, view)
    runtime.start_informers()
    task = asyncio.create_task(runtime.run_controllers())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await runtime.stop()
        await recorder.flush()


@pytest.mark.usefixtures("wired_controller")
async def test_the_wired_controller_drives_runs_from_its_cache(
    kube: KubeClient, namespace: str, prometheus: PrometheusStack
) -> None:
    await kube.create(
        ANALYSIS_RUNS, analysis_run("via-cache", [prom_metric(prometheus, interval="1s", count=2)]), namespace
    )
    run = await until_done(kube, namespace, "via-cache")
    assert run["status"]["phase"] == "Successful"
    assert run["status"]["metricResults"][0]["count"] == 2
    assert not (run["metadata"].get("annotations") or {}), "the controller writes nothing onto runs' metadata"
    assert not run["metadata"].get("finalizers")
