"""The apiextensions.k8s.io/v1 ConversionReview protocol, around a pure object converter.

A CRD conversion webhook receives ``request.objects`` of one kind and a ``desiredAPIVersion``;
it answers every object converted, or a ``Failure`` result with a message and no objects (the API
server then reports that message to the client). The conversion itself is the kind's pure
function; :func:`answer_conversion` only speaks the protocol.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

JSON = dict[str, Any]
ObjectConverter = Callable[[Mapping[str, Any], str], JSON]
"""``(object, desiredAPIVersion) -> converted object``; raises to refuse."""


def answer_conversion(
    review: Mapping[str, Any],
    convert: ObjectConverter,
    refusals: tuple[type[Exception], ...] = (ValueError,),
) -> JSON:
    """The ConversionReview answering ``review``: each object through ``convert``.

    An exception of a ``refusals`` type makes the whole answer a ``Failure`` with its message.
    The review's ``apiVersion`` and ``request.uid`` are echoed as the protocol requires.
    """
    request = review.get("request") or {}
    desired = str(request.get("desiredAPIVersion", ""))
    response: JSON = {"uid": request.get("uid", "")}
    try:
        response["convertedObjects"] = [convert(o, desired) for o in request.get("objects") or []]
        response["result"] = {"status": "Success"}
    except refusals as err:
        response["convertedObjects"] = []
        response["result"] = {"status": "Failure", "message": str(err)}
    return {
        "apiVersion": review.get("apiVersion", "apiextensions.k8s.io/v1"),
        "kind": "ConversionReview",
        "response": response,
    }


def desired_group(review: Mapping[str, Any]) -> str:
    """The API group of ``request.desiredAPIVersion`` ("" for a malformed review)."""
    desired = str((review.get("request") or {}).get("desiredAPIVersion", ""))
    return desired.rpartition("/")[0]
