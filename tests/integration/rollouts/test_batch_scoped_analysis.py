"""Batch-scoped analysis (issue 17, item 3): ``valueFrom.releaseValue`` on a step's analysis args.

A real Prometheus scrapes one target per pod of the namespace and relabels each pod's
``rollouts.kruise.io/rollout-id`` and ``rollouts.kruise.io/rollout-batch-id`` labels into
``rollout_id``/``batch_id`` target labels, with the relabelling a cluster's Prometheus applies to
its Kubernetes pod discovery (Debian's build lacks that discovery: an HTTP discovery endpoint here
serves the same ``__meta_kubernetes_pod_*`` labels for the pods the API server lists). KWOK pods
serve nothing, so every pod target scrapes the test exporter.
Each step's AnalysisRun gets the release's rollout-id and its own batch id, and its PromQL query
counts the pods of exactly that batch: 1 at step 1, 2 at step 2 (not the 3 upgraded pods so far,
not the 5 of the workload).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web

from kruise.analysis.resources import ANALYSIS_RUNS, ANALYSIS_TEMPLATES
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import PODS
from tests.integration.rollouts import helpers as h
from tests.support.prometheus import (
    PrometheusStack,
    free_port,
    pod_scrape_config,
    pod_targets,
    prometheus_binary,
)
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")

ID, BATCH = "rollouts.kruise.io/rollout-id", "rollouts.kruise.io/rollout-batch-id"
RELEASE = "checkout-2024-06"
JOB = "batch-pods"


@pytest.fixture
async def pod_prometheus(kube: KubeClient, namespace: str) -> AsyncIterator[PrometheusStack]:
    """Prometheus scraping the namespace's pods, discovered from the API server every second."""
    binary = prometheus_binary()

    async def discovery(_: web.Request) -> web.Response:
        return web.json_response(pod_targets((await kube.list(PODS, namespace))["items"]))

    app = web.Application()
    app.router.add_get("/sd", discovery)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    scrape = pod_scrape_config(JOB, f"http://127.0.0.1:{port}/sd", {"rollout_id": ID, "batch_id": BATCH})
    stack = PrometheusStack(prometheus_bin=binary, extra_scrape_configs=scrape)
    try:
        await asyncio.to_thread(stack.start)
        yield stack
    finally:
        await asyncio.to_thread(stack.stop)
        await runner.cleanup()


def batch_template(address: str) -> dict[str, Any]:
    """How many pods of this release's batch report series (exactly ``expected``)."""
    selector = f'job="{JOB}",rollout_id="{{{{args.rollout-id}}}}",batch_id="{{{{args.batch-id}}}}"'
    return {
        "apiVersion": "rollouts.kruise.io/v1alpha1",
        "kind": "AnalysisTemplate",
        "metadata": {"name": "batch-pods"},
        "spec": {
            "args": [{"name": "rollout-id"}, {"name": "batch-id"}, {"name": "expected"}],
            "metrics": [
                {
                    "name": "batch-pods",
                    # Prometheus applies discovered target changes at most every 5 s
                    "initialDelay": "10s",
                    "interval": "1s",
                    "count": 2,
                    "failureLimit": 0,
                    "successCondition": "len(result) == 1 && result[0] == {{args.expected}}",
                    "provider": {
                        "prometheus": {
                            "address": address,
                            "query": f"count(count by (pod) (http_requests_total{{{selector}}}))",
                        }
                    },
                }
            ],
        },
    }


def gate(expected: int) -> dict[str, Any]:
    return {
        "templates": [{"templateName": "batch-pods"}],
        "args": [
            {"name": "rollout-id", "valueFrom": {"releaseValue": "RolloutID"}},
            {"name": "batch-id", "valueFrom": {"releaseValue": "BatchID"}},
            {"name": "expected", "value": str(expected)},
        ],
    }


STEPS: list[dict[str, Any]] = [
    {"replicas": 1, "analysis": gate(1), "pause": {"duration": 0}},
    {"replicas": 3, "analysis": gate(2), "pause": {"duration": 0}},
    {"replicas": "100%", "pause": {"duration": 0}},
]


async def labelled_pods(kube: KubeClient, namespace: str, batch: str) -> set[str]:
    selector = f"app=web,{ID}={RELEASE},{BATCH}={batch}"
    pods = (await kube.list(PODS, namespace, label_selector=selector))["items"]
    return {p["metadata"]["name"] for p in pods if not p["metadata"].get("deletionTimestamp")}


async def test_each_step_analysis_sees_only_its_batch_pods(
    kube: KubeClient, namespace: str, pod_prometheus: PrometheusStack
) -> None:
    await kube.create(ANALYSIS_TEMPLATES, batch_template(pod_prometheus.address), namespace)
    await h.start(kube, namespace, h.rollout(namespace, STEPS), replicas=5, labels={ID: RELEASE})
    await h.set_image(kube, namespace, h.V2)
    ro = await h.wait_completed(kube, namespace, timeout=120)
    listed = (await kube.list(ANALYSIS_RUNS, namespace))["items"]
    runs = {r["metadata"]["name"].rsplit("-", 1)[1]: r for r in listed}
    assert h.condition(ro, "Succeeded")["status"] == "True", json.dumps([r["status"] for r in listed])
    assert sorted(runs) == ["step1", "step2"]
    for step, pods in (("step1", 1), ("step2", 2)):
        run = runs[step]
        assert run["status"]["phase"] == "Successful", run["status"]
        args = {a["name"]: a.get("value") for a in run["spec"]["args"]}
        assert args == {"rollout-id": RELEASE, "batch-id": step[-1], "expected": str(pods)}
        values = [m.get("value") for m in run["status"]["metricResults"][0]["measurements"]]
        assert values == [f"[{pods}]"] * 2, values

    # what Prometheus holds per batch is exactly the pods the BatchRelease labelled for it
    for batch, count in (("1", 1), ("2", 2), ("3", 2)):
        want = await labelled_pods(kube, namespace, batch)
        assert len(want) == count

        async def scraped(batch: str = batch, want: set[str] = want) -> bool:
            selector = f'job="{JOB}",rollout_id="{RELEASE}",batch_id="{batch}"'
            series = pod_prometheus.query(f"group by (pod) (http_requests_total{{{selector}}})")
            return {s["metric"]["pod"] for s in series} == want

        await eventually(scraped, timeout=20, what=f"batch {batch} pods in Prometheus")
