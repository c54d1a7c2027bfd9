"""``kruise manager``'s /metrics during a CloneSet in-place image update.

The scrape must carry every family below with upstream's name, type and help text (so
kruise-manager, kruise-state-metrics and Argo Rollouts dashboards work unchanged), and the
update must move the reconcile, work-queue, REST-client, webhook and in-place series.
"""

from __future__ import annotations

import re
import urllib.request
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS
from kruise.rollouts.manager.process import ManagerProcess
from tests.integration.cloneset.helpers import IMAGE, NEW_IMAGE, create, new_cloneset, set_image
from tests.integration.rollouts import helpers as rollouts
from tests.support.wait import eventually

CR = "controller-runtime"
EXPECTED: dict[str, tuple[str, str]] = {
    # controller-runtime: reconciles
    "controller_runtime_reconcile_total": ("counter", "Total number of reconciliations per controller"),
    "controller_runtime_reconcile_errors_total": (
        "counter",
        "Total number of reconciliation errors per controller",
    ),
    "controller_runtime_reconcile_time_seconds": (
        "histogram",
        "Length of time per reconciliation per controller",
    ),
    "controller_runtime_max_concurrent_reconciles": (
        "gauge",
        "Maximum number of concurrent reconciles per controller",
    ),
    "controller_runtime_active_workers": ("gauge", "Number of currently used workers per controller"),
    # client-go work queues, as controller-runtime registers them
    "workqueue_depth": ("gauge", "Current depth of workqueue"),
    "workqueue_adds_total": ("counter", "Total number of adds handled by workqueue"),
    "workqueue_queue_duration_seconds": (
        "histogram",
        "How long in seconds an item stays in workqueue before being requested",
    ),
    "workqueue_work_duration_seconds": (
        "histogram",
        "How long in seconds processing an item from workqueue takes.",
    ),
    "workqueue_unfinished_work_seconds": (
        "gauge",
        "How many seconds of work has been done that is in progress and hasn't been observed by "
        "work_duration. Large values indicate stuck threads. One can deduce the number of stuck "
        "threads by observing the rate at which this increases.",
    ),
    "workqueue_longest_running_processor_seconds": (
        "gauge",
        "How many seconds has the longest running processor for workqueue been running.",
    ),
    "workqueue_retries_total": ("counter", "Total number of retries handled by workqueue"),
    # client-go REST client
    "rest_client_requests_total": (
        "counter",
        "Number of HTTP requests, partitioned by status code, method, and host.",
    ),
    "rest_client_request_duration_seconds": (
        "histogram",
        "Request latency in seconds. Broken down by verb and host.",
    ),
    # client-go leader election
    "leader_election_master_status": (
        "gauge",
        "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates "
        "master. 'name' is the string used to identify the lease. Please make sure to group by name.",
    ),
    # controller-runtime webhooks
    "controller_runtime_webhook_requests_total": (
        "counter",
        "Total number of admission requests by HTTP status code.",
    ),
    "controller_runtime_webhook_latency_seconds": (
        "histogram",
        "Histogram of the latency of processing admission requests",
    ),
    "controller_runtime_webhook_requests_in_flight": (
        "gauge",
        "Current number of admission requests being served.",
    ),
    # kruise-state-metrics' CloneSet gauges
    "kruise_cloneset_created": ("gauge", "Unix creation timestamp"),
    "kruise_cloneset_metadata_generation": (
        "gauge",
        "Sequence number representing a specific generation of the desired state.",
    ),
    "kruise_cloneset_status_replicas": ("gauge", "The number of replicas per cloneset."),
    "kruise_cloneset_status_replicas_available": ("gauge", "The number of available replicas per cloneset."),
    "kruise_cloneset_status_replicas_unavailable": (
        "gauge",
        "The number of unavailable replicas per cloneset.",
    ),
    "kruise_cloneset_status_replicas_updated": ("gauge", "The number of updated replicas per cloneset."),
    "kruise_cloneset_status_observed_generation": (
        "gauge",
        "The generation observed by the cloneset controller.",
    ),
    "kruise_cloneset_status_condition": ("gauge", "The current status conditions of a cloneset."),
    "kruise_cloneset_status_replicas_ready": ("gauge", "The number of ready replicas per cloneset."),
    "kruise_cloneset_status_replicas_updated_ready": (
        "gauge",
        "The number of update and ready replicas per cloneset.",
    ),
    "kruise_cloneset_spec_replicas": ("gauge", "Number of desired pods for a cloneset."),
    "kruise_cloneset_spec_strategy_rollingupdate_max_unavailable": (
        "gauge",
        "Maximum number of unavailable replicas during a rolling update of a cloneset.",
    ),
    "kruise_cloneset_spec_strategy_rollingupdate_max_surge": (
        "gauge",
        "Maximum number of replicas that can be scheduled above the desired number of replicas during a "
        "rolling update of a cloneset.",
    ),
    "kruise_cloneset_spec_strategy_partition": (
        "gauge",
        "Desired number or percent of Pods in old revisions.",
    ),
    "kruise_cloneset_spec_strategy_type": ("gauge", "The type of updateStrategy."),
    "kruise_cloneset_labels": ("gauge", "Kruise labels converted to Prometheus labels."),
    "kruise_cloneset_annotations": ("gauge", "Kruise annotations converted to Prometheus labels."),
    # Argo Rollouts' Rollout and AnalysisRun gauges
    "rollout_info": ("gauge", "Information about rollout."),
    "rollout_phase": ("gauge", "Information on the state of the rollout (DEPRECATED - use rollout_info)"),
    "rollout_info_replicas_available": ("gauge", "The number of available replicas per rollout."),
    "rollout_info_replicas_unavailable": ("gauge", "The number of unavailable replicas per rollout."),
    "rollout_info_replicas_desired": ("gauge", "The number of desired replicas per rollout."),
    "rollout_info_replicas_updated": ("gauge", "The number of updated replicas per rollout."),
    "analysis_run_info": ("gauge", "Information about analysis run."),
    "analysis_run_phase": (
        "gauge",
        "Information on the state of the Analysis Run (DEPRECATED - use analysis_run_info)",
    ),
    "analysis_run_metric_type": (
        "gauge",
        "Information on the type of a specific metric in the Analysis Runs",
    ),
    "analysis_run_metric_phase": (
        "gauge",
        "Information on the duration of a specific metric in the Analysis Run",
    ),
    # ours
    "kruise_cloneset_status_expected_updated_replicas": (
        "gauge",
        "The number of pods the update strategy expects at the update revision (replicas - partition).",
    ),
    "kruise_cloneset_spec_strategy_paused": (
        "gauge",
        "Whether the update of a cloneset is paused (spec.updateStrategy.paused), 1 or 0.",
    ),
    "kruise_cloneset_pods_updated_in_place_total": (
        "counter",
        "Pods a CloneSet moved to its update revision by updating them in place.",
    ),
    "kruise_cloneset_pods_recreated_total": (
        "counter",
        "Pods a CloneSet marked for deletion to recreate them at its update revision.",
    ),
    "kruise_cloneset_in_place_update_duration_seconds": (
        "histogram",
        "Seconds from the start of a pod's in-place update to its InPlaceUpdateReady condition turning True.",
    ),
    "kruise_rollout_step_index": (
        "gauge",
        "Current step (1-based) of a Rollout whose release is in progress.",
    ),
    "kruise_rollout_step_state_timestamp_seconds": (
        "gauge",
        "Unix time the current step of a Rollout in progress entered its current state.",
    ),
}


