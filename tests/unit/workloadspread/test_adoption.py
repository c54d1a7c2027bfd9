"""Adopting pods created before their WorkloadSpread: which subset fits the pod's node, the score
that picks among several, the room kept per subset and the patch written to the pod."""

from __future__ import annotations

import json
from typing import Any

from kruise.workloads.api.workloadspread import MATCHED_ANNOTATION
from kruise.workloads.workloadspread.adoption import (
    IGNORE_PATCH_EXISTING_PODS,
    UNCAPPED_ROOM,
    adopt,
    adoption_patch,
    fits,
    initial_room,
    score,
)
from kruise.workloads.workloadspread.subsets import Matched

ZONE = "topology.kubernetes.io/zone"


def node(zone: str, *, taints: list[Any] | None = None, **labels: str) -> dict[str, Any]:
    return {
        "metadata": {"name": f"n-{zone}", "labels": {ZONE: zone, **labels}},
        "spec": {"taints": taints or []},
    }


def in_zone(zone: str) -> dict[str, Any]:
    return {"matchExpressions": [{"key": ZONE, "operator": "In", "values": [zone]}]}


def pod(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "p", "labels": {"app": "web"}}, "spec": {"nodeName": "n", **spec}}


SUBSETS: list[Any] = [
    {"name": "a", "requiredNodeSelectorTerm": in_zone("a"), "maxReplicas": 1},
    {"name": "b", "requiredNodeSelectorTerm": in_zone("b")},
]


def test_fits_needs_the_required_term_anded_with_the_pods_and_every_taint_tolerated() -> None:
    assert fits(pod(), node("a"), SUBSETS[0]) and not fits(pod(), node("b"), SUBSETS[0])
    own = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]}
                ]
            }
        }
    }
    assert not fits(pod(affinity=own), node("a"), SUBSETS[0])  # zone a, but no ssd label
    assert fits(pod(affinity=own), node("a", disk="ssd"), SUBSETS[0])
    assert fits(pod(), node("x"), {"name": "any"})  # no required term: any node
    tainted = node("a", taints=[{"key": "gpu", "value": "yes", "effect": "PreferNoSchedule"}])
    assert not fits(pod(), tainted, SUBSETS[0])  # every effect counts, as upstream
    toleration = {"key": "gpu", "operator": "Exists"}
    assert fits(pod(), tainted, {**SUBSETS[0], "tolerations": [toleration]})
    assert fits(pod(tolerations=[toleration]), tainted, SUBSETS[0])


def test_score_preferred_weights_then_patch_then_room() -> None:
    subset: Any = {
        "name": "s",
        "preferredNodeSelectorTerms": [
            {"weight": 3, "preference": in_zone("a")},
            {"weight": 5, "preference": {"matchExpressions": [{"key": "disk", "operator": "Exists"}]}},
        ],
    }
    assert score(pod(), node("a", disk="ssd"), subset, 0) == 800
    assert score(pod(), node("b"), subset, 2) == 1
    patched: Any = {"name": "s", "patch": {"metadata": {"labels": {"app": "web"}}}}
    assert score(pod(), node("b"), patched, 0) == 10  # the pod already carries the patch
    assert score(pod(), node("b"), {**patched, "patch": {"metadata": {"labels": {"x": "1"}}}}, 0) == 0


def test_adopt_takes_the_best_scored_fitting_subset_and_spends_its_room() -> None:
    room = {"a": 1, "b": UNCAPPED_ROOM}
    assert adopt(pod(), node("a"), SUBSETS, room) == SUBSETS[0]
    assert room == {"a": 0, "b": UNCAPPED_ROOM}
    assert adopt(pod(), node("c"), SUBSETS, room) is None and room["a"] == 0
    anywhere: list[Any] = [{"name": "x"}, {"name": "y"}]
    room = {"x": 0, "y": 3}
    assert adopt(pod(), node("c"), anywhere, room) == anywhere[1]  # room breaks the tie
    room = {"x": 3, "y": 3}
    assert adopt(pod(), node("c"), anywhere, room) == anywhere[0]  # then spec order


def test_initial_room_counts_the_pods_already_matched_here() -> None:
    def matched(ws: str, subset: str) -> dict[str, Any]:
        return {"metadata": {"annotations": {MATCHED_ANNOTATION: Matched(ws, subset).encode()}}}

    pods = [matched("ws", "a"), matched("ws", "b"), matched("other", "a"), {"metadata": {}}]
    assert initial_room("ws", SUBSETS, pods, 4) == {"a": 0, "b": UNCAPPED_ROOM - 1}
    percent: list[Any] = [{"name": "a", "maxReplicas": "50%"}]
    assert initial_room("ws", percent, [], 3) == {"a": 2}  # rounded up


def test_adoption_patch_has_the_annotation_and_the_subsets_metadata_unless_ignored() -> None:
    subset: Any = {
        "name": "a",
        "patch": {"metadata": {"labels": {"zone": "a"}, "annotations": {"k": "v"}}, "spec": {"x": 1}},
    }
    ws: Any = {"metadata": {"name": "ws"}}
    out = adoption_patch(ws, subset)
    annotations = out["metadata"]["annotations"]
    assert json.loads(annotations.pop(MATCHED_ANNOTATION)) == {"name": "ws", "subset": "a"}
    assert out == {"metadata": {"labels": {"zone": "a"}, "annotations": {"k": "v"}}}
    ws["metadata"]["annotations"] = {IGNORE_PATCH_EXISTING_PODS: "True"}
    assert adoption_patch(ws, subset) == {
        "metadata": {"annotations": {MATCHED_ANNOTATION: '{"name":"ws","subset":"a"}'}}
    }
