"""Metric-analysis gates in a Rollout (issue: metric analysis, item 4).

A step's ``analysis`` runs an AnalysisRun from an AnalysisTemplate (web provider against a local
HTTP server the test controls). A good canary advances; a bad one is aborted the way Kruise rolls
back: traffic back to stable first, then every pod back on the stable revision.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web

from kruise.analysis.resources import ANALYSIS_RUNS, ANALYSIS_TEMPLATES
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, EVENTS, SERVICES
from kruise.core.localcluster.cluster import free_port
from kruise.rollouts.resources import ROLLOUTS
from tests.integration.analysis.conftest import prometheus  # noqa: F401 - the session fixture
from tests.integration.cloneset.test_cloneset_inplace import web_cloneset
from tests.integration.rollouts.test_canary_httproute import (
    HTTPROUTES,
    httproute,
    kruise,
    pods_by_image,
    service,
)
from tests.support.cluster import TestCluster
from tests.support.prometheus import PrometheusStack
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")
V1, V2 = "registry.example.com/shop/web:1.4.0", "registry.example.com/shop/web:1.5.0"


class RateServer:
    """Serves ``{"successRate": rate}`` at /rate; the test sets ``rate``."""

    def __init__(self) -> None:
        self.rate = 1.0
        self.port = free_port()

    async def handle(self, _: web.Request) -> web.Response:
        return web.json_response({"successRate": self.rate})


@pytest.fixture
async def rate_server() -> AsyncIterator[RateServer]:
    server = RateServer()
    app = web.Application()
    app.router.add_get("/rate", server.handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", server.port).start()
    try:
        yield server
    finally:
        await runner.cleanup()


def template(port: int) -> dict[str, Any]:
    return {
        "apiVersion": "rollouts.kruise.io/v1alpha1",
        "kind": "AnalysisTemplate",
        "metadata": {"name": "success-rate"},
        "spec": {
            "args": [{"name": "revision"}],
            "metrics": [
                {
                    "name": "success-rate",
                    "interval": "1s",
                    "count": 2,
                    "successCondition": "result >= 0.95",
                    "failureLimit": 0,
                    "provider": {
                        "web": {
                            "url": f"http://127.0.0.1:{port}/rate?rev={{{{args.revision}}}}",
                            "jsonPath": "{$.successRate}",
                        }
                    },
                }
            ],
        },
    }


def rollout() -> dict[str, Any]:
    gate = {
        "templates": [{"templateName": "success-rate"}],
        "args": [{"name": "revision", "valueFrom": {"podTemplateHashValue": "Latest"}}],
    }
    return {
        "apiVersion": "rollouts.kruise.io/v1beta1",
        "kind": "Rollout",
        "metadata": {"name": "web"},
        "spec": {
            "workloadRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"},
            "strategy": {
                "canary": {
                    "steps": [
                        {"replicas": "20%", "traffic": "20%", "analysis": gate, "pause": {"duration": 1}},
                        {"replicas": "100%", "traffic": "100%"},
                    ],
                    "trafficRoutings": [
                        {"service": "web", "gracePeriodSeconds": 0, "gateway": {"httpRouteName": "web"}}
                    ],
                }
            },
        },
    }


async def _setup(kube: KubeClient, namespace: str, port: int, *, with_template: bool = True) -> None:
    await kube.create(SERVICES, service(namespace), namespace)
    await kube.create(HTTPROUTES, httproute(namespace), namespace)
    if with_template:
        await kube.create(ANALYSIS_TEMPLATES, template(port), namespace)
    await kube.create(CLONESETS, web_cloneset(namespace, replicas=5, partition=0), namespace)

    async def ready() -> bool:
        return ((await kube.get(CLONESETS, "web", namespace)).get("status") or {}).get("readyReplicas") == 5

    await eventually(ready, timeout=60, what="5 ready pods")
    await kube.create(ROLLOUTS, rollout(), namespace)

    async def healthy() -> bool:
        return ((await kube.get(ROLLOUTS, "web", namespace)).get("status") or {}).get("phase") == "Healthy"

    await eventually(healthy, timeout=30, what="Rollout Healthy")
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "web", "image": V2}]}}}}
    await kube.patch(CLONESETS, "web", patch, namespace, patch_type="merge")


async def _finished(kube: KubeClient, namespace: str) -> dict[str, Any]:
    async def probe() -> dict[str, Any] | None:
        ro = await kube.get(ROLLOUTS, "web", namespace)
        st = ro.get("status") or {}
        conds = {c["type"]: c for c in st.get("conditions") or []}
        return ro if st.get("phase") == "Healthy" and "Succeeded" in conds else None

    try:
        return await eventually(probe, timeout=90, interval=0.5, what="release finished")
    except AssertionError:
        ro = await kube.get(ROLLOUTS, "web", namespace)
        cs = await kube.get(CLONESETS, "web", namespace)
        raise AssertionError(
            f"rollout status: {ro.get('status')}\ncloneset: {cs.get('spec')} {cs.get('status')}"
        ) from None


async def test_good_canary_passes_its_analysis_and_completes(
    kube: KubeClient, namespace: str, rate_server: RateServer, cluster: TestCluster
) -> None:
    rate_server.rate = 0.99
    await _setup(kube, namespace, rate_server.port)
    ro = await _finished(kube, namespace)
    conds = {c["type"]: c for c in ro["status"]["conditions"]}
    assert conds["Succeeded"]["status"] == "True"
    runs = (await kube.list(ANALYSIS_RUNS, namespace))["items"]
    assert len(runs) == 1 and runs[0]["status"]["phase"] == "Successful"
    assert runs[0]["metadata"]["name"].startswith("web-") and runs[0]["metadata"]["name"].endswith("-step1")
    assert runs[0]["metadata"]["ownerReferences"][0]["kind"] == "Rollout"
    assert await pods_by_image(kube, namespace) == {V2: 5}
    shown = kruise("rollout", "status", "rollout/web", "-n", namespace, "--no-watch", cluster=cluster)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert f"{runs[0]['metadata']['name']}=Successful" in shown.stdout


async def test_bad_canary_fails_its_analysis_and_is_rolled_back(
    kube: KubeClient, namespace: str, rate_server: RateServer
) -> None:
    rate_server.rate = 0.5
    await _setup(kube, namespace, rate_server.port)
    ro = await _finished(kube, namespace)
    conds = {c["type"]: c for c in ro["status"]["conditions"]}
    assert conds["Succeeded"]["status"] == "False"
    assert conds["Aborted"]["reason"] == "AnalysisFailed"
    runs = (await kube.list(ANALYSIS_RUNS, namespace))["items"]
    assert runs[0]["status"]["phase"] == "Failed"

    async def all_stable() -> bool:
        return await pods_by_image(kube, namespace) == {V1: 5}

    await eventually(all_stable, timeout=60, what="every pod back on the stable revision")
    route = await kube.get(HTTPROUTES, "web", namespace)
    assert [r["name"] for r in route["spec"]["rules"][0]["backendRefs"]] == ["web"]
    cs = await kube.get(CLONESETS, "web", namespace)
    assert cs["spec"]["template"]["spec"]["containers"][0]["image"] == V1
    assert cs["status"]["currentRevision"] == cs["status"]["updateRevision"]


async def test_missing_template_is_reported_and_the_step_waits_for_it(
    kube: KubeClient, namespace: str, rate_server: RateServer, cluster: TestCluster
) -> None:
    """A GitOps sync may apply the Rollout before its AnalysisTemplate: the step waits, the
    Rollout says why (status.message, a Warning event, ``kruise rollout status``), and the
    release goes on once the template exists."""
    rate_server.rate = 0.99
    await _setup(kube, namespace, rate_server.port, with_template=False)
    expected = "step1 analysis: AnalysisTemplate 'success-rate' not found"

    async def reported() -> dict[str, Any] | None:
        st = (await kube.get(ROLLOUTS, "web", namespace)).get("status") or {}
        return st if st.get("message") == expected else None

    status = await eventually(reported, timeout=30, what="the missing template in status.message")
    assert status["phase"] == "Progressing"
    assert status["canaryStatus"]["currentStepIndex"] == 1
    assert status["canaryStatus"]["currentStepState"] == "StepMetricsAnalysis"

    async def warned() -> bool:
        events = (await kube.list(EVENTS, namespace))["items"]
        return any(
            e.get("reason") == "AnalysisError"
            and e.get("type") == "Warning"
            and expected in e.get("message", "")
            for e in events
        )

    await eventually(warned, timeout=15, what="an AnalysisError Warning event")
    shown = kruise("rollout", "status", "rollout/web", "-n", namespace, "--no-watch", cluster=cluster)
    assert expected in " ".join(shown.stdout.split()), shown.stdout + shown.stderr
    assert not (await kube.list(ANALYSIS_RUNS, namespace))["items"]

    await kube.create(ANALYSIS_TEMPLATES, template(rate_server.port), namespace)
    ro = await _finished(kube, namespace)
    conds = {c["type"]: c for c in ro["status"]["conditions"]}
    assert conds["Succeeded"]["status"] == "True"
    assert "not found" not in str(ro["status"].get("message"))
    assert await pods_by_image(kube, namespace) == {V2: 5}


def prometheus_template(address: str) -> dict[str, Any]:
    """Argo-style success rate over the exporter's ``http_requests_total{revision, code}``."""
    return {
        "apiVersion": "rollouts.kruise.io/v1alpha1",
        "kind": "AnalysisTemplate",
        "metadata": {"name": "success-rate"},
        "spec": {
            "args": [{"name": "revision"}],
            "metrics": [
                {
                    "name": "success-rate",
                    "interval": "1s",
                    "count": 2,
                    "successCondition": "len(result) > 0 && result[0] >= 0.95",
                    "provider": {
                        "prometheus": {
                            "address": address,
                            "query": (
                                'sum(rate(http_requests_total{revision="{{args.revision}}",code!="500"}[10s]))'
                                ' / sum(rate(http_requests_total{revision="{{args.revision}}"}[10s]))'
                            ),
                        }
                    },
                }
            ],
        },
    }


