"""Quantities come back rounded up to milli and in Go's canonical text."""

from __future__ import annotations

from typing import Any

import pytest

from kruise.workloads.admission.quantity import canonical_quantity, default_resource_list


@pytest.mark.parametrize(
    ("given", "written"),
    [
        pytest.param("100m", "100m", id="canonical milli stays"),
        pytest.param("0.5", "500m", id="a fraction becomes milli"),
        pytest.param("1.5", "1500m", id="one and a half cores"),
        pytest.param("1000m", "1", id="a whole number of milli collapses"),
        pytest.param("1000", "1k", id="thousands take the k suffix"),
        pytest.param("0.0001", "1m", id="sub-milli rounds up to 1m"),
        pytest.param("-0.0001", "-1m", id="negative values round away from zero"),
        pytest.param("1Gi", "1Gi", id="canonical binary stays"),
        pytest.param("1024Mi", "1Gi", id="binary takes the largest exact suffix"),
        pytest.param("1536Mi", "1536Mi", id="inexact binary keeps the smaller suffix"),
        pytest.param("0.5Gi", "512Mi", id="binary fraction becomes a smaller suffix"),
        pytest.param("0.5Ki", "512", id="binary below 1024 prints as decimal"),
        pytest.param("0.1Ki", "102400m", id="binary non-integer prints as decimal milli"),
        pytest.param("256G", "256G", id="decimal SI suffix stays"),
        pytest.param("1.5e3", "1500", id="exponent form canonicalises"),
        pytest.param("2e6", "2e6", id="exponent form keeps the exponent"),
        pytest.param("0", "0", id="zero"),
        pytest.param("0m", "0", id="zero with a suffix"),
        pytest.param(1, "1", id="a JSON integer becomes a string"),
        pytest.param(0.5, "500m", id="a JSON float becomes milli"),
        pytest.param("abc", "abc", id="garbage is left alone"),
        pytest.param(None, None, id="null is left alone"),
    ],
)
def test_canonical_quantity(given: Any, written: Any) -> None:
    assert canonical_quantity(given) == written


def test_resource_list_is_defaulted_per_entry() -> None:
    given = {"cpu": "0.5", "memory": "1024Mi"}
    assert default_resource_list(given) == {"cpu": "500m", "memory": "1Gi"}
    assert given == {"cpu": "0.5", "memory": "1024Mi"}
