"""A blue-green release takes the workload's HorizontalPodAutoscaler out of play and gives it
back (pure), as Kruise Rollouts' ``control/bluegreenstyle/hpa`` (``DisableHPA``/``RestoreHPA``):
the HPA's ``scaleTargetRef.name`` gets the suffix ``-DisableByRollout`` (so it targets nothing),
and loses it at the end. autoscaling/v2 is preferred, v1 read when v2 is not served.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kruise.core.kube.resources import Resource
from kruise.rollouts.release.constants import HPA_DISABLE_SUFFIX
from kruise.rollouts.release.objects import meta as meta_of
from kruise.rollouts.workloads.ops import Op, patch


def _strip_suffix(name: str) -> str:
    while name.endswith(HPA_DISABLE_SUFFIX):
        name = name[: -len(HPA_DISABLE_SUFFIX)]
    return name


def hpa_op(
    workload: Mapping[str, Any], hpas: Sequence[tuple[Resource, Mapping[str, Any]]], *, disable: bool
) -> Op | None:
    """``DisableHPA``/``RestoreHPA``: the scaleTargetRef rename of the workload's HPA, if any is due.

    ``hpas``: ``(HPAS_V2 | HPAS_V1, object)`` pairs of the namespace, v2 first.
    """
    for target, hpa in hpas:
        ref = (hpa.get("spec") or {}).get("scaleTargetRef") or {}
        name = str(ref.get("name") or "")
        if (
            ref.get("apiVersion") != workload.get("apiVersion")
            or ref.get("kind") != workload.get("kind")
            or _strip_suffix(name) != meta_of(workload).get("name")
        ):
            continue
        disabled = name.endswith(HPA_DISABLE_SUFFIX)
        if disable == disabled:
            return None
        new_name = name + HPA_DISABLE_SUFFIX if disable else _strip_suffix(name)
        body = {
            "spec": {
                "scaleTargetRef": {
                    "apiVersion": ref.get("apiVersion"),
                    "kind": ref.get("kind"),
                    "name": new_name,
                }
            }
        }
        return patch(target, hpa, body, guarded=False)
    return None