@pytest.mark.parametrize(
    ("series", "succeeded", "final_image"),
    [
        pytest.param("good", "True", V2, id="low error rate advances and completes"),
        pytest.param("bad", "False", V1, id="high error rate is rolled back"),
    ],
)
async def test_prometheus_success_rate_gates_the_release(
    kube: KubeClient,
    namespace: str,
    prometheus: PrometheusStack,  # noqa: F811 - the imported session fixture
    series: str,
    succeeded: str,
    final_image: str,
) -> None:
    """The issue's done-when: a step analysis on a Prometheus success-rate query."""
    body = rollout()
    gate = body["spec"]["strategy"]["canary"]["steps"][0]["analysis"]
    gate["args"] = [{"name": "revision", "value": series}]
    await kube.create(SERVICES, service(namespace), namespace)
    await kube.create(HTTPROUTES, httproute(namespace), namespace)
    await kube.create(ANALYSIS_TEMPLATES, prometheus_template(prometheus.address), namespace)
    await kube.create(CLONESETS, web_cloneset(namespace, replicas=5, partition=0), namespace)

    async def ready() -> bool:
        return ((await kube.get(CLONESETS, "web", namespace)).get("status") or {}).get("readyReplicas") == 5

    await eventually(ready, timeout=60, what="5 ready pods")
    await kube.create(ROLLOUTS, body, namespace)

    async def healthy() -> bool:
        return ((await kube.get(ROLLOUTS, "web", namespace)).get("status") or {}).get("phase") == "Healthy"

    await eventually(healthy, timeout=30, what="Rollout Healthy")
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "web", "image": V2}]}}}}
    await kube.patch(CLONESETS, "web", patch, namespace, patch_type="merge")
    ro = await _finished(kube, namespace)
    conds = {c["type"]: c for c in ro["status"]["conditions"]}
    assert conds["Succeeded"]["status"] == succeeded
    if succeeded == "False":
        assert conds["Aborted"]["reason"] == "AnalysisFailed"
        assert "analysis" in conds["Aborted"]["message"]

    async def settled() -> bool:
        return await pods_by_image(kube, namespace) == {final_image: 5}

    await eventually(settled, timeout=60, what=f"every pod on {final_image}")
    route = await kube.get(HTTPROUTES, "web", namespace)
    assert [r["name"] for r in route["spec"]["rules"][0]["backendRefs"]] == ["web"]


