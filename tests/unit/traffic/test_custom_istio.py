"""Istio VirtualService/DestinationRule through our built-in Lua scripts and upstream's contract."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.traffic.custom import (
    ORIGINAL_SPEC_ANNOTATION,
    desired_object,
    differs,
    encode_original,
    original_data,
    restored_object,
)
from kruise.traffic.scripts import builtin_custom_script
from tests.unit.traffic.builders import CANARY, JSON, STABLE, destination, header, intent, virtual_service

VS = builtin_custom_script("networking.istio.io/v1", "VirtualService") or ""
DR = builtin_custom_script("networking.istio.io/v1beta1", "DestinationRule") or ""


def http_of(obj: JSON, step_intent=None, script: str = VS, params=None) -> list[JSON]:
    return desired_object(obj, script, step_intent or intent(20), params)["spec"]["http"]


WEIGHT_CASES = [
    pytest.param(
        [{"route": [destination(STABLE)]}],
        20,
        [{"route": [destination(STABLE, 80), destination(CANARY, 20)]}],
        id="a single stable route is split 80/20",
    ),
    pytest.param(
        [{"route": [destination(f"{STABLE}.ns.svc.cluster.local", 100)]}],
        5,
        [{"route": [destination(f"{STABLE}.ns.svc.cluster.local", 95), destination(CANARY, 5)]}],
        id="a fully qualified stable host is recognised",
    ),
    pytest.param(
        [{"route": [destination(STABLE, 60), destination("other", 40)]}],
        25,
        [{"route": [destination(STABLE, 45), destination("other", 30), destination(CANARY, 25)]}],
        id="existing splits shrink proportionally",
    ),
    pytest.param(
        [{"route": [destination(STABLE, 33), destination("other", 67)]}],
        10,
        [{"route": [destination(STABLE, 30), destination("other", 60), destination(CANARY, 10)]}],
        id="rounding leftovers go to the first route so the rule sums to 100",
    ),
    pytest.param(
        [
            {"match": [{"uri": {"prefix": "/api"}}], "route": [destination(STABLE)]},
            {"route": [destination(STABLE)]},
        ],
        20,
        [
            {"match": [{"uri": {"prefix": "/api"}}], "route": [destination(STABLE)]},
            {"route": [destination(STABLE, 80), destination(CANARY, 20)]},
        ],
        id="rules with match conditions are left alone, as upstream",
    ),
    pytest.param(
        [{"route": [destination("other")]}],
        20,
        [{"route": [destination("other")]}],
        id="rules not sending to the stable service are left alone",
    ),
]


@pytest.mark.parametrize(("http", "weight", "expected"), WEIGHT_CASES)
def test_virtual_service_weights(http: list[JSON], weight: int, expected: list[JSON]) -> None:
    assert http_of(virtual_service(*http), intent(weight)) == expected


def test_tcp_and_tls_rules_are_weighted_too() -> None:
    vs = virtual_service({"route": [destination(STABLE)]})
    vs["spec"]["tcp"] = [{"route": [destination(STABLE)]}]
    vs["spec"]["tls"] = [{"match": [{"sniHosts": ["a"]}], "route": [destination(STABLE)]}]
    spec = desired_object(vs, VS, intent(30))["spec"]
    assert spec["tcp"] == [{"route": [destination(STABLE, 70), destination(CANARY, 30)]}]
    assert spec["tls"] == vs["spec"]["tls"]


def test_matches_become_rules_in_front_routing_to_the_canary() -> None:
    matches = [
        {"headers": [header("user", "beta"), header("agent", ".*Mobile.*", "RegularExpression")]},
        {"path": {"type": "PathPrefix", "value": "/beta"}, "queryParams": [header("v", "2")]},
    ]
    modifier = {"set": [{"name": "x-gray", "value": "1"}], "remove": ["x-old"]}
    http = http_of(virtual_service({"route": [destination(STABLE)]}), intent(None, matches, modifier))
    request = {"set": {"x-gray": "1"}, "remove": ["x-old"]}
    assert http == [
        {
            "match": [{"uri": {"prefix": "/beta"}, "queryParams": {"v": {"exact": "2"}}}],
            "route": [destination(CANARY)],
            "headers": {"request": request},
        },
        {
            "match": [{"headers": {"user": {"exact": "beta"}, "agent": {"regex": ".*Mobile.*"}}}],
            "route": [destination(CANARY)],
            "headers": {"request": request},
        },
        {"route": [destination(STABLE)]},
    ]


def test_one_service_for_both_versions_routes_to_the_canary_subset() -> None:
    both = intent(20, canary=STABLE)
    http = http_of(virtual_service({"route": [destination(STABLE)]}), both)
    assert http == [{"route": [destination(STABLE, 80), destination(STABLE, 20, subset="canary")]}]
    named = http_of(
        virtual_service({"route": [destination(STABLE)]}),
        both,
        params={"istio.destinationRule.canarySubsetName": "gray"},
    )
    assert named[0]["route"][1]["destination"]["subset"] == "gray"


def destination_rule(*subsets: JSON) -> JSON:
    return {
        "apiVersion": "networking.istio.io/v1",
        "kind": "DestinationRule",
        "metadata": {"name": "dr", "namespace": "ns"},
        "spec": {"host": STABLE, "subsets": list(subsets)},
    }


def test_destination_rule_gains_canary_subset_and_pins_named_stable_subset() -> None:
    revs = {"revision_key": "pod-template-hash", "stable_revision": "v1", "canary_revision": "v2"}
    dr = destination_rule({"name": "base", "labels": {"app": "echo"}})
    params = {"istio.destinationRule.stableSubsetName": "base"}
    subsets = desired_object(dr, DR, intent(20, **revs), params)["spec"]["subsets"]
    assert subsets == [
        {"name": "base", "labels": {"app": "echo", "pod-template-hash": "v1"}},
        {"name": "canary", "labels": {"pod-template-hash": "v2"}},
    ]
    canary_only = {"istio.destinationRule.canarySubsetName": "v2-pods"}
    subsets = desired_object(destination_rule(), DR, intent(20, **revs), canary_only)["spec"]["subsets"]
    assert subsets == [{"name": "v2-pods", "labels": {"pod-template-hash": "v2"}}]


def test_destination_rule_without_subset_params_gains_upstreams_gray_canary_subset() -> None:
    """Upstream's built-in DestinationRule script (``KR:lua_configuration/networking.istio.io/
    DestinationRule/trafficRouting.lua``), as e2e "V1->V2: Route traffic with header matches and
    weight for VirtualService and DestinationRule" (``KR:test/e2e/rollout_test.go:2701``) expects:
    a subset ``canary`` selecting ``istio.service.tag: gray`` is appended after the user's."""
    revs = {"revision_key": "pod-template-hash", "stable_revision": "v1", "canary_revision": "v2"}
    dr = destination_rule({"labels": {"version": "base"}, "name": "echoserver"})
    subsets = desired_object(dr, DR, intent(None, [{"headers": [header("user-agent", "pc")]}], **revs))[
        "spec"
    ]["subsets"]
    assert subsets == [
        {"labels": {"version": "base"}, "name": "echoserver"},
        {"labels": {"istio.service.tag": "gray"}, "name": "canary"},
    ]
    assert desired_object(destination_rule(), DR, intent(20))["spec"]["subsets"] == [
        {"labels": {"istio.service.tag": "gray"}, "name": "canary"}
    ]


