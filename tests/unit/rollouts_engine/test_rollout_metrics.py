"""Rollout gauges in Argo Rollouts' shape (phase mapping, strategy/router labels, replicas, steps)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from kruise.rollouts.rollout.metrics import PHASES, RolloutCollector, argo_phase, strategy_and_router

JSON = dict[str, Any]


def rollout(
    *,
    phase: str = "Progressing",
    reason: str | None = "InRolling",
    step_state: str | None = "StepUpgrade",
    strategy: JSON | None = None,
) -> JSON:
    status: JSON = {"phase": phase, "conditions": []}
    if reason is not None:
        status["conditions"].append({"type": "Progressing", "status": "True", "reason": reason})
    if step_state is not None:
        status["canaryStatus"] = {
            "currentStepIndex": 2,
            "currentStepState": step_state,
            "lastUpdateTime": "2024-05-01T12:00:00Z",
        }
    return {
        "metadata": {"namespace": "shop", "name": "web"},
        "spec": {
            "workloadRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"},
            "strategy": strategy if strategy is not None else {"canary": {"steps": [{"replicas": 1}]}},
        },
        "status": status,
    }


@pytest.mark.parametrize(
    ("obj", "phase"),
    [
        pytest.param(rollout(), "Progressing", id="rolling a step"),
        pytest.param(rollout(reason="Initializing", step_state=None), "Progressing", id="initializing"),
        pytest.param(rollout(reason="Finalising"), "Progressing", id="finalising"),
        pytest.param(rollout(step_state="StepPaused"), "Paused", id="pause step (timed or for approval)"),
        pytest.param(rollout(reason="Paused"), "Paused", id="spec.strategy.paused"),
        pytest.param(rollout(reason="Cancelling"), "Abort", id="cancelling (rollback, analysis failure)"),
        pytest.param(
            rollout(phase="Healthy", reason="Completed", step_state="Completed"), "Completed", id="completed"
        ),
        pytest.param(
            rollout(phase="Healthy", reason=None, step_state=None), "Completed", id="healthy, never released"
        ),
        pytest.param(rollout(phase="Disabled", reason=None, step_state=None), "Completed", id="disabled"),
        pytest.param(rollout(phase="Initial", reason=None, step_state=None), "Progressing", id="initial"),
    ],
)
def test_argo_phase_of_a_kruise_rollout(obj: JSON, phase: str) -> None:
    assert argo_phase(obj) == phase


@pytest.mark.parametrize(
    ("strategy", "labels"),
    [
        ({"canary": {"steps": []}}, ("canary", "")),
        (
            {
                "blueGreen": {
                    "steps": [],
                    "trafficRoutings": [{"service": "s", "gateway": {"httpRouteName": "r"}}],
                }
            },
            ("blueGreen", "GatewayAPI"),
        ),
        ({"canary": {"trafficRoutings": [{"service": "s", "ingress": {"name": "i"}}]}}, ("canary", "Nginx")),
        (
            {
                "canary": {
                    "trafficRoutings": [{"service": "s", "ingress": {"name": "i", "classType": "aliyun-alb"}}]
                }
            },
            ("canary", "aliyun-alb"),
        ),
        (
            {
                "canary": {
                    "trafficRoutings": [{"customNetworkRefs": [{"kind": "VirtualService", "name": "v"}]}]
                }
            },
            ("canary", "Istio"),
        ),
        (
            {"canary": {"trafficRoutings": [{"customNetworkRefs": [{"kind": "Route", "name": "v"}]}]}},
            ("canary", "Custom"),
        ),
        ({}, ("none", "")),
    ],
    ids=["no traffic", "gateway", "nginx ingress", "other ingress class", "istio", "custom", "no strategy"],
)
def test_strategy_and_traffic_router_labels(strategy: JSON, labels: tuple[str, str]) -> None:
    assert strategy_and_router(rollout(strategy=strategy)) == labels


def scrape(objs: list[JSON], workloads: Mapping[str, JSON] | None = None) -> CollectorRegistry:
    registry = CollectorRegistry()

    def lookup(namespace: str, ref: Mapping[str, Any]) -> JSON | None:
        return (workloads or {}).get(f"{namespace}/{ref['kind']}/{ref['name']}")

    registry.register(RolloutCollector(lambda: objs, lookup))
    return registry


def test_info_phase_and_replicas() -> None:
    cloneset = {
        "spec": {"replicas": 10},
        "status": {"replicas": 11, "availableReplicas": 9, "updatedReplicas": 4},
    }
    reg = scrape([rollout(step_state="StepPaused")], {"shop/CloneSet/web": cloneset})
    key = {"namespace": "shop", "name": "web"}
    assert (
        reg.get_sample_value(
            "rollout_info", {**key, "strategy": "canary", "traffic_router": "", "phase": "Paused"}
        )
        == 1
    )
    phases = {
        p: reg.get_sample_value("rollout_phase", {**key, "strategy": "canary", "phase": p}) for p in PHASES
    }
    assert phases == {p: float(p == "Paused") for p in PHASES}
    replicas = {
        k: reg.get_sample_value(f"rollout_info_replicas_{k}", key)
        for k in ("available", "unavailable", "desired", "updated")
    }
    assert replicas == {"available": 9, "unavailable": 2, "desired": 10, "updated": 4}


def test_no_replica_series_without_the_workload() -> None:
    reg = scrape([rollout()])
    assert reg.get_sample_value("rollout_info_replicas_desired", {"namespace": "shop", "name": "web"}) is None


def test_step_gauges_exist_only_while_a_release_is_in_progress() -> None:
    key = {"namespace": "shop", "name": "web"}
    reg = scrape([rollout(step_state="StepUpgrade")])
    assert reg.get_sample_value("kruise_rollout_step_index", key) == 2
    since = {**key, "step": "2", "step_state": "StepUpgrade"}
    assert reg.get_sample_value("kruise_rollout_step_state_timestamp_seconds", since) == 1714564800.0
    done = scrape([rollout(phase="Healthy", reason="Completed", step_state="Completed")])
    assert done.get_sample_value("kruise_rollout_step_index", key) is None
