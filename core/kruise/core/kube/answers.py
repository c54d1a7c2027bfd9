"""What an error answer of the API server means: the :class:`~kruise.core.errors.ApiError` for
a failed call's body, and for a watch's ERROR event."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from kruise.core.errors import ApiError, api_error
from kruise.core.kube.resources import resource_of_path

__all__ = ["error_of", "watch_error"]


def error_of(status: int, raw: bytes, method: str = "", path: str = "") -> ApiError:
    """The :class:`ApiError` for an error answer whose body is ``raw`` (a Status, or text).

    A 404 without a Status is a path the server does not serve (a kind whose CRD is not
    installed: the API server answers ``404 page not found`` as text); as client-go's
    ``newUnstructuredResponseError`` it reads ``NotFound`` "the server could not find the
    requested resource", qualified by what was asked (``(get rollouts.rollouts.kruise.io web)``).
    """
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        body = None
    if status == 404 and not (isinstance(body, dict) and body.get("kind") == "Status"):
        asked = " ".join(w for w in (method.lower(), *resource_of_path(path)) if w)
        unserved = "the server could not find the requested resource" + (f" ({asked})" if asked else "")
        return api_error(status, {"reason": "NotFound", "message": unserved})
    return api_error(status, body if isinstance(body, dict) else None, raw.decode("utf-8", "replace"))


def watch_error(status: Mapping[str, Any]) -> ApiError:
    """The :class:`ApiError` an ERROR watch event carries (its object is a Status);
    ``410 Gone`` becomes :class:`~kruise.core.errors.GoneError`."""
    return api_error(int(status.get("code") or 500), dict(status))
