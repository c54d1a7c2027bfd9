"""Which nodes run a daemon pod: selectors, affinity, taints and tolerations, as Kubernetes decides."""

from __future__ import annotations

from typing import Any

import pytest

from kruise.workloads.daemonset.nodes import NodeFit, daemon_pod_spec, node_fit
from kruise.workloads.nodepredicates import pin_to_node, target_node, tolerates
from tests.unit.daemonset.builders import node

JSON = dict[str, Any]
RUN, KEEP, NO = NodeFit(True, True), NodeFit(False, True), NodeFit(False, False)


def fit(pod_spec: JSON, target: JSON) -> NodeFit:
    return node_fit(daemon_pod_spec({"containers": [{"name": "c", "image": "i"}], **pod_spec}), target)


def required(*terms: JSON) -> JSON:
    return {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}
            }
        }
    }


def expr(key: str, operator: str, *values: str) -> JSON:
    return {
        "matchExpressions": [
            {"key": key, "operator": operator, **({"values": list(values)} if values else {})}
        ]
    }


ELIGIBILITY = [
    pytest.param({}, node("a"), RUN, id="a plain node runs the daemon"),
    pytest.param(
        {"nodeSelector": {"disk": "ssd"}}, node("a", {"disk": "ssd"}), RUN, id="nodeSelector matches"
    ),
    pytest.param(
        {"nodeSelector": {"disk": "ssd"}}, node("a", {"disk": "hdd"}), NO, id="nodeSelector differs"
    ),
    pytest.param({"nodeSelector": {"disk": "ssd"}}, node("a"), NO, id="nodeSelector label missing"),
    pytest.param({"nodeName": "b"}, node("a"), NO, id="template nodeName names another node"),
    pytest.param({"nodeName": "a"}, node("a"), RUN, id="template nodeName names this node"),
    pytest.param(required(expr("zone", "In", "z1", "z2")), node("a", {"zone": "z2"}), RUN, id="affinity In"),
    pytest.param(required(expr("zone", "In", "z1")), node("a", {"zone": "z2"}), NO, id="affinity In misses"),
    pytest.param(
        required(expr("zone", "NotIn", "z1")), node("a"), RUN, id="affinity NotIn without the label"
    ),
    pytest.param(required(expr("gpu", "Exists")), node("a", {"gpu": ""}), RUN, id="affinity Exists"),
    pytest.param(
        required(expr("gpu", "DoesNotExist")), node("a", {"gpu": "1"}), NO, id="affinity DoesNotExist"
    ),
    pytest.param(required(expr("cores", "Gt", "8")), node("a", {"cores": "16"}), RUN, id="affinity Gt"),
    pytest.param(required(expr("cores", "Lt", "8")), node("a", {"cores": "16"}), NO, id="affinity Lt"),
    pytest.param(
        required(expr("cores", "Gt", "8")), node("a", {"cores": "many"}), NO, id="affinity Gt not a number"
    ),
    pytest.param(
        required(expr("zone", "In", "z9"), expr("zone", "In", "z1")),
        node("a", {"zone": "z1"}),
        RUN,
        id="affinity terms are ORed",
    ),
    pytest.param(
        required({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a"]}]}),
        node("a"),
        RUN,
        id="affinity matchFields on the node name",
    ),
    pytest.param(required({}), node("a"), NO, id="an empty affinity term matches nothing"),
    pytest.param(required(), node("a"), NO, id="no affinity terms match nothing"),
    pytest.param(
        {},
        node("a", taints=[{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]),
        KEEP,
        id="NoSchedule taint keeps an existing pod only",
    ),
    pytest.param(
        {}, node("a", taints=[{"key": "dedicated", "effect": "NoExecute"}]), NO, id="NoExecute taint evicts"
    ),
    pytest.param(
        {},
        node("a", taints=[{"key": "dedicated", "effect": "PreferNoSchedule"}]),
        RUN,
        id="PreferNoSchedule is ignored",
    ),
    pytest.param(
        {"tolerations": [{"key": "dedicated", "operator": "Equal", "value": "x", "effect": "NoSchedule"}]},
        node("a", taints=[{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]),
        RUN,
        id="a matching toleration",
    ),
    pytest.param(
        {"tolerations": [{"key": "dedicated", "value": "y"}]},
        node("a", taints=[{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]),
        KEEP,
        id="a toleration with another value",
    ),
    pytest.param(
        {"tolerations": [{"operator": "Exists"}]},
        node("a", taints=[{"key": "anything", "effect": "NoExecute"}]),
        RUN,
        id="an empty key with Exists tolerates every taint",
    ),
    pytest.param(
        {},
        node(
            "a",
            taints=[{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}],
            unschedulable=True,
        ),
        RUN,
        id="a cordoned node still runs daemons (default toleration)",
    ),
    pytest.param(
        {},
        node("a", taints=[{"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}]),
        RUN,
        id="not-ready tolerated",
    ),
    pytest.param(
        {},
        node("a", taints=[{"key": "node.kubernetes.io/network-unavailable", "effect": "NoSchedule"}]),
        KEEP,
        id="network-unavailable is not tolerated without hostNetwork",
    ),
    pytest.param(
        {"hostNetwork": True},
        node("a", taints=[{"key": "node.kubernetes.io/network-unavailable", "effect": "NoSchedule"}]),
        RUN,
        id="network-unavailable is tolerated with hostNetwork",
    ),
    pytest.param(
        {},
        node(
            "real",
            {"type": "real"},
            taints=[{"key": "kruise.io/real-node", "value": "true", "effect": "NoSchedule"}],
        ),
        KEEP,
        id="the test cluster's real node is skipped without a toleration",
    ),
]


@pytest.mark.parametrize(("pod_spec", "target", "expected"), ELIGIBILITY)
def test_node_fit(pod_spec: JSON, target: JSON, expected: NodeFit) -> None:
    assert fit(pod_spec, target) == expected


def test_default_tolerations_are_added_once_and_keep_the_users() -> None:
    own = {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}
    spec = daemon_pod_spec({"tolerations": [own, {"key": "x", "operator": "Exists"}]})
    keys = [(t.get("key"), t.get("effect")) for t in spec["tolerations"]]
    assert keys == [
        ("node.kubernetes.io/unschedulable", "NoSchedule"),
        ("x", None),
        ("node.kubernetes.io/not-ready", "NoExecute"),
        ("node.kubernetes.io/unreachable", "NoExecute"),
        ("node.kubernetes.io/disk-pressure", "NoSchedule"),
        ("node.kubernetes.io/memory-pressure", "NoSchedule"),
        ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ]


def test_toleration_effect_must_match_when_set() -> None:
    assert not tolerates(
        {"key": "k", "operator": "Exists", "effect": "NoSchedule"}, {"key": "k", "effect": "NoExecute"}
    )
    assert tolerates({"key": "k", "operator": "Exists"}, {"key": "k", "effect": "NoExecute"})


def test_pinning_replaces_required_terms_and_keeps_the_rest() -> None:
    affinity = required(expr("zone", "In", "z1"))["affinity"]
    affinity["podAntiAffinity"] = {"x": 1}
    affinity["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"] = [{"weight": 1}]
    pinned = pin_to_node(affinity, "n7")
    assert pinned["podAntiAffinity"] == {"x": 1}
    assert pinned["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"] == [{"weight": 1}]
    assert pinned["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n7"]}]}]
    }
    assert affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0][
        "matchExpressions"
    ], "the input is not changed"


def test_target_node_reads_node_name_then_the_pinned_affinity() -> None:
    assert target_node({"spec": {"nodeName": "a", "affinity": pin_to_node(None, "b")}}) == "a"
    assert target_node({"spec": {"affinity": pin_to_node(None, "b")}}) == "b"
    assert target_node({"spec": {}}) is None
