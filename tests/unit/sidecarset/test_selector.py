"""kruise.workloads.selector and the SidecarSet matcher: a compiled selector decides as the
requirements read one by one (``metav1.LabelSelectorAsSelector``), a malformed one is refused when
compiled, and a SidecarSet's compiled matcher decides as ``pod_matches``."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.workloads.selector import SelectorError, compile_selector, selector_matches
from kruise.workloads.sidecarset.matching import pod_matches, sidecarset_matcher

KEYS = st.sampled_from(["app", "tier", "kruise.io/x"])
VALUES = st.sampled_from(["a", "b", "c"])
LABELS = st.dictionaries(KEYS, VALUES, max_size=3)
REQUIREMENTS = st.one_of(
    st.fixed_dictionaries(
        {"key": KEYS, "operator": st.sampled_from(["In", "NotIn"]), "values": st.lists(VALUES, min_size=1)}
    ),
    st.fixed_dictionaries({"key": KEYS, "operator": st.sampled_from(["Exists", "DoesNotExist"])}),
)
SELECTORS = st.fixed_dictionaries(
    {}, optional={"matchLabels": LABELS, "matchExpressions": st.lists(REQUIREMENTS, max_size=3)}
)


def reference(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for req in selector.get("matchExpressions") or []:
        key, op, values = req["key"], req["operator"], req.get("values") or []
        if op == "In" and not (key in labels and labels[key] in values):
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


@given(SELECTORS, LABELS)
def test_compiled_selector_matches_as_the_requirements_read(
    selector: dict[str, Any], labels: dict[str, str]
) -> None:
    assert compile_selector(selector)(labels) == reference(selector, labels)
    assert selector_matches(selector, labels) == reference(selector, labels)


def test_no_selector_matches_nothing_and_an_empty_one_everything() -> None:
    assert selector_matches(None, {"app": "a"}) is False
    assert selector_matches({}, {"app": "a"}) is True


@pytest.mark.parametrize(
    "expression",
    [
        {"key": "app", "operator": "In", "values": []},
        {"key": "app", "operator": "Exists", "values": ["a"]},
        {"key": "app", "operator": "Gt", "values": ["1"]},
    ],
)
def test_a_malformed_requirement_is_refused_when_compiled(expression: dict[str, Any]) -> None:
    with pytest.raises(SelectorError):
        compile_selector({"matchExpressions": [expression]})


SIDECARSET_SELECTORS = st.one_of(
    st.none(),
    st.just({}),
    st.just("not a selector"),
    st.just({"matchExpressions": [{"key": "app", "operator": "Gt"}]}),
    SELECTORS,
)
POD_NAMESPACES = st.sampled_from(["", "default", "ns1"])


@given(
    SIDECARSET_SELECTORS,
    SIDECARSET_SELECTORS,
    st.sampled_from([None, "", "default", "ns1"]),
    POD_NAMESPACES,
    LABELS,
    st.none() | LABELS,
)
def test_a_sidecarset_matcher_decides_as_pod_matches(
    selector: Any,
    namespace_selector: Any,
    namespace: str | None,
    pod_ns: str,
    pod_labels: dict[str, str],
    namespace_labels: dict[str, str] | None,
) -> None:
    body: dict[str, Any] = {"selector": selector}
    if namespace_selector is not None:
        body["namespaceSelector"] = namespace_selector
    if namespace is not None:
        body["namespace"] = namespace
    sidecarset = {"metadata": {"name": "s"}, "spec": body}
    pod = {"metadata": {"name": "p", "namespace": pod_ns, "labels": pod_labels}}
    want = pod_matches(sidecarset, pod, namespace_labels)
    assert sidecarset_matcher(sidecarset)(pod, namespace_labels) == want