class Scrape:
    """One scrape: ``# HELP``/``# TYPE`` lines as exposed, and sample values by name and labels."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.help: dict[str, str] = {}
        self.type: dict[str, str] = {}
        for line in text.splitlines():
            if line.startswith(("# HELP ", "# TYPE ")):
                _, kind, name, rest = line.split(" ", 3)
                (self.help if kind == "HELP" else self.type)[name] = rest
        self.samples: list[tuple[str, dict[str, str], float]] = [
            (s.name, dict(s.labels), s.value)
            for family in text_string_to_metric_families(text)
            for s in family.samples
        ]

    def value(self, name: str, /, **labels: str) -> float:
        """The sum of the samples of ``name`` whose labels include ``labels`` (0 when none)."""
        return sum(v for n, ls, v in self.samples if n == name and labels.items() <= ls.items())

    def has(self, name: str, /, **labels: str) -> bool:
        return any(n == name and labels.items() <= ls.items() for n, ls, _ in self.samples)


def scrape(manager: ManagerProcess) -> Scrape:
    url = f"http://127.0.0.1:{manager.metrics_port}/metrics"
    with urllib.request.urlopen(url, timeout=10) as answer:
        assert answer.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        return Scrape(answer.read().decode())


async def scrape_until(
    manager: ManagerProcess, shows: Callable[[Scrape], bool], *, what: str, timeout: float = 30
) -> Scrape:
    """The first scrape of ``manager`` for which ``shows`` holds. The state gauges read the
    manager's informer cache, which may get a status the API server already answered a watch
    event later (as kube-state-metrics trails it); counters may trail the writes they count."""

    async def probe() -> Scrape | None:
        now = scrape(manager)
        return now if shows(now) else None

    return await eventually(probe, timeout=timeout, what=what)


async def settled(kube: KubeClient, namespace: str, **want: int) -> Mapping[str, Any]:
    async def probe() -> Mapping[str, Any] | None:
        cs = await kube.get(CLONESETS, "web", namespace)
        st = cs.get("status") or {}
        current = cs["metadata"]["generation"] == st.get("observedGeneration")
        return cs if current and all(st.get(k) == v for k, v in want.items()) else None

    return await eventually(probe, timeout=90, what=f"CloneSet web {want}")


async def test_a_cloneset_update_moves_the_managers_metrics(
    kube: KubeClient, namespace: str, manager: ManagerProcess
) -> None:
    before = scrape(manager)
    strategy = {"type": "InPlaceIfPossible", "maxUnavailable": "50%"}
    await create(kube, namespace, new_cloneset("web", 4, strategy=strategy, image=IMAGE))
    await settled(kube, namespace, readyReplicas=4, updatedReadyReplicas=4)
    await set_image(kube, namespace, "web", NEW_IMAGE)
    await settled(kube, namespace, updatedReplicas=4, updatedReadyReplicas=4, readyReplicas=4)
    key = {"namespace": namespace, "cloneset": "web"}

    def updated(now: Scrape) -> bool:  # the last InPlaceUpdateReady write may trail the status
        durations = "kruise_cloneset_in_place_update_duration_seconds_count"
        moved = now.value(durations) - before.value(durations)
        return moved >= 4 and now.value("kruise_cloneset_status_replicas_updated_ready", **key) == 4

    after = await scrape_until(manager, updated, what="four in-place update durations, status shown")

    def delta(name: str, /, **labels: str) -> float:
        return after.value(name, **labels) - before.value(name, **labels)

    # names, types and help texts as upstream exposes them
    missing = sorted(set(EXPECTED) - set(after.help))
    assert not missing, f"families missing from /metrics: {missing}"
    assert {n: (after.type[n], after.help[n]) for n in EXPECTED} == EXPECTED
    series_names = {line.split("{")[0].split(" ")[0] for line in after.text.splitlines() if line[:1] != "#"}
    created = {n for n in series_names if n.endswith("_created")}
    assert "kruise_cloneset_created" in created
    # no *_created beside the state gauges' creation times (other tests' workloads may show)
    assert all(re.fullmatch(r"kruise_[a-z]+_created", n) for n in created), "no *_created"

    assert after.value("leader_election_master_status", name="kruise-manager") == 1

    # reconciles and the work queue of the CloneSet controller
    ctl = {"controller": "cloneset-controller"}
    assert delta("controller_runtime_reconcile_total", **ctl, result="success") > 0
    assert delta("controller_runtime_reconcile_time_seconds_count", **ctl) > 0
    assert after.value("controller_runtime_max_concurrent_reconciles", **ctl) == 3
    assert after.has("controller_runtime_active_workers", **ctl)
    queue = {"name": "cloneset-controller", "controller": "cloneset-controller"}
    assert delta("workqueue_adds_total", **queue) > 0
    assert delta("workqueue_queue_duration_seconds_count", **queue) > 0
    assert delta("workqueue_work_duration_seconds_count", **queue) > 0
    assert after.has("workqueue_depth", **queue) and after.has(
        "workqueue_longest_running_processor_seconds", **queue
    )

    # the manager's API calls: four pods created, four pods patched in place (at least)
    assert delta("rest_client_requests_total", method="POST", code="201") >= 4
    assert delta("rest_client_requests_total", method="PATCH", code="200") >= 8  # condition + images per pod
    assert delta("rest_client_request_duration_seconds_count", verb="PATCH") >= 8

    # the API server called the CloneSet webhooks for the create and the update
    for path in ("/mutate-apps-kruise-io-v1alpha1-cloneset", "/validate-apps-kruise-io-v1alpha1-cloneset"):
        assert delta("controller_runtime_webhook_requests_total", webhook=path, code="200") >= 2, path
        assert delta("controller_runtime_webhook_latency_seconds_count", webhook=path) >= 2, path

    # in place, never recreated; the state gauges show the finished update
    assert after.value("kruise_cloneset_pods_updated_in_place_total", **key) == 4
    assert after.value("kruise_cloneset_pods_recreated_total", **key) == 0
    assert after.value("kruise_cloneset_status_replicas_updated_ready", **key) == 4
    assert after.value("kruise_cloneset_spec_replicas", **key) == 4
    assert after.value("kruise_cloneset_spec_strategy_type", **key, strategy_type="InPlaceIfPossible") == 1
    assert after.value("kruise_cloneset_status_expected_updated_replicas", **key) == 4


async def test_a_paused_release_shows_in_the_rollout_gauges(
    kube: KubeClient, namespace: str, manager: ManagerProcess
) -> None:
    """A canary step waiting for approval: Argo's phase Paused, our step gauges, the workload's replicas."""
    steps = [{"replicas": "20%", "pause": {}}, {"replicas": "100%"}]
    await rollouts.start(kube, namespace, rollouts.rollout(namespace, steps), replicas=5)
    await rollouts.set_image(kube, namespace, rollouts.V2)
    ro = await rollouts.wait_paused_at(kube, namespace, 1)
    entered = ro["status"]["canaryStatus"]["lastUpdateTime"]
    key = {"namespace": namespace, "name": "web"}

    after = await scrape_until(
        manager,
        lambda now: now.value("rollout_info", **key, phase="Paused") == 1,
        what="rollout_info phase Paused",
    )
    assert after.value("rollout_info", **key, strategy="canary", traffic_router="") == 1
    assert after.value("rollout_phase", **key, phase="Paused") == 1
    assert after.value("rollout_phase", **key) == 1, "exactly one phase is 1"
    assert after.value("rollout_info_replicas_desired", **key) == 5
    assert after.value("rollout_info_replicas_updated", **key) == 1  # 20% of 5
    assert after.value("kruise_rollout_step_index", **key) == 1
    since = after.value(
        "kruise_rollout_step_state_timestamp_seconds", **key, step="1", step_state="StepPaused"
    )
    assert since == datetime.fromisoformat(entered.replace("Z", "+00:00")).timestamp()
