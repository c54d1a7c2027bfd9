"""Arguments of a Rollout's AnalysisRun, resolved from the Rollout and its status (pure).

``valueFrom.releaseValue`` (kruise's, additive) reads the release the step belongs to, so a query
selects exactly the pods of this batch (labelled ``rollouts.kruise.io/rollout-id`` and
``rollouts.kruise.io/rollout-batch-id`` by the BatchRelease).
"""

from __future__ import annotations

from typing import Any

import pytest

from kruise.rollouts.api.analysis_ref import ReleaseValue
from kruise.rollouts.rollout.analysis_gate import release_value, run_request

ROLLOUT = {"metadata": {"name": "web", "namespace": "shop"}, "spec": {"strategy": {"canary": {}}}}
STATUS = {
    "canaryStatus": {
        "observedRolloutID": "release-7",
        "currentStepIndex": 2,
        "canaryRevision": "5d8f9c7b6",
        "podTemplateHash": "5d8f9c7b6",
        "stableRevision": "7c6b5a4d3",
    }
}


def _args(args: list[dict[str, Any]], status: dict[str, Any] = STATUS) -> dict[str, str | None]:
    gate = {"templates": [{"templateName": "t"}], "args": args}
    request = run_request(ROLLOUT, status, gate, "step2")
    return {a["name"]: a["value"] for a in request["args"]}


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        pytest.param("RolloutID", "release-7", id="the rollout-id the pods are labelled with"),
        pytest.param("BatchID", "2", id="the current step is the batch label of its pods"),
        pytest.param("CanaryRevision", "5d8f9c7b6", id="canary revision"),
        pytest.param("StableRevision", "7c6b5a4d3", id="stable revision"),
    ],
)
def test_release_values_resolve_from_the_canary_status(source: str, expected: str) -> None:
    assert _args([{"name": "x", "valueFrom": {"releaseValue": source}}]) == {"x": expected}


def test_every_release_value_is_read_from_the_status() -> None:
    cs = STATUS["canaryStatus"]
    assert {v: release_value(cs, v.value) for v in ReleaseValue} == {
        ReleaseValue.ROLLOUT_ID: "release-7",
        ReleaseValue.BATCH_ID: "2",
        ReleaseValue.CANARY_REVISION: "5d8f9c7b6",
        ReleaseValue.STABLE_REVISION: "7c6b5a4d3",
    }


def test_a_literal_value_wins_over_value_from() -> None:
    assert _args([{"name": "x", "value": "lit", "valueFrom": {"releaseValue": "BatchID"}}]) == {"x": "lit"}


def test_argo_sources_still_resolve_next_to_release_values() -> None:
    args = [
        {"name": "latest", "valueFrom": {"podTemplateHashValue": "Latest"}},
        {"name": "stable", "valueFrom": {"podTemplateHashValue": "Stable"}},
        {"name": "ns", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
        {"name": "batch", "valueFrom": {"releaseValue": "BatchID"}},
    ]
    assert _args(args) == {"latest": "5d8f9c7b6", "stable": "7c6b5a4d3", "ns": "shop", "batch": "2"}


@pytest.mark.parametrize(
    "status",
    [
        pytest.param({}, id="no canary status yet"),
        pytest.param({"canaryStatus": {"observedRolloutID": ""}}, id="empty rollout-id"),
    ],
)
def test_an_unknown_release_value_stays_unresolved(status: dict[str, Any]) -> None:
    """None makes the run's creation fail with ``args.rid was not resolved`` (the step waits and says so)."""
    assert _args([{"name": "rid", "valueFrom": {"releaseValue": "RolloutID"}}], status) == {"rid": None}


def test_an_unknown_release_value_name_resolves_to_nothing() -> None:
    assert release_value(STATUS["canaryStatus"], "PodName") == ""
