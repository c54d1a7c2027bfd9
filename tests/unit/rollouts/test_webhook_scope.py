"""Every webhook the manager registers sees only what it must (selectors, match conditions, timeout).

Upstream facts mirrored: Kruise Rollouts' chart registers the workload webhooks
(``mdeployment.kb.io``, the CloneSet one) with ``objectSelector`` ``rollouts.kruise.io/workload-type
Exists`` (the Deployment one also ``control-plane NotIn [controller-manager]``); its controller
labels the referenced workload by kind (``patchWorkloadRolloutWebhookLabel``). kruise's chart sets
``timeoutSeconds`` from ``webhookConfiguration.timeoutSeconds`` (30). Ours additionally keeps
``kube-system`` and the manager's namespace out of the workload webhooks and skips UPDATEs that do
not touch what a webhook judges. The live behaviour is tested in ``tests/integration/faults``.
"""

from __future__ import annotations

from typing import Any

import pytest

from kruise.core.webhook.configuration import ClientTarget, build_configuration
from kruise.rollouts.manager.options import FEATURE_GATES, ManagerOptions
from kruise.rollouts.manager.webhooks import webhook_specs
from kruise.rollouts.release.constants import WORKLOAD_TYPE_LABEL
from kruise.rollouts.workloads.label import label_patch, unlabel_patch, workload_type

JSON = dict[str, Any]
HELD = {"key": WORKLOAD_TYPE_LABEL, "operator": "Exists"}
NOT_SYSTEM = {
    "matchExpressions": [
        {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kruise-ops", "kube-system"]}
    ]
}


def hooks(**options: Any) -> dict[str, JSON]:
    opts = ManagerOptions(leader_election_namespace="kruise-ops", webhook_timeout_seconds=7, **options)
    target = ClientTarget(url_base="https://127.0.0.1:9876")
    out: dict[str, JSON] = {}
    for mutating in (True, False):
        config = build_configuration(webhook_specs(opts), mutating=mutating, target=target, ca_bundle="")
        out.update({h["name"]: h for h in config["webhooks"]})
    return out


def test_workload_hold_webhooks_see_only_labelled_workloads_outside_system_namespaces() -> None:
    registered = hooks()
    deployment = registered["mdeployment.kb.io"]
    assert deployment["objectSelector"] == {
        "matchExpressions": [
            {"key": "control-plane", "operator": "NotIn", "values": ["controller-manager"]},
            HELD,
        ]
    }
    assert deployment["namespaceSelector"] == NOT_SYSTEM
    cloneset = registered["mcloneset-rollout.kruise.io"]
    assert cloneset["objectSelector"] == {"matchExpressions": [HELD]}
    assert cloneset["namespaceSelector"] == NOT_SYSTEM
    assert deployment["failurePolicy"] == cloneset["failurePolicy"] == "Fail"
    # a partition kind's hold is called only when the template or the rollout-id changes (the
    # CEL is run by the real API server in tests/integration/rollouts/test_hold_scope.py);
    # the Deployment's looks at annotations too, so it is called for every UPDATE
    (condition,) = cloneset["matchConditions"]
    assert condition["name"] == "template-or-rollout-id-changed"
    for part in ("object.spec.template", "metadata.labels['rollouts.kruise.io/rollout-id']"):
        assert part in condition["expression"]
    assert "matchConditions" not in deployment


def test_every_webhook_carries_the_configured_timeout() -> None:
    assert {h["timeoutSeconds"] for h in hooks().values()} == {7}


def test_owned_kinds_are_validated_everywhere_but_only_on_changes_that_matter() -> None:
    registered = hooks()
    for name in ("mcloneset.kb.io", "vcloneset.kb.io", "mrollout.kb.io", "vrollout.kb.io"):
        hook = registered[name]
        assert "namespaceSelector" not in hook and "objectSelector" not in hook, name
        (condition,) = hook["matchConditions"]
        assert condition["expression"].startswith("request.operation != 'UPDATE' || "), name
        assert "object.spec != oldObject.spec" in condition["expression"], name
    rollout_condition = registered["vrollout.kb.io"]["matchConditions"][0]["expression"]
    assert "object.metadata.annotations != oldObject.metadata.annotations" in rollout_condition


def test_cloneset_deletes_reach_the_webhook_only_with_deletion_protection() -> None:
    assert hooks()["vcloneset.kb.io"]["rules"][0]["operations"] == ["CREATE", "UPDATE"]
    gated = hooks(feature_gates={**FEATURE_GATES, "ResourcesDeletionProtection": True})["vcloneset.kb.io"]
    assert gated["rules"][0]["operations"] == ["CREATE", "UPDATE", "DELETE"]
    protected = gated["matchConditions"][1]["expression"]
    assert "request.operation != 'DELETE'" in protected
    assert "'policy.kruise.io/delete-protection' in oldObject.metadata.labels" in protected


@pytest.mark.parametrize(
    ("kind", "value"),
    [
        ("CloneSet", "cloneset"),
        ("Deployment", "deployment"),
        ("StatefulSet", "statefulset"),
        ("DaemonSet", "daemonset"),
        ("ReplicaSet", None),
    ],
)
def test_workload_type_by_kind(kind: str, value: str | None) -> None:
    assert workload_type(kind) == value


def workload(kind: str = "CloneSet", labels: dict[str, str] | None = None) -> JSON:
    return {"kind": kind, "metadata": {"name": "web", "namespace": "shop", "labels": labels or {}}}


def test_a_referenced_workload_is_labelled_once_and_never_overwritten() -> None:
    assert label_patch(workload()) == {"metadata": {"labels": {WORKLOAD_TYPE_LABEL: "cloneset"}}}
    assert label_patch(workload(labels={WORKLOAD_TYPE_LABEL: "cloneset"})) is None
    assert label_patch(workload(labels={WORKLOAD_TYPE_LABEL: "custom"})) is None, "upstream: only if empty"
    assert label_patch(workload("ReplicaSet")) is None


def test_the_label_goes_with_the_rollout_unless_someone_else_set_it() -> None:
    labelled = workload("Deployment", {WORKLOAD_TYPE_LABEL: "deployment", "app": "web"})
    assert unlabel_patch(labelled) == {"metadata": {"labels": {WORKLOAD_TYPE_LABEL: None}}}
    assert unlabel_patch(workload("Deployment", {WORKLOAD_TYPE_LABEL: "statefulset"})) is None
    assert unlabel_patch(workload("Deployment")) is None
