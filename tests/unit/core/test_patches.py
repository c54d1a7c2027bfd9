"""RFC 7386 merge patches computed from two objects."""

from __future__ import annotations

from typing import Any

import pytest

from kruise.core.patches import merge_patch


@pytest.mark.parametrize(
    ("old", "new", "patch"),
    [
        pytest.param({"a": 1}, {"a": 1}, {}, id="equal"),
        pytest.param({"a": 1, "b": 2}, {"a": 1}, {"b": None}, id="removed key is null"),
        pytest.param({"a": {"x": 1, "y": 2}}, {"a": {"x": 1, "y": 3}}, {"a": {"y": 3}}, id="nested"),
        pytest.param({"l": [1, 2]}, {"l": [1]}, {"l": [1]}, id="lists replaced"),
        pytest.param({}, {"s": {"k": "v"}}, {"s": {"k": "v"}}, id="added"),
    ],
)
def test_merge_patch(old: dict[str, Any], new: dict[str, Any], patch: dict[str, Any]) -> None:
    assert merge_patch(old, new) == patch
