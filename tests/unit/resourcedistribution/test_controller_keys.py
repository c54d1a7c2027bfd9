"""Which distributors an event wakes (upstream's namespace and resource handlers)."""

from __future__ import annotations

from typing import Any, cast

from kruise.core.informer import Delta, EventType
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import Resource
from kruise.core.runtime import CacheReader
from kruise.workloads.resourcedistribution.controller import ResourceDistributionController


class Cache:
    def __init__(self, rds: list[dict[str, Any]]) -> None:
        self.rds = rds

    def list(self, resource: Resource) -> list[dict[str, Any]]:
        return self.rds


def rd(name: str, **targets: Any) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"targets": targets}}


def ns(name: str, **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": labels}}


RDS = [
    rd("all", allNamespaces=True, excludedNamespaces={"list": [{"name": "skip"}]}),
    rd("listed", includedNamespaces={"list": [{"name": "a"}]}),
    rd("selected", namespaceLabelSelector={"matchLabels": {"env": "x"}}),
]
controller = ResourceDistributionController(cast(KubeClient, None), cast(CacheReader, Cache(RDS)))


def keys(kind: EventType, obj: dict[str, Any], old: dict[str, Any] | None = None) -> list[str]:
    return sorted(controller.namespace_keys(Delta(kind, obj, old)))


def test_a_new_namespace_wakes_the_distributors_targeting_it() -> None:
    assert keys(EventType.ADDED, ns("a")) == ["all", "listed"]
    assert keys(EventType.ADDED, ns("b", env="x")) == ["all", "selected"]
    assert keys(EventType.ADDED, ns("skip", env="x")) == ["selected"]


def test_a_deleted_namespace_wakes_those_listing_it() -> None:
    assert keys(EventType.DELETED, ns("a", env="x")) == ["listed"]


def test_a_relabelled_namespace_wakes_selectors_matching_before_or_after() -> None:
    assert keys(EventType.MODIFIED, ns("b", env="x"), ns("b")) == ["selected"]
    assert keys(EventType.MODIFIED, ns("b"), ns("b", env="x")) == ["selected"]
    assert keys(EventType.MODIFIED, ns("b", env="x"), ns("b", env="x")) == []


def test_status_writes_do_not_wake_a_distributor_but_spec_changes_do() -> None:
    old = {**rd("d", allNamespaces=True), "status": {"desired": 1}}
    new = {**rd("d", allNamespaces=True), "status": {"desired": 2}}
    assert list(controller.distributor_keys(Delta(EventType.MODIFIED, new, old))) == []
    assert list(controller.distributor_keys(Delta(EventType.MODIFIED, rd("d"), old))) == ["d"]
