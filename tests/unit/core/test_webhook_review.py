"""AdmissionReview request parsing and response encoding (admission.k8s.io/v1)."""

from __future__ import annotations

import base64
import json

from kruise.core.webhook import AdmissionRequest, AdmissionResponse
from kruise.core.webhook.configuration import ClientTarget, Rule, WebhookSpec, build_configuration


def test_request_fields_are_read_from_the_review() -> None:
    review = {
        "request": {
            "uid": "u1",
            "operation": "UPDATE",
            "kind": {"kind": "CloneSet"},
            "namespace": "shop",
            "name": "web",
            "object": {"spec": {}},
            "oldObject": {"spec": {"replicas": 1}},
            "dryRun": True,
            "userInfo": {"username": "alice"},
        }
    }
    req = AdmissionRequest.from_review(review)
    assert (req.uid, req.operation, req.kind, req.namespace, req.name) == (
        "u1",
        "UPDATE",
        "CloneSet",
        "shop",
        "web",
    )
    assert req.old_object == {"spec": {"replicas": 1}}
    assert req.dry_run and req.user == "alice"


def test_denial_carries_code_and_message() -> None:
    out = AdmissionResponse.deny("spec.replicas: Invalid value: -1: must be >= 0").to_review("u1")
    assert out["response"] == {
        "uid": "u1",
        "allowed": False,
        "status": {
            "code": 422,
            "message": "spec.replicas: Invalid value: -1: must be >= 0",
            "reason": "Invalid",
        },
    }


def test_patch_is_base64_json_patch() -> None:
    ops = [{"op": "add", "path": "/spec/replicas", "value": 1}]
    out = AdmissionResponse.allow(ops).to_review("u2")["response"]
    assert out["allowed"] is True and out["patchType"] == "JSONPatch"
    assert json.loads(base64.b64decode(out["patch"])) == ops


def test_configuration_targets_url_or_service() -> None:
    spec = WebhookSpec(
        "vcloneset.kb.io", "/validate-x", False, (Rule("apps.kruise.io", "v1alpha1", "clonesets"),)
    )
    by_url = build_configuration(
        [spec], mutating=False, target=ClientTarget(url_base="https://127.0.0.1:9876"), ca_bundle="Q0E="
    )
    hook = by_url["webhooks"][0]
    assert by_url["metadata"]["name"] == "kruise-validating-webhook-configuration"
    assert hook["clientConfig"] == {"caBundle": "Q0E=", "url": "https://127.0.0.1:9876/validate-x"}
    assert hook["sideEffects"] == "None" and hook["admissionReviewVersions"] == ["v1"]
    by_svc = build_configuration(
        [spec],
        mutating=False,
        target=ClientTarget(service_namespace="kruise-system", service_name="kruise-webhook-service"),
        ca_bundle="Q0E=",
    )
    assert by_svc["webhooks"][0]["clientConfig"]["service"] == {
        "namespace": "kruise-system",
        "name": "kruise-webhook-service",
        "path": "/validate-x",
        "port": 443,
    }
    assert (
        build_configuration([spec], mutating=True, target=ClientTarget(url_base="x"), ca_bundle="")[
            "webhooks"
        ]
        == []
    )
