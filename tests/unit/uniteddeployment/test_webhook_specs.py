"""The UnitedDeployment webhook registrations: upstream's names and paths, DELETE only with the
deletion-protection gate, and both in the manager's list."""

from __future__ import annotations

from kruise.workloads.uniteddeployment.webhooks import (
    MUTATE_PATH,
    VALIDATE_PATH,
    uniteddeployment_webhook_specs,
)


def test_names_paths_and_operations() -> None:
    mutate, validate = uniteddeployment_webhook_specs()
    assert (mutate.name, mutate.path, mutate.mutating) == ("muniteddeployment.kb.io", MUTATE_PATH, True)
    assert (validate.name, validate.path, validate.mutating) == (
        "vuniteddeployment.kb.io",
        VALIDATE_PATH,
        False,
    )
    assert MUTATE_PATH == "/mutate-apps-kruise-io-v1alpha1-uniteddeployment"
    assert VALIDATE_PATH == "/validate-apps-kruise-io-v1alpha1-uniteddeployment"
    assert validate.rules[0].operations == ("CREATE", "UPDATE")
    _, protected = uniteddeployment_webhook_specs(deletion_protection=True)
    assert protected.rules[0].operations == ("CREATE", "UPDATE", "DELETE")
    assert [c.name for c in protected.match_conditions] == ["spec-changed", "protected-delete"]
