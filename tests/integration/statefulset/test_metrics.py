"""An Advanced StatefulSet's series on ``kruise manager``'s /metrics, as the CloneSet's: the
controller's reconciles and work queue, the webhooks, the update counters and in-place durations,
and kruise-state-metrics' state gauges."""

from __future__ import annotations

from kruise.core.kube import KubeClient
from kruise.rollouts.manager.process import ManagerProcess
from tests.integration.statefulset.helpers import (
    NEW_IMAGE,
    create,
    new_statefulset,
    set_image,
    wait_running_and_ready,
    wait_status,
)
from tests.integration.test_manager_metrics import Scrape, scrape, scrape_until

IN_PLACE = "kruise_statefulset_pods_updated_in_place_total"
DURATIONS = "kruise_statefulset_in_place_update_duration_seconds_count"


async def test_an_in_place_update_moves_the_statefulset_series(
    kube: KubeClient, namespace: str, manager: ManagerProcess
) -> None:
    before = scrape(manager)
    body = new_statefulset("db", 3, parallel=True, in_place=True, rolling={"maxUnavailable": 2})
    await create(kube, namespace, body)
    await wait_running_and_ready(kube, namespace, "db", 3)
    await set_image(kube, namespace, "db", NEW_IMAGE)
    done = await wait_status(
        kube, namespace, "db", timeout=90, updatedReplicas=3, updatedReadyReplicas=3, readyReplicas=3
    )
    key = {"namespace": namespace, "statefulset": "db"}

    def updated(now: Scrape) -> bool:  # the last InPlaceUpdateReady write may trail the status
        shown = (
            now.value("kruise_statefulset_status_replicas_updated", **key),
            now.value("kruise_statefulset_status_replicas_ready", **key),
        )
        return now.value(DURATIONS) - before.value(DURATIONS) >= 3 and shown == (3, 3)

    after = await scrape_until(manager, updated, what="three in-place update durations, status shown")

    def delta(name: str, /, **labels: str) -> float:
        return after.value(name, **labels) - before.value(name, **labels)

    ctl = {"controller": "statefulset-controller"}
    assert delta("controller_runtime_reconcile_total", **ctl, result="success") > 0
    assert delta("controller_runtime_reconcile_time_seconds_count", **ctl) > 0
    assert after.has("controller_runtime_max_concurrent_reconciles", **ctl)
    queue = {"name": "statefulset-controller", "controller": "statefulset-controller"}
    assert delta("workqueue_adds_total", **queue) > 0
    for path in ("/mutate-apps-kruise-io-statefulset", "/validate-apps-kruise-io-statefulset"):
        assert delta("controller_runtime_webhook_requests_total", webhook=path, code="200") >= 2, path

    assert after.value(IN_PLACE, **key) == 3
    assert after.value("kruise_statefulset_pods_recreated_total", **key) == 0
    for name, want in {
        "kruise_statefulset_spec_replicas": 3,
        "kruise_statefulset_status_replicas": 3,
        "kruise_statefulset_status_replicas_ready": 3,
        "kruise_statefulset_status_replicas_updated": 3,
        "kruise_statefulset_spec_strategy_rollingupdate_max_unavailable": 2,
    }.items():
        assert after.value(name, **key) == want, name
    revision = done["status"]["updateRevision"]
    assert after.value("kruise_statefulset_status_update_revision", **key, revision=revision) == 1
    assert after.value("kruise_statefulset_spec_strategy_type", **key, strategy_type="RollingUpdate") == 1
