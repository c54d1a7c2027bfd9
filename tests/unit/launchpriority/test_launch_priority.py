"""Container launch priority: who asks, what the webhook injects, and the controller's steps."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest

from kruise.workloads.launchpriority.core import (
    BARRIER_ENV,
    COMPLETED_KEY,
    ORDERED,
    PRIORITY_ANNOTATION,
    PRIORITY_ENV,
    Step,
    container_priority,
    decide,
    inject,
    needs_attention,
    next_priorities,
    priorities,
)
from kruise.workloads.sidecarset.scope import pod_match_condition

JSON = dict[str, Any]


def container(name: str, priority: str | None = None) -> JSON:
    env = [{"name": "A", "value": "1"}] + (
        [{"name": PRIORITY_ENV, "value": priority}] if priority is not None else []
    )
    return {"name": name, "image": "busybox", "env": env}


def pod(*containers: JSON, annotations: dict[str, str] | None = None, name: str = "p") -> JSON:
    return {
        "metadata": {"name": name, "annotations": annotations or {}},
        "spec": {"containers": list(containers)},
    }


@pytest.mark.parametrize(
    ("the_pod", "expected"),
    [
        pytest.param(pod(container("a"), container("b"), container("c"),
                         annotations={PRIORITY_ANNOTATION: ORDERED}),
                     [0, -1, -2], id="Ordered: container order, first is 0"),
        pytest.param(pod(container("a"), container("b", "10")), [0, 10], id="env: missing means 0"),
        pytest.param(pod(container("a", "5"), container("b", "5")), None, id="all equal: no order"),
        pytest.param(pod(container("a", "0"), container("b")), None, id="all zero: no order"),
        pytest.param(pod(container("a", "3"), annotations={PRIORITY_ANNOTATION: "Ordered"}), None,
                     id="one container: nothing to order"),
        pytest.param(pod(container("a"), container("b"), annotations={PRIORITY_ANNOTATION: "Other"}), None,
                     id="another annotation value asks nothing"),
    ],
)  # fmt: skip
def test_priorities(the_pod: JSON, expected: list[int] | None) -> None:
    assert priorities(the_pod) == expected


def test_a_priority_that_is_not_an_integer_is_refused_with_strconvs_words() -> None:
    with pytest.raises(ValueError, match=re.escape('strconv.Atoi: parsing "high": invalid syntax')):
        priorities(pod(container("a", "high"), container("b")))


def test_inject_appends_the_barrier_env_of_each_priority_as_upstream_e2e_expects() -> None:
    the_pod = pod(container("c1"), container("c2", "10"), name="web-1")
    inject(the_pod, [0, 10])
    first, second = the_pod["spec"]["containers"]
    assert first["env"][1] == {
        "name": BARRIER_ENV,
        "valueFrom": {"configMapKeyRef": {"name": "web-1-barrier", "key": "p_0"}},
    }
    assert second["env"][2]["valueFrom"]["configMapKeyRef"] == {"name": "web-1-barrier", "key": "p_10"}
    assert [container_priority(c) for c in (first, second)] == [0, 10]


def test_inject_names_a_pod_that_has_only_generate_name() -> None:
    the_pod = {"metadata": {"generateName": "web-"}, "spec": {"containers": [container("a"), container("b")]}}
    inject(the_pod, [0, -1], random.Random(1))
    name = the_pod["metadata"]["name"]
    assert name.startswith("web-") and len(name) == 9
    assert (
        the_pod["spec"]["containers"][1]["env"][-1]["valueFrom"]["configMapKeyRef"]["name"]
        == f"{name}-barrier"
    )


def ordered(ready: set[str] = frozenset(), **annotations: str) -> JSON:  # type: ignore[assignment]
    the_pod = pod(container("a"), container("b"), container("c"), annotations=annotations)
    inject(the_pod, [0, -1, -2])
    the_pod["status"] = {"containerStatuses": [{"name": n, "ready": n in ready} for n in ("a", "b", "c")]}
    return the_pod


@pytest.mark.parametrize(
    ("ready", "barrier", "step"),
    [
        pytest.param(set(), {}, Step(add="p_0"), id="nothing ready: open the highest"),
        pytest.param(set(), {"p_0": "true"}, Step(), id="highest open, still starting: wait"),
        pytest.param({"a"}, {"p_0": "true"}, Step(add="p_-1"), id="a ready: open b's"),
        pytest.param({"a", "b"}, {"p_0": "true", "p_-1": "true"}, Step(add="p_-2", complete=True),
                     id="last one: open and mark completed"),
        pytest.param({"a", "b"}, {"p_0": "true", "p_-1": "true", "p_-2": "true"}, Step(complete=True),
                     id="lowest already open: completed"),
        pytest.param({"a", "b", "c"}, {}, Step(complete=True), id="all ready: completed"),
    ],
)  # fmt: skip
def test_decide_opens_one_priority_at_a_time(ready: set[str], barrier: dict[str, str], step: Step) -> None:
    assert decide(ordered(ready), barrier) == step


def test_needs_attention_skips_completed_and_containers_ready_pods() -> None:
    assert needs_attention(ordered())
    assert not needs_attention(ordered(**{COMPLETED_KEY: "true"}))
    done = ordered()
    done["status"]["conditions"] = [{"type": "ContainersReady", "status": "True"}]
    assert not needs_attention(done)
    assert not needs_attention(pod(container("a"), container("b")))  # no barrier env
    assert next_priorities(ordered({"a"})) == [-2, -1]


def test_the_pod_webhook_condition_ors_the_fixed_terms_with_the_sidecarsets() -> None:
    assert pod_match_condition([], ("(x)",)) == "(x)"
    assert pod_match_condition([]) == "false"