def test_original_is_saved_once_and_every_step_starts_from_it() -> None:
    vs = virtual_service({"route": [destination(STABLE)]}, labels={"app": "echo"}, annotations={"team": "a"})
    step1 = desired_object(vs, VS, intent(20))
    saved = step1["metadata"]["annotations"][ORIGINAL_SPEC_ANNOTATION]
    assert json.loads(saved) == {"spec": vs["spec"], "labels": {"app": "echo"}, "annotations": {"team": "a"}}
    assert step1["metadata"]["labels"] == {"app": "echo"}
    assert step1["metadata"]["annotations"]["team"] == "a"
    step2 = desired_object(step1, VS, intent(50))
    assert step2["metadata"]["annotations"][ORIGINAL_SPEC_ANNOTATION] == saved
    assert step2["spec"]["http"] == [{"route": [destination(STABLE, 50), destination(CANARY, 50)]}]
    assert not differs(step2, desired_object(step2, VS, intent(50)))


def test_restore_puts_spec_labels_and_annotations_back() -> None:
    vs = virtual_service({"route": [destination(STABLE)]}, labels={"app": "echo"}, annotations={"team": "a"})
    edited = desired_object(vs, VS, intent(20))
    edited["metadata"]["labels"]["added"] = "later"
    restored = restored_object(edited)
    assert restored is not None
    assert restored["spec"] == vs["spec"]
    assert restored["metadata"]["labels"] == {"app": "echo"}
    assert restored["metadata"]["annotations"] == {"team": "a"}
    assert restored["metadata"]["resourceVersion"] == "7"
    assert restored_object(vs) is None


