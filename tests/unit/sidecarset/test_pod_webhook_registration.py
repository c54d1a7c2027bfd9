"""How the manager registers the shared pod webhook (upstream's chart,
``templates/webhookconfiguration.yaml``): ``mpod.kb.io`` on pod CREATE at ``/mutate-pod``,
namespaces labelled ``control-plane: openkruise`` and ``kube-system`` left out (here the
manager's namespace too), ``timeoutSeconds`` from ``webhookConfiguration.timeoutSeconds``,
``failurePolicy`` from ``webhookConfiguration.failurePolicy`` (its ``pods`` entry for the pod
webhook), and gone with ``PodWebhook=false``. The validating pod webhooks are not registered
while no pod validator exists (nothing to judge)."""

from __future__ import annotations

from typing import Any

import pytest
from typer.testing import CliRunner

from kruise.core.webhook.configuration import ClientTarget, build_configuration
from kruise.rollouts.cli.main import app
from kruise.rollouts.manager.options import FEATURE_GATES, ManagerOptions
from kruise.rollouts.manager.webhooks import webhook_specs
from kruise.workloads.launchpriority.webhook import POD_TERM as LAUNCH_PRIORITY_POD_TERM
from kruise.workloads.podwebhook import POD_CONDITION
from tests.unit.sidecarset.builders import sidecarset

JSON = dict[str, Any]


def registered(sidecarsets: Any = (), **options: Any) -> dict[str, JSON]:
    opts = ManagerOptions(leader_election_namespace="kruise-ops", **options)
    out: dict[str, JSON] = {}
    for mutating in (True, False):
        config = build_configuration(
            webhook_specs(opts, sidecarsets),
            mutating=mutating,
            target=ClientTarget(url_base="https://127.0.0.1:9876"),
            ca_bundle="",
        )
        out.update({h["name"]: h for h in config["webhooks"]})
    return out


def test_mutating_pod_webhook_as_upstream() -> None:
    hook = registered(webhook_timeout_seconds=12)["mpod.kb.io"]
    assert hook["clientConfig"]["url"] == "https://127.0.0.1:9876/mutate-pod"
    assert hook["rules"] == [
        {"apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"], "operations": ["CREATE"]}
    ]
    assert hook["namespaceSelector"] == {
        "matchExpressions": [
            {"key": "control-plane", "operator": "NotIn", "values": ["openkruise"]},
            {
                "key": "kubernetes.io/metadata.name",
                "operator": "NotIn",
                "values": ["kruise-ops", "kube-system"],
            },
        ]
    }
    assert hook["failurePolicy"] == "Fail"
    assert hook["timeoutSeconds"] == 12
    assert hook["sideEffects"] == "None"
    assert "objectSelector" not in hook


def test_the_pod_webhook_may_have_its_own_failure_policy() -> None:
    hooks = registered(webhook_failure_policy="Fail", pod_webhook_failure_policy="Ignore")
    assert hooks["mpod.kb.io"]["failurePolicy"] == "Ignore"
    others = {h["failurePolicy"] for name, h in hooks.items() if name != "mpod.kb.io"}
    assert others == {"Fail"}
    assert registered(webhook_failure_policy="Ignore")["mpod.kb.io"]["failurePolicy"] == "Ignore"


def test_the_condition_follows_the_sidecarsets() -> None:
    # without SidecarSets (nor PersistentPodStates) only container launch priority's pods are sent
    fixed = LAUNCH_PRIORITY_POD_TERM
    assert registered()["mpod.kb.io"]["matchConditions"] == [{"name": POD_CONDITION, "expression": fixed}]
    (condition,) = registered([sidecarset("log")])["mpod.kb.io"]["matchConditions"]
    assert condition["name"] == POD_CONDITION
    assert condition["expression"] not in ("false", "true")


def test_gate_pod_webhook_removes_it_and_no_validator_means_no_validating_pod_webhook() -> None:
    validators_off = {
        "PodUnavailableBudgetDeleteGate": False,
        "PodUnavailableBudgetUpdateGate": False,
        "WorkloadSpread": False,  # records deleted pods from the validating chain
    }
    hooks = registered(feature_gates={**FEATURE_GATES, **validators_off})
    assert "vpod.kb.io" not in hooks and "vpodeviction.kb.io" not in hooks
    off = registered(feature_gates={**FEATURE_GATES, "PodWebhook": False})
    assert "mpod.kb.io" not in off and "vpod.kb.io" not in off and "vpodeviction.kb.io" not in off
    assert "msidecarset.kb.io" in off, "only the pod webhooks go"


@pytest.mark.parametrize("flag", ["--webhook-failure-policy", "--pod-webhook-failure-policy"])
def test_an_unknown_failure_policy_is_refused_before_the_manager_starts(flag: str) -> None:
    result = CliRunner().invoke(app, ["manager", f"{flag}=Sometimes"], env={"COLUMNS": "200"})
    assert result.exit_code == 2
    assert "want Fail or Ignore" in result.output
    assert flag in result.output
