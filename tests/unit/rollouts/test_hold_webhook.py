"""The hold webhook's reads: the Rollout from the informer cache (upstream reads through
controller-runtime's cached client), the API server only when the cache has none for the
workload (none at all, or one created a moment ago that the watch has not brought yet)."""

from __future__ import annotations

import asyncio
from typing import Any

from kruise.core.kube.resources import Resource
from kruise.core.webhook import AdmissionRequest
from kruise.rollouts.cache import WORKLOAD_ROLLOUTS
from kruise.rollouts.release.constants import WORKLOAD_TYPE_LABEL
from kruise.rollouts.resources import ROLLOUTS
from kruise.rollouts.workloads.holdwebhook import hold_webhooks

JSON = dict[str, Any]
PATH = "/mutate-rollouts-kruise-io-workload-cloneset"


def cloneset(image: str) -> JSON:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "web", "namespace": "ns", "labels": {WORKLOAD_TYPE_LABEL: "cloneset"}},
        "spec": {"replicas": 4, "template": {"spec": {"containers": [{"name": "c", "image": image}]}}},
    }


ROLLOUT = {
    "apiVersion": "rollouts.kruise.io/v1beta1",
    "kind": "Rollout",
    "metadata": {"name": "web", "namespace": "ns"},
    "spec": {
        "workloadRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"},
        "strategy": {"canary": {"steps": [{"replicas": 1}]}},
    },
}


class Cache:
    def __init__(self, rollouts: list[JSON]) -> None:
        self.rollouts = rollouts
        self.asked: list[tuple[str, str]] = []

    def get(self, resource: Resource, key: str) -> JSON | None:
        raise AssertionError("not read by key")

    def by_index(self, resource: Resource, index: str, value: str) -> list[JSON]:
        assert resource == ROLLOUTS
        self.asked.append((index, value))
        return list(self.rollouts)

    def list(self, resource: Resource) -> list[JSON]:
        raise AssertionError("never a whole-kind list")


class Kube:
    def __init__(self, rollouts: list[JSON]) -> None:
        self.rollouts = rollouts
        self.lists = 0

    async def list(self, resource: Resource, namespace: str | None = None, **_: Any) -> JSON:
        assert resource == ROLLOUTS and namespace == "ns"
        self.lists += 1
        return {"items": list(self.rollouts)}


def review(kube: Kube, cache: Cache) -> Any:
    webhook = hold_webhooks(
        kube, lambda ns, kind, name: cache.by_index(ROLLOUTS, WORKLOAD_ROLLOUTS, f"{ns}/{kind}/{name}")
    )[PATH]  # type: ignore[arg-type]
    req = AdmissionRequest("u", "UPDATE", "", "ns", "web", cloneset("v2"), cloneset("v1"), False, "me", {})
    return asyncio.run(webhook(req))


def test_a_cached_rollout_holds_without_asking_the_api_server() -> None:
    kube, cache = Kube([]), Cache([ROLLOUT])
    answer = review(kube, cache)
    assert kube.lists == 0
    assert cache.asked == [(WORKLOAD_ROLLOUTS, "ns/CloneSet/web")]
    assert answer.patch and any(op["path"] == "/spec/updateStrategy" for op in answer.patch)


def test_a_cache_miss_asks_the_api_server_and_still_holds() -> None:
    kube, cache = Kube([ROLLOUT]), Cache([])
    answer = review(kube, cache)
    assert kube.lists == 1
    assert answer.patch


def test_no_rollout_anywhere_admits_unchanged() -> None:
    kube, cache = Kube([]), Cache([])
    answer = review(kube, cache)
    assert kube.lists == 1
    assert not answer.patch
