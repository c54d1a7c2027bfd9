"""Names, labels and selectors are judged with apimachinery's rules and messages."""

from __future__ import annotations

from typing import Any

import pytest

from kruise.workloads.admission.fielderrors import aggregate
from kruise.workloads.admission.metavalidation import (
    LabelSelectorError,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
    selector_matches,
    selector_requirements,
    validate_label_selector,
    validate_object_meta,
)

SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
    "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
QNAME_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
    "an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
    "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


def test_dns_names() -> None:
    assert is_dns1123_subdomain("web.shop-1") == []
    assert is_dns1123_subdomain("Web") == [SUBDOMAIN_MSG]
    assert is_dns1123_subdomain("a" * 254) == ["must be no more than 253 characters"]
    assert is_dns1123_label("app") == []
    assert is_dns1123_label("my.app") == ["must not contain dots"]
    assert is_dns1123_label("App") == [LABEL_MSG]


def test_qualified_names_and_label_values() -> None:
    assert is_qualified_name("apps.kruise.io/name") == []
    assert is_qualified_name("-bad") == [QNAME_MSG]
    assert is_qualified_name("/x") == ["prefix part must be non-empty"]
    assert is_qualified_name("a" * 64) == ["name part must be no more than 63 characters"]
    assert is_valid_label_value("") == []
    assert is_valid_label_value("bad value") == [VALUE_MSG]


@pytest.mark.parametrize(
    ("meta", "text"),
    [
        pytest.param({"name": "web", "namespace": "shop"}, "", id="a plain name and namespace are fine"),
        pytest.param(
            {"namespace": "shop"},
            "metadata.name: Required value: name or generateName is required",
            id="a name is required",
        ),
        pytest.param(
            {"name": "Web", "namespace": "shop"},
            f'metadata.name: Invalid value: "Web": {SUBDOMAIN_MSG}',
            id="the name must be a DNS subdomain",
        ),
        pytest.param({"name": "web"}, "metadata.namespace: Required value", id="a namespace is required"),
        pytest.param(
            {"name": "web", "namespace": "shop", "labels": {"app": "bad value"}},
            f'metadata.labels: Invalid value: "bad value": {VALUE_MSG}',
            id="label values are checked",
        ),
        pytest.param(
            {"name": "web", "namespace": "shop", "annotations": {"Foo.Example.com/Bar": "x"}},
            "",
            id="annotation keys are checked case-insensitively",
        ),
    ],
)
def test_object_meta(meta: dict[str, Any], text: str) -> None:
    assert aggregate(validate_object_meta(meta, requires_namespace=True)) == text


@pytest.mark.parametrize(
    ("selector", "text"),
    [
        pytest.param({"matchLabels": {"app": "web"}}, "", id="match labels"),
        pytest.param(
            {"matchExpressions": [{"key": "app", "operator": "In"}]},
            "spec.selector.matchExpressions[0].values: Required value: "
            "must be specified when `operator` is 'In' or 'NotIn'",
            id="In needs values",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "app", "operator": "Exists", "values": ["a"]}]},
            "spec.selector.matchExpressions[0].values: Forbidden: "
            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            id="Exists takes no values",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "app", "operator": "Equals"}]},
            "spec.selector.matchExpressions[0].operator: Invalid "
            'value: "Equals": not a valid selector operator',
            id="unknown operators are rejected",
        ),
    ],
)
def test_label_selector_validation(selector: dict[str, Any], text: str) -> None:
    assert aggregate(validate_label_selector(selector, "spec.selector")) == text


def test_selector_conversion_and_matching() -> None:
    assert selector_requirements(None) is None
    assert selector_requirements({}) == []
    reqs = selector_requirements(
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}],
        }
    )
    assert selector_matches(reqs, {"app": "web", "tier": "front"})
    assert not selector_matches(reqs, {"app": "web", "tier": "db"})
    assert not selector_matches(None, {"app": "web"})
    with pytest.raises(LabelSelectorError, match=r'^"Foo" is not a valid label selector operator$'):
        selector_requirements({"matchExpressions": [{"key": "a", "operator": "Foo"}]})
    with pytest.raises(LabelSelectorError) as err:
        selector_requirements({"matchExpressions": [{"key": "a", "operator": "In", "values": []}]})
    assert (
        str(err.value)
        == "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty"
    )
