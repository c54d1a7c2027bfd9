"""Advanced StatefulSet v1alpha1 <-> v1beta1 conversion, as pure functions on wire dicts.

OpenKruise stores v1beta1 and converts through the CRD conversion webhook
(``apis/apps/v1alpha1/statefulset_conversion.go``). The two versions share every v1alpha1 field
under the same JSON name, so:

v1alpha1 -> v1beta1
    every field is carried as is (the template byte for byte); nothing is added.
v1beta1 -> v1alpha1
    the v1beta1-only fields are dropped, as upstream's typed conversion drops them:
    ``spec.volumeClaimUpdateStrategy``, ``reserveOrdinals``, ``lifecycle``, ``scaleStrategy``,
    ``persistentVolumeClaimRetentionPolicy``, ``ordinals`` and ``status.updatedReadyReplicas``,
    ``updatedAvailableReplicas``, ``volumeClaims``.

So v1alpha1 -> v1beta1 -> v1alpha1 is the identity, and v1beta1 -> v1alpha1 -> v1beta1 is the
identity for an object that uses none of the v1beta1-only fields. Metadata is never touched (the
API server refuses a conversion that changes it beyond labels and annotations).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from kruise.workloads.api.statefulset import GROUP, V1ALPHA1, V1BETA1

__all__ = [
    "ALPHA_API_VERSION",
    "BETA_API_VERSION",
    "BETA_ONLY_SPEC_FIELDS",
    "BETA_ONLY_STATUS_FIELDS",
    "StatefulSetConversionError",
    "convert_statefulset",
]

ALPHA_API_VERSION = f"{GROUP}/{V1ALPHA1}"
BETA_API_VERSION = f"{GROUP}/{V1BETA1}"
BETA_ONLY_SPEC_FIELDS = (
    "volumeClaimUpdateStrategy",
    "reserveOrdinals",
    "lifecycle",
    "scaleStrategy",
    "persistentVolumeClaimRetentionPolicy",
    "ordinals",
)
BETA_ONLY_STATUS_FIELDS = ("updatedReadyReplicas", "updatedAvailableReplicas", "volumeClaims")
_VERSIONS = (ALPHA_API_VERSION, BETA_API_VERSION)


class StatefulSetConversionError(ValueError):
    """An object that is not an apps.kruise.io StatefulSet, or a version we do not serve."""


def convert_statefulset(obj: Mapping[str, Any], desired_api_version: str) -> dict[str, Any]:
    """Convert one StatefulSet wire object to ``desired_api_version`` (a new dict).

    Raises :class:`StatefulSetConversionError` when either version is not
    ``apps.kruise.io/v1alpha1`` or ``apps.kruise.io/v1beta1``, or the kind is not StatefulSet,
    with upstream's wording (``unsupported type``).
    """
    source = str(obj.get("apiVersion") or "")
    if obj.get("kind") != "StatefulSet" or source not in _VERSIONS or desired_api_version not in _VERSIONS:
        raise StatefulSetConversionError(
            f"unsupported type {obj.get('kind')} {source} -> {desired_api_version}"
        )
    out: dict[str, Any] = copy.deepcopy(dict(obj))
    out["apiVersion"] = desired_api_version
    if desired_api_version == ALPHA_API_VERSION:
        for part, fields in (("spec", BETA_ONLY_SPEC_FIELDS), ("status", BETA_ONLY_STATUS_FIELDS)):
            section = out.get(part)
            if isinstance(section, dict):
                for key in fields:
                    section.pop(key, None)
    return out
