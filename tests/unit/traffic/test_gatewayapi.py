"""HTTPRoute rules per step: upstream gateway_test.go scenarios, re-derived for our rules."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.traffic.gatewayapi import desired_rules, normalise_match, restored_rules
from tests.unit.traffic.builders import CANARY, JSON, STABLE, header, ref, rule

OTHER = "other"
MODIFIER = {"set": [{"name": "x-canary", "value": "yes"}]}


def desired(
    rules: list[JSON], weight: int | None, matches: list[JSON] | None = None, mod: JSON | None = None
):
    return desired_rules(rules, STABLE, CANARY, weight, matches or [], mod)


WEIGHT_CASES = [
    pytest.param(
        [rule(ref(STABLE, 1))],
        20,
        [rule(ref(STABLE, 80), ref(CANARY, 20))],
        id="one stable rule gains a canary backend at 20 percent",
    ),
    pytest.param(
        [rule(ref(STABLE, 80), ref(CANARY, 20))],
        50,
        [rule(ref(STABLE, 50), ref(CANARY, 50))],
        id="an existing canary backend is overwritten in place",
    ),
    pytest.param(
        [rule(ref(CANARY, 0), ref(STABLE, 100))],
        30,
        [rule(ref(CANARY, 30), ref(STABLE, 70))],
        id="a pre-declared canary backend keeps its position",
    ),
    pytest.param(
        [rule(ref(OTHER, 1), path="/other"), rule(ref(STABLE, 1), path="/")],
        10,
        [rule(ref(OTHER, 1), path="/other"), rule(ref(STABLE, 90), ref(CANARY, 10), path="/")],
        id="rules without the stable service are left alone",
    ),
    pytest.param(
        [rule(ref(STABLE, 1), path="/a"), rule(ref(STABLE, 1), path="/b")],
        100,
        [
            rule(ref(STABLE, 0), ref(CANARY, 100), path="/a"),
            rule(ref(STABLE, 0), ref(CANARY, 100), path="/b"),
        ],
        id="every stable rule is weighted, 100 percent sends all to canary",
    ),
    pytest.param(
        [rule(ref(STABLE, 1)), rule(ref(CANARY, 1), path="/x")],
        20,
        [rule(ref(STABLE, 80), ref(CANARY, 20))],
        id="the canary-only clone of an earlier match step is dropped",
    ),
    pytest.param(
        [rule(ref(STABLE, 1, port=8080))],
        0,
        [rule(ref(STABLE, 100, port=8080), ref(CANARY, 0, port=8080))],
        id="zero percent keeps a zero-weight canary backend on the stable port",
    ),
]


@pytest.mark.parametrize(("rules", "weight", "expected"), WEIGHT_CASES)
def test_weights(rules: list[JSON], weight: int, expected: list[JSON]) -> None:
    assert desired(rules, weight) == expected


def test_request_header_modifier_goes_on_the_canary_backend_in_weight_mode() -> None:
    out = desired([rule(ref(STABLE, 1))], 20, mod=MODIFIER)
    assert out[0]["backendRefs"][1]["filters"] == [
        {"type": "RequestHeaderModifier", "requestHeaderModifier": MODIFIER}
    ]
    assert "filters" not in out[0]["backendRefs"][0]
    # the next step without a modifier takes it off again
    assert "filters" not in desired(out, 30)[0]["backendRefs"][1]


MATCH_CASES = [
    pytest.param(
        [rule(ref(STABLE, 1))],
        [{"headers": [header("user", "beta")]}],
        [
            rule(ref(STABLE, 1)),
            {
                "matches": [
                    {"path": {"type": "PathPrefix", "value": "/"}, "headers": [header("user", "beta")]}
                ],
                "backendRefs": [ref(CANARY, 1)],
            },
        ],
        id="a header match clones the stable rule for the canary",
    ),
    pytest.param(
        [rule(ref(STABLE, 1))],
        [{"headers": [header("user", "beta", None)], "queryParams": [header("v", "2", None)]}],
        [
            rule(ref(STABLE, 1)),
            {
                "matches": [
                    {
                        "path": {"type": "PathPrefix", "value": "/"},
                        "headers": [header("user", "beta")],
                        "queryParams": [header("v", "2")],
                    }
                ],
                "backendRefs": [ref(CANARY, 1)],
            },
        ],
        id="header and query types default to Exact",
    ),
    pytest.param(
        [rule(ref(STABLE, 1))],
        [{"headers": [header("a", "1")]}, {"headers": [header("b", "2", "RegularExpression")]}],
        [
            rule(ref(STABLE, 1)),
            {
                "matches": [
                    {"path": {"type": "PathPrefix", "value": "/"}, "headers": [header("a", "1")]},
                    {
                        "path": {"type": "PathPrefix", "value": "/"},
                        "headers": [header("b", "2", "RegularExpression")],
                    },
                ],
                "backendRefs": [ref(CANARY, 1)],
            },
        ],
        id="two matches are OR-ed as two matches of the clone",
    ),
    pytest.param(
        [rule(ref(STABLE, 1), path="/a"), rule(ref(STABLE, 1), path="/b")],
        [{"path": {"type": "Exact", "value": "/beta"}}],
        [
            rule(ref(STABLE, 1), path="/a"),
            rule(ref(STABLE, 1), path="/b"),
            {"matches": [{"path": {"type": "Exact", "value": "/beta"}}], "backendRefs": [ref(CANARY, 1)]},
        ],
        id="a path match replaces the matches of the first stable rule's clone only",
    ),
    pytest.param(
        [rule(ref(STABLE, 80), ref(CANARY, 20))],
        [{"headers": [header("user", "beta")]}],
        [
            rule(ref(STABLE, 1)),
            {
                "matches": [
                    {"path": {"type": "PathPrefix", "value": "/"}, "headers": [header("user", "beta")]}
                ],
                "backendRefs": [ref(CANARY, 1)],
            },
        ],
        id="a match step after a weight step first removes the weighted canary backend",
    ),
    pytest.param(
        [rule(ref(STABLE, 1), name="main")],
        [{"headers": [header("user", "beta")]}],
        [
            rule(ref(STABLE, 1), name="main"),
            {
                "matches": [
                    {"path": {"type": "PathPrefix", "value": "/"}, "headers": [header("user", "beta")]}
                ],
                "backendRefs": [ref(CANARY, 1)],
                "name": "main-canary",
            },
        ],
        id="a named rule's clone gets a unique name",
    ),
]


@pytest.mark.parametrize(("rules", "matches", "expected"), MATCH_CASES)
def test_matches(rules: list[JSON], matches: list[JSON], expected: list[JSON]) -> None:
    assert desired(rules, None, matches) == expected


def test_matches_take_precedence_over_weight_and_carry_the_header_modifier() -> None:
    out = desired([rule(ref(STABLE, 1))], 40, [{"headers": [header("user", "beta")]}], MODIFIER)
    assert out[0] == rule(ref(STABLE, 1))
    assert out[1]["backendRefs"] == [ref(CANARY, 1)]
    assert out[1]["filters"] == [{"type": "RequestHeaderModifier", "requestHeaderModifier": MODIFIER}]


def test_no_weight_and_no_matches_changes_nothing() -> None:
    rules = [rule(ref(STABLE, 1))]
    assert desired(rules, None) == rules


RESTORE_CASES = [
    pytest.param([rule(ref(STABLE, 80), ref(CANARY, 20))], [rule(ref(STABLE, 1))], id="weights are undone"),
    pytest.param(
        [rule(ref(STABLE, 1)), rule(ref(CANARY, 1), path="/x")],
        [rule(ref(STABLE, 1))],
        id="canary-only rules are dropped",
    ),
    pytest.param(
        [
            {
                "matches": [{"path": {"type": "PathPrefix", "value": "/old"}}],
                "filters": [{"type": "RequestRedirect"}],
            }
        ],
        [
            {
                "matches": [{"path": {"type": "PathPrefix", "value": "/old"}}],
                "filters": [{"type": "RequestRedirect"}],
            }
        ],
        id="a redirect rule that never had backends stays",
    ),
    pytest.param([rule(ref(STABLE, 1))], [rule(ref(STABLE, 1))], id="an untouched route stays as it is"),
]


@pytest.mark.parametrize(("rules", "expected"), RESTORE_CASES)
def test_restore(rules: list[JSON], expected: list[JSON]) -> None:
    assert restored_rules(rules, STABLE, CANARY) == expected


def test_transforms_do_not_mutate_their_input() -> None:
    rules = [rule(ref(STABLE, 1)), rule(ref(CANARY, 1), path="/x")]
    before = copy.deepcopy(rules)
    desired(rules, 20)
    desired(rules, None, [{"headers": [header("a", "1")]}], MODIFIER)
    restored_rules(rules, STABLE, CANARY)
    assert rules == before


def test_normalise_match_fills_path_defaults() -> None:
    assert normalise_match({"path": {"value": "/x"}}) == {"path": {"type": "PathPrefix", "value": "/x"}}


# ------------------------------------------------------------------ properties
refs_st = st.lists(st.sampled_from([STABLE, OTHER]), min_size=1, max_size=3, unique=True)
rules_st = st.lists(refs_st.map(lambda names: rule(*(ref(n, 1) for n in names))), min_size=1, max_size=4)
matches_st = st.lists(
    st.fixed_dictionaries(
        {
            "headers": st.lists(
                st.builds(header, st.sampled_from("abc"), st.sampled_from("xyz")), min_size=1, max_size=2
            )
        }
    ),
    max_size=3,
)


@given(rules_st, st.integers(0, 100))
def test_stable_and_canary_weights_always_sum_to_100(rules: list[JSON], weight: int) -> None:
    for out_rule in desired(rules, weight):
        weights = {r["name"]: r["weight"] for r in out_rule["backendRefs"]}
        if STABLE in weights:
            assert weights[STABLE] + weights[CANARY] == 100
            assert weights[CANARY] == weight


@given(rules_st, st.one_of(st.none(), st.integers(0, 100)), matches_st, st.integers(0, 100), matches_st)
def test_deciding_twice_changes_nothing_more(
    rules: list[JSON], weight: int | None, matches: list[JSON], next_weight: int, next_matches: list[JSON]
) -> None:
    """A second ensure of the same step finds nothing to do, whatever step came before."""
    world = desired(rules, weight, matches)
    once = desired(world, next_weight, next_matches)
    assert desired(once, next_weight, next_matches) == once


@given(rules_st, st.integers(0, 100), matches_st)
def test_restore_after_any_step_gives_back_the_original(
    rules: list[JSON], weight: int, matches: list[JSON]
) -> None:
    assert restored_rules(desired(rules, weight, matches), STABLE, CANARY) == rules
