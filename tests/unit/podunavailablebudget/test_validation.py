"""The PUB validating webhook's rules and upstream's messages (``pkg/webhook/podunavailablebudget``)."""

from __future__ import annotations

from typing import Any

import pytest

from kruise.workloads.podunavailablebudget.validation import selectors_loosely_overlap, validate_pub

JSON = dict[str, Any]


def pub(name: str = "web", annotations: dict[str, str] | None = None, **spec: Any) -> JSON:
    meta: JSON = {"name": name, "namespace": "ns"}
    if annotations:
        meta["annotations"] = annotations
    return {
        "apiVersion": "policy.kruise.io/v1alpha1",
        "kind": "PodUnavailableBudget",
        "metadata": meta,
        "spec": spec,
    }


SEL = {"matchLabels": {"app": "web"}}
REF = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"}


def test_valid_budgets_pass() -> None:
    assert validate_pub(pub(selector=SEL, maxUnavailable="25%"), None, []) is None
    assert validate_pub(pub(targetRef=REF, minAvailable=2), None, []) is None


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        pytest.param(
            pub(maxUnavailable=1),
            "spec.selector, targetRef: Required value: no selector or targetRef defined in "
            "PodUnavailableBudget",
            id="neither-selector-nor-target",
        ),
        pytest.param(
            pub(selector=SEL, targetRef=REF, maxUnavailable=1),
            "spec.selector, targetRef: Required value: selector and targetRef are mutually exclusive",
            id="both-selector-and-target",
        ),
        pytest.param(
            pub(selector=SEL),
            "spec.maxUnavailable, minAvailable: Required value: no maxUnavailable or minAvailable defined in "
            "PodUnavailableBudget",
            id="no-budget",
        ),
        pytest.param(
            pub(selector=SEL, maxUnavailable=1, minAvailable=1),
            "spec.maxUnavailable, minAvailable: Required value: maxUnavailable and minAvailable are mutually "
            "exclusive",
            id="both-budgets",
        ),
        pytest.param(
            pub(selector={}, maxUnavailable=1),
            "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), "
            "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is not valid for "
            "PodUnavailableBudget.",
            id="empty-selector",
        ),
        pytest.param(
            pub(targetRef={"kind": "CloneSet", "name": "web"}, maxUnavailable=1),
            'spec.TargetReference: Invalid value: v1alpha1.TargetReference{APIVersion:"", Kind:"CloneSet", '
            'Name:"web"}: empty TargetReference is not valid for PodUnavailableBudget.',
            id="target-without-api-version",
        ),
        pytest.param(
            pub(selector=SEL, maxUnavailable="120%"),
            'spec.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"120%"}: '
            "must not be greater than 100%",
            id="percent-above-100",
        ),
        pytest.param(
            pub(selector=SEL, minAvailable=-1),
            "spec.minAvailable: Invalid value: -1: must be greater than or equal to 0",
            id="negative-min",
        ),
        pytest.param(
            pub(
                annotations={"kruise.io/pub-protect-operations": "DELETE,RESIZE"},
                selector=SEL,
                maxUnavailable=1,
            ),
            "metadata: Internal error: annotation[kruise.io/pub-protect-operations] is invalid",
            id="unknown-protected-operation",
        ),
        pytest.param(
            pub(annotations={"pub.kruise.io/protect-total-replicas": "ten"}, selector=SEL, maxUnavailable=1),
            "metadata: Internal error: annotation[pub.kruise.io/protect-total-replicas] is invalid",
            id="total-replicas-not-an-int",
        ),
    ],
)
def test_refusals(obj: JSON, message: str) -> None:
    assert validate_pub(obj, None, []) == message


def test_selector_and_target_cannot_change() -> None:
    old = pub(selector=SEL, maxUnavailable=1)
    new = pub(selector={"matchLabels": {"app": "other"}}, maxUnavailable=2)
    assert validate_pub(new, old, []) == (
        "spec.selector, targetRef: Required value: selector and targetRef cannot be modified"
    )
    assert validate_pub(pub(selector=SEL, maxUnavailable=2), old, []) is None


def test_conflicts_with_other_budgets() -> None:
    other = pub("other", selector={"matchLabels": {"app": "web"}}, maxUnavailable=1)
    assert validate_pub(pub(selector=SEL, maxUnavailable=1), None, [other]) == (
        'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"web"}, '
        "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: pub.spec.selector is in conflict with other "
        "PodUnavailableBudget other"
    )
    same_target = pub("other", targetRef={**REF, "apiVersion": "apps.kruise.io/v1beta1"}, maxUnavailable=1)
    assert validate_pub(pub(targetRef=REF, maxUnavailable=1), None, [same_target]) == (
        'spec.targetReference: Invalid value: v1alpha1.TargetReference{APIVersion:"apps.kruise.io/v1alpha1", '
        'Kind:"CloneSet", Name:"web"}: pub.spec.targetReference is in conflict with other '
        "PodUnavailableBudget other"
    )
    # itself (an UPDATE) is not a conflict
    assert (
        validate_pub(pub(selector=SEL, maxUnavailable=1), None, [pub(selector=SEL, maxUnavailable=3)]) is None
    )


@pytest.mark.parametrize(
    ("first", "second", "overlap"),
    [
        ({"matchLabels": {"app": "a"}}, {"matchLabels": {"app": "a"}}, True),
        ({"matchLabels": {"app": "a"}}, {"matchLabels": {"app": "b"}}, False),
        ({"matchLabels": {"app": "a"}}, {"matchLabels": {"app": "a", "tier": "x"}}, False),
        (
            {"matchLabels": {"app": "a"}},
            {"matchExpressions": [{"key": "app", "operator": "Exists"}]},
            True,
        ),
        (
            {"matchLabels": {"app": "a"}},
            {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["a"]}]},
            False,
        ),
        (
            {"matchExpressions": [{"key": "app", "operator": "DoesNotExist"}]},
            {"matchExpressions": [{"key": "app", "operator": "In", "values": ["a"]}]},
            False,
        ),
    ],
)
def test_loose_overlap(first: JSON, second: JSON, overlap: bool) -> None:
    assert selectors_loosely_overlap(first, second) is overlap
    assert selectors_loosely_overlap(second, first) is overlap