def test_encode_original_is_compact_and_ordered_like_go() -> None:
    text = encode_original({"annotations": {"b": "2", "a": "1"}, "spec": {"z": 1, "a": [{"y": 1, "b": 2}]}})
    assert text == '{"spec":{"a":[{"b":2,"y":1}],"z":1},"annotations":{"a":"1","b":"2"}}'


def test_original_data_reads_the_object_when_nothing_is_saved() -> None:
    vs = virtual_service({"route": [destination(STABLE)]})
    assert original_data(vs) == {"spec": vs["spec"]}


def test_user_defined_script_receives_upstream_contract() -> None:
    script = """
    local data = obj.data
    data.spec.http[1].route[1].weight = obj.stableWeight
    local canary = {destination = {host = obj.canaryService}, weight = obj.canaryWeight}
    table.insert(data.spec.http[1].route, canary)
    data.labels = data.labels or {}
    data.labels["canary-weight"] = tostring(obj.canaryWeight)
    data.annotations = {["seen-stable"] = obj.stableService}
    return data
    """
    vs = virtual_service({"route": [destination(STABLE)]})
    out = desired_object(vs, script, intent(15))
    assert out["spec"]["http"][0]["route"] == [destination(STABLE, 85), destination(CANARY, 15)]
    assert out["metadata"]["labels"] == {"canary-weight": "15"}
    assert out["metadata"]["annotations"]["seen-stable"] == STABLE
    assert ORIGINAL_SPEC_ANNOTATION in out["metadata"]["annotations"]


def test_matches_only_hands_minus_one_weight_to_scripts() -> None:
    script = "obj.data.spec.seen = {obj.canaryWeight, obj.stableWeight}; return obj.data"
    out = desired_object(virtual_service(), script, intent(None, [{"headers": [header("a", "b")]}]))
    assert out["spec"]["seen"] == [-1, 101]


def test_empty_objects_survive_the_round_trip_through_lua() -> None:
    vs = virtual_service({"route": [destination(STABLE)], "corsPolicy": {}})
    assert desired_object(vs, VS, intent(10))["spec"]["http"][0]["corsPolicy"] == {}


def test_input_object_is_not_mutated() -> None:
    vs = virtual_service({"route": [destination(STABLE)]})
    before = copy.deepcopy(vs)
    desired_object(vs, VS, intent(20))
    assert vs == before


# ------------------------------------------------------------------ properties
@st.composite
def stable_rules(draw: st.DrawFn) -> JSON:
    hosts = draw(st.lists(st.sampled_from(["a", "b", "c"]), max_size=3, unique=True))
    hosts = [STABLE, *hosts]
    if draw(st.booleans()):
        return {"route": [destination(h) for h in hosts]}
    cuts = sorted(draw(st.lists(st.integers(0, 100), min_size=len(hosts) - 1, max_size=len(hosts) - 1)))
    weights = [b - a for a, b in zip([0, *cuts], [*cuts, 100], strict=True)]
    return {"route": [destination(h, w) for h, w in zip(hosts, weights, strict=True)]}


@given(st.lists(stable_rules(), min_size=1, max_size=3), st.integers(0, 100))
def test_virtual_service_weights_always_sum_to_100(http: list[JSON], weight: int) -> None:
    for out_rule in http_of(virtual_service(*http), intent(weight)):
        assert sum(route["weight"] for route in out_rule["route"]) == 100
        assert out_rule["route"][-1] == destination(CANARY, weight)


def test_virtual_service_header_queryparams_path_matches_as_upstreams_e2e() -> None:
    """Upstream e2e "V1->V2: Route traffic with header/queryParams/path matches and weight using
    rollout for VirtualService" (``KR:test/e2e/rollout_test.go:2597``): one rule per match goes in
    front of the user's rules, the last match first, each to the canary Service; a weight step
    splits the stable route."""
    vs = virtual_service({"route": [{"destination": {"host": STABLE}}]})
    matches = [
        {"headers": [header("user-agent", "pc")]},
        {"queryParams": [header("user-agent", "pc")]},
        {"path": {"value": "/pc"}},
    ]
    to_canary = [{"destination": {"host": CANARY}}]
    assert http_of(vs, intent(None, matches)) == [
        {"match": [{"uri": {"prefix": "/pc"}}], "route": to_canary},
        {"match": [{"queryParams": {"user-agent": {"exact": "pc"}}}], "route": to_canary},
        {"match": [{"headers": {"user-agent": {"exact": "pc"}}}], "route": to_canary},
        {"route": [{"destination": {"host": STABLE}}]},
    ]
    assert http_of(vs, intent(50)) == [
        {
            "route": [
                {"destination": {"host": STABLE}, "weight": 50},
                {"destination": {"host": CANARY}, "weight": 50},
            ]
        }
    ]
