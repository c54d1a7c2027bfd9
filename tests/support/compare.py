"""Comparing what a manifest says with what the API server stored."""

from __future__ import annotations

from typing import Any


def missing(want: Any, got: Any, path: str = "spec") -> list[str]:
    """Paths set in ``want`` that ``got`` lacks or holds with another value (defaults may add)."""
    if isinstance(want, dict) and isinstance(got, dict):
        return [m for k, v in want.items() for m in missing(v, got.get(k), f"{path}.{k}")]
    if isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
        return [
            m for i, (a, b) in enumerate(zip(want, got, strict=True)) for m in missing(a, b, f"{path}[{i}]")
        ]
    return [] if want == got else [path]
