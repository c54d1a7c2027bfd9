"""``--feature-gates`` of ``kruise manager``: names, defaults and Kubernetes' ``AllAlpha``/``AllBeta``."""

from __future__ import annotations

import pytest

from kruise.rollouts.manager.options import FEATURE_GATE_STAGES, FEATURE_GATES, parse_feature_gates

UPSTREAM_E2E_GATES = "AllAlpha=true,AllBeta=true,EnableExternalCerts=false,TemplateNoDefaults=false"
"""The flag of OpenKruise's ``config/manager/manager.yaml``, which its e2e suite runs with."""


def test_every_gate_has_its_upstream_stage() -> None:
    assert set(FEATURE_GATE_STAGES) == set(FEATURE_GATES)
    assert FEATURE_GATE_STAGES["PreparingUpdateAsUpdate"] == "Alpha"
    assert FEATURE_GATE_STAGES["PodWebhook"] == "Beta"


def test_upstream_e2e_manager_flag_turns_on_preparing_update_as_update() -> None:
    """kruise e2e "CloneSet regard preparing-update pod as update when scaling"
    (``K:test/e2e/apps/v1alpha1/cloneset.go:1526``) needs gate ``PreparingUpdateAsUpdate``
    (alpha, default off); upstream's e2e manager gets it from ``AllAlpha=true``."""
    gates = parse_feature_gates(UPSTREAM_E2E_GATES)
    assert gates["PreparingUpdateAsUpdate"] is True
    assert gates["EnableExternalCerts"] is False and gates["TemplateNoDefaults"] is False
    assert gates["ResourcesDeletionProtection"] is True  # beta, off by default
    assert "AllAlpha" not in gates and "AllBeta" not in gates


def test_a_gate_named_in_the_flag_wins_over_all_alpha_in_any_order() -> None:
    assert parse_feature_gates("CloneSetShortHash=false,AllAlpha=true")["CloneSetShortHash"] is False
    assert parse_feature_gates("AllAlpha=true,CloneSetShortHash=false")["CloneSetShortHash"] is False
    off = parse_feature_gates("AllBeta=false")
    assert off["PodWebhook"] is False and off["KruiseDaemon"] is False
    assert off["AdvancedDeployment"] is FEATURE_GATES["AdvancedDeployment"], "alpha gates untouched"


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        ("AllAlpha=yes", "invalid feature gate 'AllAlpha=yes'"),
        ("AllGamma=true", "unknown feature gate 'AllGamma'"),
    ],
)
def test_bad_gates_are_refused_by_name(flag: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_feature_gates(flag)
