"""The pod webhook's CEL match condition (its meaning is checked against the real API server in
tests/integration/sidecarset/test_pod_webhook_scope.py)."""

from __future__ import annotations

from kruise.workloads.sidecarset.scope import MAX_EXPRESSION_LENGTH, pod_match_condition, selector_expression
from tests.unit.sidecarset.builders import sidecarset

LABELS = "object.metadata.labels"


def test_no_sidecarset_sends_no_pod() -> None:
    assert pod_match_condition([]) == "false"


def test_injection_paused_sidecarsets_are_left_out() -> None:
    paused = sidecarset(injectionStrategy={"paused": True})
    assert pod_match_condition([paused]) == "false"


def test_match_labels_and_namespace() -> None:
    s = sidecarset(namespace="team-a")
    assert pod_match_condition([s]) == (
        f"(request.namespace == 'team-a' && "
        f"((has({LABELS}) && 'app' in {LABELS}) && {LABELS}['app'] == 'web'))"
    )


def test_operators() -> None:
    expression = selector_expression(
        {
            "matchExpressions": [
                {"key": "a", "operator": "In", "values": ["x", "y"]},
                {"key": "b", "operator": "NotIn", "values": ["z"]},
                {"key": "c", "operator": "Exists"},
                {"key": "d", "operator": "DoesNotExist"},
            ]
        }
    )
    assert f"{LABELS}['a'] in ['x', 'y']" in expression
    assert f"!({LABELS}['b'] in ['z'])" in expression
    assert f"!(has({LABELS}) && 'd' in {LABELS})" in expression
    assert expression.count(" && ") >= 4


def test_empty_selector_selects_nothing_and_a_strange_key_widens_to_true() -> None:
    assert pod_match_condition([sidecarset(selector={})]) == "false"
    odd = sidecarset(selector={"matchLabels": {"it's": "x"}})
    assert pod_match_condition([odd, sidecarset()]) == "true"


def test_several_sidecarsets_or_their_terms_deterministically() -> None:
    a = sidecarset("a", selector={"matchLabels": {"app": "a"}})
    b = sidecarset("b", selector={"matchLabels": {"app": "b"}})
    assert pod_match_condition([a, b]) == pod_match_condition([b, a])
    assert pod_match_condition([a, b, a]).count(" || ") == 1  # type: ignore[union-attr]


def test_too_long_drops_the_condition() -> None:
    many = [sidecarset(f"s{i}", selector={"matchLabels": {"app": f"a{i}" * 40}}) for i in range(400)]
    condition = pod_match_condition(many)
    assert condition is None
    assert len(pod_match_condition(many[:10]) or "") < MAX_EXPRESSION_LENGTH
