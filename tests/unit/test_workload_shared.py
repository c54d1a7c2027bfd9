"""The small pieces the workload kinds share (pure): the claim of owned and orphan objects, and a
kind's two webhook registrations."""

from __future__ import annotations

from typing import Any

import pytest

from kruise.core.webhook.configuration import WebhookSettings
from kruise.workloads.admission.workload_webhooks import workload_webhook_specs
from kruise.workloads.claims import claim

OWNER = {"metadata": {"name": "web", "uid": "owner-uid"}}
REF = {"kind": "Owner", "name": "web", "uid": "owner-uid", "controller": True}


def obj(name: str, refs: list[dict[str, Any]], **meta: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "ownerReferences": refs, **meta}}


def test_claim_keeps_releases_and_adopts_by_the_kinds_wanted() -> None:
    other = {"kind": "ConfigMap", "name": "cm", "uid": "cm-uid"}
    kept, strayed = obj("keep-1", [REF]), obj("gone-1", [other, REF])
    dying = obj("gone-2", [REF], deletionTimestamp="2026-01-01T00:00:00Z")
    orphan, unwanted = obj("keep-2", [other]), obj("nope", [])
    out = claim(
        OWNER,
        [kept, strayed, dying],
        [orphan, unwanted],
        REF,
        lambda o: o["metadata"]["name"].startswith("keep"),
    )
    assert out.claimed == [kept]
    assert out.release == [(strayed, [other])], "a deleting object is neither kept nor released"
    assert out.adopt == [(orphan, [other, REF])]
    assert out.without_adoptions().adopt == [] and out.without_adoptions().release == out.release


def test_claim_lets_the_kinds_wanted_refuse_the_round() -> None:
    def malformed(_: Any) -> bool:
        raise ValueError("bad selector")

    with pytest.raises(ValueError, match="bad selector"):
        claim(OWNER, [obj("a", [REF])], [], REF, malformed)


def test_workload_webhooks_for_each_version_and_the_deletion_gate() -> None:
    settings = WebhookSettings()
    mutate, validate = workload_webhook_specs(
        "statefulset", "/m", "/v", settings, deletion_protection=True, versions=("v1alpha1", "v1beta1")
    )
    assert (mutate.name, mutate.path, mutate.mutating) == ("mstatefulset.kb.io", "/m", True)
    assert (validate.name, validate.path, validate.mutating) == ("vstatefulset.kb.io", "/v", False)
    assert [(r.version, r.resource, r.operations) for r in validate.rules] == [
        ("v1alpha1", "statefulsets", ("CREATE", "UPDATE", "DELETE")),
        ("v1beta1", "statefulsets", ("CREATE", "UPDATE", "DELETE")),
    ]
    assert [r.operations for r in mutate.rules] == [("CREATE", "UPDATE")] * 2
    assert [c.name for c in validate.match_conditions] == ["spec-changed", "protected-delete"]
    _, unprotected = workload_webhook_specs("cloneset", "/m", "/v")
    assert [c.name for c in unprotected.match_conditions] == ["spec-changed"]
    assert unprotected.rules[0].operations == ("CREATE", "UPDATE")