async def test_finished_runs_beyond_the_history_limit_are_deleted_oldest_first(
    kube: KubeClient, namespace: str
) -> None:
    """Argo's successfulRunHistoryLimit (5): older finished runs of a Rollout are garbage-collected."""
    from kruise.rollouts.rollout.analysis_effects import gc_runs

    rollout_obj = {"metadata": {"name": "web", "namespace": namespace}}
    metric = {"name": "m", "provider": {"web": {"url": "http://127.0.0.1:1/x"}}}
    for i in range(7):
        run = {
            "apiVersion": "rollouts.kruise.io/v1alpha1",
            "kind": "AnalysisRun",
            "metadata": {"name": f"web-r{i}", "labels": {"rollouts.kruise.io/rollout": "web"}},
            "spec": {"metrics": [metric], "terminate": True},
        }
        await kube.create(ANALYSIS_RUNS, run, namespace)
        await kube.patch(
            ANALYSIS_RUNS,
            f"web-r{i}",
            {"status": {"phase": "Successful", "startedAt": f"2026-01-01T00:00:0{i}Z"}},
            namespace,
            subresource="status",
        )
    assert await gc_runs(kube, rollout_obj) == 2
    left = sorted(r["metadata"]["name"] for r in (await kube.list(ANALYSIS_RUNS, namespace))["items"])
    assert len(left) == 5
