"""WorkloadSpread's reads for custom white-listed targets: the pod's owners walked up through the
listed kinds and sub-resources (discovery for their plurals), a custom target's replicas."""

from __future__ import annotations

import json
from typing import Any, cast

from kruise.core.errors import NotFoundError
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import Resource
from kruise.workloads.workloadspread.customtargets import CustomTargets
from kruise.workloads.workloadspread.validation import BUILTIN_GROUP_KINDS

WHITELIST = {
    "workloads": [
        {
            "Group": "example.io",
            "Version": "v1",
            "Kind": "Game",
            "subResources": [{"Group": "example.io", "Version": "v1", "Kind": "Room"}],
            "replicasPath": "spec.size",
        }
    ]
}


def _owner(kind: str, name: str, api_version: str = "example.io/v1") -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "name": name, "controller": True}


class FakeKube:
    """The ConfigMap, discovery of ``example.io/v1`` and objects by (plural, name); calls recorded."""

    def __init__(self, objects: dict[tuple[str, str], dict[str, Any]], whitelist: Any = WHITELIST) -> None:
        self.objects = objects
        self.whitelist = whitelist
        self.calls: list[str] = []

    async def get_or_none(
        self, res: Resource, name: str, namespace: str | None = None
    ) -> dict[str, Any] | None:
        self.calls.append(f"{res.plural}/{name}")
        if res.plural == "configmaps":
            if self.whitelist is None:
                return None
            key = "WorkloadSpread_Watch_Custom_Workload_WhiteList"
            return {"data": {key: json.dumps(self.whitelist)}}
        return self.objects.get((res.plural, name))

    async def request(self, method: str, path: str) -> dict[str, Any]:
        self.calls.append(f"{method} {path}")
        if path != "/apis/example.io/v1":
            raise NotFoundError(404, {}, path)
        return {
            "resources": [
                {"name": "games", "kind": "Game", "namespaced": True},
                {"name": "games/status", "kind": "Game", "namespaced": True},
                {"name": "rooms", "kind": "Room", "namespaced": True},
            ]
        }


def _custom(kube: FakeKube) -> CustomTargets:
    return CustomTargets(cast(KubeClient, kube), "kruise-ops")


async def test_owners_walk_through_the_sub_resources_to_the_listed_workload() -> None:
    """A pod of Room r1 (a sub-resource) whose controller is Game g: both are candidates; the
    Game is read too (its controller, none, ends the walk); discovery runs once."""
    kube = FakeKube(
        {
            ("rooms", "r1"): {"metadata": {"name": "r1", "ownerReferences": [_owner("Game", "g")]}},
            ("games", "g"): {"metadata": {"name": "g"}},
        }
    )
    pod = {"metadata": {"name": "p", "namespace": "ns", "ownerReferences": [_owner("Room", "r1")]}}
    owners = await _custom(kube).owners(pod, BUILTIN_GROUP_KINDS)
    assert owners == [
        {"apiVersion": "example.io/v1", "kind": "Room", "name": "r1"},
        {"apiVersion": "example.io/v1", "kind": "Game", "name": "g"},
    ]
    assert kube.calls.count("GET /apis/example.io/v1") == 1
    assert "configmaps/kruise-configuration" in kube.calls


async def test_owners_need_a_listed_controller_and_a_list() -> None:
    pod = {"metadata": {"name": "p", "namespace": "ns", "ownerReferences": [_owner("Other", "o")]}}
    assert await _custom(FakeKube({})).owners(pod, BUILTIN_GROUP_KINDS) == []
    listed = {"metadata": {"name": "p", "namespace": "ns", "ownerReferences": [_owner("Room", "r1")]}}
    assert await _custom(FakeKube({}, whitelist=None)).owners(listed, BUILTIN_GROUP_KINDS) == []


async def test_a_custom_targets_replicas_come_from_its_replicas_path_or_the_filter() -> None:
    kube = FakeKube({("games", "g"): {"metadata": {"name": "g"}, "spec": {"size": 7, "extra": 2}}})
    target = {"apiVersion": "example.io/v1", "kind": "Game", "name": "g"}
    custom = _custom(kube)
    assert (await custom.target(target, None, "ns"))[1] == 7
    assert (await custom.target(target, {"replicasPathList": ["spec.extra"]}, "ns"))[1] == 2
    assert await custom.target({**target, "kind": "Room"}, None, "ns") == (None, 0)  # not a listed workload
    assert await custom.target({**target, "name": "gone"}, None, "ns") == (None, 0)
