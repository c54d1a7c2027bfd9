"""The CRD defaults of Rollout and TrafficRouting (upstream ``+kubebuilder:default``), applied in code."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from kruise.rollouts.admission import default_rollout, default_trafficrouting
from tests.unit.rollouts.helpers import example, v1alpha1_rollout, v1beta1_rollout


def test_rollout_defaults() -> None:
    doc = v1beta1_rollout(
        canary={
            "steps": [
                {
                    "replicas": 1,
                    "matches": [
                        {
                            "headers": [
                                {"name": "a", "value": "b"},
                                {"name": "c", "value": "d", "type": "RegularExpression"},
                            ],
                            "queryParams": [{"name": "q", "value": "v"}],
                            "path": {},
                        },
                        {"path": {"value": "/x"}},
                    ],
                }
            ],
            "trafficRoutings": [
                {"service": "s", "ingress": {"name": "i"}},
                {"service": "t", "gracePeriodSeconds": 0},
            ],
        }
    )
    out = default_rollout(doc)
    assert out["spec"]["disabled"] is False
    step = out["spec"]["strategy"]["canary"]["steps"][0]
    assert [h["type"] for h in step["matches"][0]["headers"]] == ["Exact", "RegularExpression"]
    assert step["matches"][0]["queryParams"][0]["type"] == "Exact"
    assert step["matches"][0]["path"] == {"type": "PathPrefix", "value": "/"}
    assert step["matches"][1]["path"] == {"type": "PathPrefix", "value": "/x"}
    assert [r["gracePeriodSeconds"] for r in out["spec"]["strategy"]["canary"]["trafficRoutings"]] == [3, 0]
    assert "classType" not in out["spec"]["strategy"]["canary"]["trafficRoutings"][0]["ingress"]
    assert (
        "gracePeriodSeconds" not in doc["spec"]["strategy"]["canary"]["trafficRoutings"][0]
    )  # input untouched


def test_defaults_only_fill_existing_objects() -> None:
    out = default_rollout(v1beta1_rollout())
    assert out["spec"]["strategy"] == v1beta1_rollout()["spec"]["strategy"]
    assert default_rollout({"apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout"}) == {
        "apiVersion": "rollouts.kruise.io/v1beta1",
        "kind": "Rollout",
    }


def test_v1alpha1_and_blue_green_are_defaulted_too() -> None:
    alpha = default_rollout(
        v1alpha1_rollout(canary={"steps": [{"weight": 5}], "trafficRoutings": [{"service": "s"}]})
    )
    assert alpha["spec"]["disabled"] is False
    assert alpha["spec"]["strategy"]["canary"]["trafficRoutings"][0]["gracePeriodSeconds"] == 3
    blue = default_rollout(example("Rollout", "018"))
    assert blue["spec"]["strategy"]["blueGreen"]["trafficRoutings"][0]["gracePeriodSeconds"] == 3


def test_trafficrouting_defaults() -> None:
    out = default_trafficrouting(example("TrafficRouting", "001"))
    assert out["spec"]["objectRef"][0]["gracePeriodSeconds"] == 3
    assert out["spec"]["strategy"]["matches"][0]["headers"][0]["type"] == "Exact"  # already set: kept


_json: Any = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                ["spec", "strategy", "canary", "steps", "matches", "path", "headers", "trafficRoutings", "x"]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=20,
)


@given(_json)
def test_defaulting_is_idempotent_and_total(value: Any) -> None:
    """Any JSON shape (wrong types included), at the top or deep inside, is defaulted once, without error."""
    deep = {"strategy": {"canary": {"steps": [{"matches": [{"headers": value, "path": value}]}]}}}
    for spec in (value, deep):
        doc = {"apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout", "spec": spec}
        once = default_rollout(doc)
        assert default_rollout(once) == once
        assert default_trafficrouting(default_trafficrouting(doc)) == default_trafficrouting(doc)
