"""Deletion protection and ResourceDistribution webhook adapters: facts looked up only for a
``Cascading`` namespace or CRD, 403 answers, denials counted and logged, the objectSelector."""

from __future__ import annotations

import logging
from typing import Any, cast

import pytest

from kruise.core.errors import KruiseError
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import PODS, PVCS, Resource
from kruise.core.webhook import AdmissionRequest
from kruise.workloads.deletionprotection.webhooks import (
    NAMESPACE_DENIALS,
    WORKLOAD_DENIALS,
    DeletionProtectionWebhooks,
    deletion_protection_webhook_specs,
)
from kruise.workloads.resourcedistribution.webhooks import ResourceDistributionWebhooks

KEY = "policy.kruise.io/delete-protection"


class FakeKube:
    """Lists answered from a table (resource plural -> items); every call recorded."""

    def __init__(self, items: dict[str, list[dict[str, Any]]]) -> None:
        self.items = items
        self.calls: list[tuple[str, str | None]] = []

    async def list(self, res: Resource, namespace: str | None = None) -> dict[str, Any]:
        self.calls.append((res.plural, namespace))
        return {"items": self.items.get(res.plural, [])}


def delete(kind: str, obj: dict[str, Any]) -> AdmissionRequest:
    review = {
        "request": {
            "uid": "u",
            "operation": "DELETE",
            "kind": {"kind": kind},
            "namespace": obj["metadata"].get("namespace"),
            "name": obj["metadata"]["name"],
            "oldObject": obj,
            "userInfo": {"username": "alice"},
        }
    }
    return AdmissionRequest.from_review(review)


def namespace(value: str) -> dict[str, Any]:
    return {"metadata": {"name": "prod", "labels": {KEY: value}}}


async def test_cascading_namespace_counts_its_active_pods_and_is_recorded(
    caplog: pytest.LogCaptureFixture,
) -> None:
    pods = [
        {"status": {"phase": "Running"}},
        {"status": {"phase": "Succeeded"}},
        {"status": {"phase": "Pending"}},
    ]
    kube = FakeKube({PODS.plural: pods, PVCS.plural: []})
    hooks = DeletionProtectionWebhooks(cast(KubeClient, kube), enabled=True, crd_cascading=False)
    before = NAMESPACE_DENIALS.labels("prod", "alice")._value.get()
    with caplog.at_level(logging.WARNING, logger="kruise.protection"):
        answer = await hooks.validate(delete("Namespace", namespace("Cascading")))
    assert not answer.allowed and answer.code == 403
    assert answer.message == (
        "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Cascading "
        "and active pods 2>0"
    )
    assert NAMESPACE_DENIALS.labels("prod", "alice")._value.get() == before + 1
    assert '"Kind": "Namespace"' in caplog.text and '"UserAgent": "alice"' in caplog.text
    assert sorted(kube.calls) == [("persistentvolumeclaims", "prod"), ("pods", "prod")]


async def test_always_needs_no_lookup_and_services_ignore_cascading() -> None:
    kube = FakeKube({})
    hooks = DeletionProtectionWebhooks(cast(KubeClient, kube), enabled=True, crd_cascading=False)
    assert not (await hooks.validate(delete("Namespace", namespace("Always")))).allowed
    svc = {"metadata": {"name": "svc", "namespace": "prod", "labels": {KEY: "Cascading"}}}
    assert (await hooks.validate(delete("Service", svc))).allowed
    assert kube.calls == []
    before = WORKLOAD_DENIALS.labels("Service_prod_svc", "alice")._value.get()
    svc["metadata"]["labels"][KEY] = "Always"
    assert not (await hooks.validate(delete("Service", svc))).allowed
    assert WORKLOAD_DENIALS.labels("Service_prod_svc", "alice")._value.get() == before + 1


def test_every_webhook_is_delete_only_and_selects_labelled_objects() -> None:
    specs = deletion_protection_webhook_specs()
    assert {s.name for s in specs} == {
        "vbuiltindeployment.kb.io",
        "vbuiltinreplicaset.kb.io",
        "vbuiltinstatefulset.kb.io",
        "vcustomresourcedefinition.kb.io",
        "vnamespace.kb.io",
        "vingress.kb.io",
        "vservice.kb.io",
    }
    for spec in specs:
        assert [r.operations for r in spec.rules] == [("DELETE",)]
        assert spec.object_selector == {"matchExpressions": [{"key": KEY, "operator": "Exists"}]}


async def test_resourcedistribution_webhook_refuses_everything_with_its_gate_off() -> None:
    hooks = ResourceDistributionWebhooks(
        cast(KubeClient, FakeKube({})), enabled=False, namespace="kruise-system"
    )
    review = {
        "request": {"uid": "u", "operation": "CREATE", "kind": {"kind": "ResourceDistribution"}, "object": {}}
    }
    answer = await hooks.validate(AdmissionRequest.from_review(review))
    assert (answer.allowed, answer.code, answer.message) == (
        False,
        403,
        "feature-gate ResourceDistributionGate is not enabled",
    )


async def test_a_failed_lookup_refuses_with_upstreams_text() -> None:
    class Failing(FakeKube):
        async def list(self, res: Resource, namespace: str | None = None) -> dict[str, Any]:
            raise KruiseError("boom")

    hooks = DeletionProtectionWebhooks(cast(KubeClient, Failing({})), enabled=True, crd_cascading=False)
    answer = await hooks.validate(delete("Namespace", namespace("Cascading")))
    assert (answer.allowed, answer.code) == (False, 403)
    assert answer.message == "forbidden by ResourcesProtectionDeletion for list pods error: boom"
