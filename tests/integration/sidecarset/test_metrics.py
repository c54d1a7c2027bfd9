"""``kruise manager``'s /metrics during a sidecar injection and upgrade: the pod webhook's
latency (``controller_runtime_webhook_*{webhook="/mutate-pod"}``), the SidecarSet controller's
reconciles and work queue, kruise-state-metrics' SidecarSet gauges and our upgrade counter
(docs/metrics.md)."""

from __future__ import annotations

from kruise.core.kube import KubeClient
from kruise.rollouts.manager.process import ManagerProcess
from tests.integration.sidecarset.helpers import (
    BUSYBOX,
    base_deployment,
    base_sidecarset,
    create_deployment,
    create_sidecarset,
    update_sidecarset,
    wait_pods,
    wait_status,
)
from tests.integration.test_manager_metrics import scrape, scrape_until


async def test_an_injection_and_upgrade_move_the_pod_webhook_and_sidecarset_series(
    kube: KubeClient, sidecarsets: str, manager: ManagerProcess
) -> None:
    ns = sidecarsets
    before = scrape(manager)
    body = base_sidecarset(ns)
    body["spec"]["containers"] = body["spec"]["containers"][:1]
    body["spec"]["updateStrategy"] = {"type": "RollingUpdate", "maxUnavailable": 2}
    name = (await create_sidecarset(kube, body))["metadata"]["name"]
    pods = await create_deployment(kube, base_deployment(ns, replicas=2))
    assert all(len(p["spec"]["containers"]) == 2 for p in pods), "injected"
    await wait_pods(kube, ns, 2)
    await update_sidecarset(kube, name, lambda obj: obj["spec"]["containers"][0].update(image=BUSYBOX))
    await wait_status(kube, name, matchedPods=2, updatedPods=2, readyPods=2, updatedReadyPods=2)
    key = {"sidecarset": name}

    after = await scrape_until(
        manager,
        lambda now: now.value("kruise_sidecarset_status_replicas_updated_ready", **key) == 2,
        what="the SidecarSet gauges at 2 updated ready",
    )

    def delta(metric: str, /, **labels: str) -> float:
        return after.value(metric, **labels) - before.value(metric, **labels)

    # the API server called the pod webhook for both pods and it answered
    assert delta("controller_runtime_webhook_requests_total", webhook="/mutate-pod", code="200") >= 2
    assert delta("controller_runtime_webhook_latency_seconds_count", webhook="/mutate-pod") >= 2
    assert after.has("controller_runtime_webhook_requests_in_flight", webhook="/mutate-pod")
    # the upgrade controller's reconciles and queue
    ctl = {"controller": "sidecarset-controller"}
    assert delta("controller_runtime_reconcile_total", **ctl, result="success") > 0
    assert delta("controller_runtime_reconcile_time_seconds_count", **ctl) > 0
    assert after.value("controller_runtime_max_concurrent_reconciles", **ctl) == 3
    assert delta("workqueue_adds_total", name="sidecarset-controller") > 0
    # state gauges and the upgrade counter
    assert after.value("kruise_sidecarset_status_replicas_matched", **key) == 2
    assert after.value("kruise_sidecarset_status_replicas_updated", **key) == 2
    assert after.value("kruise_sidecarset_spec_metadata_generation", **key) == 2
    assert after.value("kruise_sidecarset_status_observed_generation", **key) == 2
    assert after.value("kruise_sidecarset_spec_strategy_type", **key, strategy_type="RollingUpdate") == 0
    assert after.value("kruise_sidecarset_pods_upgraded_total", **key) == 2
