"""The rollouts.kruise.io models parse every upstream example and write back what they read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from kruise.core.api import KubeObject
from kruise.rollouts.api import (
    BatchRelease,
    BatchReleaseV1alpha1,
    CanaryStepState,
    RollingStyle,
    Rollout,
    RolloutStatus,
    RolloutV1alpha1,
    TrafficRouting,
)
from tests.support.compare import missing
from tests.unit.rollouts.helpers import CORPUS, example, load, upstream_examples, v1beta1_rollout

MODELS: dict[tuple[str, str], type[KubeObject]] = {
    ("rollouts.kruise.io/v1beta1", "Rollout"): Rollout,
    ("rollouts.kruise.io/v1alpha1", "Rollout"): RolloutV1alpha1,
    ("rollouts.kruise.io/v1beta1", "BatchRelease"): BatchRelease,
    ("rollouts.kruise.io/v1alpha1", "BatchRelease"): BatchReleaseV1alpha1,
    ("rollouts.kruise.io/v1alpha1", "TrafficRouting"): TrafficRouting,
}


def test_the_corpus_has_every_kind() -> None:
    files = upstream_examples()
    kinds = {(load(p)["apiVersion"], load(p)["kind"]) for p in files}
    assert len(files) == 32
    assert kinds == set(MODELS) - {("rollouts.kruise.io/v1beta1", "BatchRelease")}


@pytest.mark.parametrize("path", upstream_examples(), ids=lambda p: str(p.relative_to(CORPUS)))
def test_upstream_example_parses_and_round_trips(path: Path) -> None:
    doc = load(path)
    model = MODELS[(doc["apiVersion"], doc["kind"])]
    obj = model.from_dict(doc)
    out = obj.to_dict()
    assert (out["apiVersion"], out["kind"]) == (doc["apiVersion"], doc["kind"])
    # everything the manifest says is kept (unknown fields too); Go zero values may be added
    assert missing(doc, out, path="") == []
    assert model.from_dict(out).to_dict() == out


def test_v1beta1_canary_example_fields() -> None:
    rollout = Rollout.from_dict(example("Rollout", "010"))
    canary = rollout.spec.strategy.canary
    assert canary is not None and canary.steps is not None and canary.traffic_routings is not None
    assert rollout.spec.workload_ref.kind == "Deployment"
    assert rollout.spec.strategy.rolling_style() == RollingStyle.CANARY
    first, second = canary.steps
    assert first.replicas == 1 and first.matches is not None
    assert first.matches[0].headers is not None and first.matches[0].headers[0].name == "user-agent"
    assert first.matches[1].query_params is not None and first.matches[1].query_params[0].value == "pc"
    assert first.matches[2].path is not None and first.matches[2].path.value == "/pc"
    assert (second.replicas, second.traffic) == ("50%", "50%")
    ref = canary.traffic_routings[0]
    assert ref.ingress is not None and (ref.ingress.class_type, ref.ingress.name) == ("nginx", "echoserver")
    assert ref.custom_network_refs is not None and ref.custom_network_refs[0].kind == "VirtualService"
    assert first.pause.duration is None


def test_v1beta1_blue_green_example_fields() -> None:
    rollout = Rollout.from_dict(example("Rollout", "018"))
    strategy = rollout.spec.strategy
    assert strategy.rolling_style() == RollingStyle.BLUE_GREEN
    assert [s.traffic for s in strategy.steps()] == ["0%", "0%", "50%", "100%"]
    assert strategy.traffic_routings() is not None


def test_v1alpha1_example_fields() -> None:
    rollout = RolloutV1alpha1.from_dict(example("Rollout", "008"))
    canary = rollout.spec.strategy.canary
    assert canary is not None and canary.steps is not None
    assert rollout.spec.object_ref.workload_ref is not None
    assert rollout.spec.object_ref.workload_ref.name == "echoserver"
    assert (canary.steps[0].weight, canary.steps[0].replicas) == (5, "20%")


def test_trafficrouting_and_batchrelease_examples() -> None:
    tr = TrafficRouting.from_dict(example("TrafficRouting", "001"))
    assert tr.spec.object_ref[0].ingress is not None and tr.spec.object_ref[0].ingress.class_type == "mse"
    modifier = tr.spec.strategy.request_header_modifier
    assert modifier is not None and modifier.set is not None and modifier.set[0].name == "x-mse-tag"
    br = BatchReleaseV1alpha1.from_dict(example("BatchRelease", "004"))
    assert br.spec.target_reference.workload_ref is not None
    assert [b.canary_replicas for b in br.spec.release_plan.batches or []] == [1, 2, 3, 5]


def test_go_zero_values_are_written_like_go() -> None:
    """Fields without omitempty upstream are always serialised (and the CRD requires them)."""
    br = BatchRelease.from_dict({"spec": {"releasePlan": {"batches": [{"canaryReplicas": "10%"}]}}})
    assert br.to_dict()["spec"]["releasePlan"]["enableExtraWorkloadForCanary"] is False
    status = RolloutStatus.from_dict({"phase": "Healthy"}).to_dict()
    assert status == {"phase": "Healthy", "currentStepIndex": 0, "currentStepState": ""}
    step = Rollout.from_dict(v1beta1_rollout()).to_dict()["spec"]["strategy"]["canary"]["steps"][0]
    assert step == {"replicas": "20%", "pause": {}}
    assert Rollout.from_dict(v1beta1_rollout()).to_dict()["spec"]["disabled"] is False


def test_status_aliases_and_sub_status() -> None:
    raw: dict[str, Any] = {
        "phase": "Progressing",
        "currentStepIndex": 2,
        "currentStepState": "StepPaused",
        "canaryStatus": {
            "observedRolloutID": "r1",
            "podTemplateHash": "abc",
            "nextStepIndex": 3,
            "finalisingStep": "",
            "currentStepIndex": 2,
            "currentStepState": "StepPaused",
            "canaryRevision": "rev",
            "canaryReplicas": 2,
            "canaryReadyReplicas": 1,
            "lastUpdateTime": "2024-05-01T12:00:00Z",
        },
    }
    status = RolloutStatus.from_dict(raw)
    sub = status.sub_status()
    assert sub is not None and sub.observed_rollout_id == "r1"
    assert sub.current_step_state == CanaryStepState.STEP_PAUSED
    assert status.to_dict() == raw


@pytest.mark.parametrize(
    ("path", "value"),
    [
        pytest.param(
            ("spec", "strategy", "canary", "steps", 0, "pause", "duration"), "10", id="duration as text"
        ),
        pytest.param(("spec", "disabled"), "no", id="disabled not bool"),
        pytest.param(("spec", "strategy", "canary", "steps", 0, "replicas"), 1.5, id="replicas float"),
    ],
)
def test_bad_types_are_rejected(path: tuple[Any, ...], value: Any) -> None:
    doc = v1beta1_rollout()
    node: Any = doc
    for key in path[:-1]:
        node = node.setdefault(key, {}) if isinstance(node, dict) else node[key]
    node[path[-1]] = value
    with pytest.raises(ValidationError):
        Rollout.from_dict(doc)
