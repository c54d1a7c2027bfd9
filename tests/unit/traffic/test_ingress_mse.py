"""The MSE canary Ingress annotations from our mse.lua (Ingress ``classType: mse``, the class of
upstream's TrafficRouting example ``mse-traffic``)."""

from __future__ import annotations

from typing import Any

import pytest

from kruise.traffic.ingress import canary_annotations
from kruise.traffic.scripts import builtin_ingress_script
from tests.unit.traffic.builders import header, intent

MSE_SCRIPT = builtin_ingress_script("mse") or ""
N, M = "nginx.ingress.kubernetes.io/", "mse.ingress.kubernetes.io/"
GRAY = {"set": [{"name": "x-mse-tag", "value": "gray"}]}


def query(name: str, value: str, type_: str = "Exact") -> dict[str, str]:
    return {"name": name, "value": value, "type": type_}


CASES = [
    pytest.param(20, None, None, {}, {N + "canary": "true", N + "canary-weight": "20"}, id="weight"),
    pytest.param(
        None,
        [{"headers": [header("User-Agent", "xiaoming")]}],
        GRAY,
        {},
        {
            N + "canary": "true",
            N + "canary-by-header": "User-Agent",
            N + "canary-by-header-value": "xiaoming",
            M + "request-header-control-update": "x-mse-tag gray",
        },
        id="upstream's mse-traffic example: header match plus the gray tag header",
    ),
    pytest.param(
        30,
        [{"queryParams": [query("user", "beta.*", "RegularExpression")]}],
        None,
        {},
        {
            N + "canary": "true",
            N + "canary-weight": "30",
            M + "canary-by-query": "user",
            M + "canary-by-query-pattern": "beta.*",
        },
        id="first query parameter of a match, regular expression as a pattern",
    ),
    pytest.param(
        None,
        None,
        {"set": [{"name": "a", "value": "1"}, {"name": "b", "value": "2"}]},
        {M + "service-subset": "", N + "canary-weight": "50", M + "canary-by-query": "old"},
        {N + "canary": "true", M + "service-subset": "gray", M + "request-header-control-update": "a 1\nb 2"},
        id="previous step's choices cleared, service subset turned gray, one header per line",
    ),
]


@pytest.mark.parametrize(("weight", "matches", "modifier", "start", "expected"), CASES)
def test_mse_canary_annotations(
    weight: int | None,
    matches: list[dict[str, Any]] | None,
    modifier: dict[str, Any] | None,
    start: dict[str, str],
    expected: dict[str, str],
) -> None:
    assert canary_annotations(MSE_SCRIPT, start, intent(weight, matches, modifier)) == expected
