"""ResourceDistribution admission rules and upstream's messages."""

from __future__ import annotations

from typing import Any

from kruise.workloads.admission.fielderrors import aggregate
from kruise.workloads.resourcedistribution.validation import needs_dry_run, validate_resourcedistribution

SECRET = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}}


def rd(resource: dict[str, Any] | None, **targets: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"targets": targets}
    if resource is not None:
        spec["resource"] = resource
    return {"metadata": {"name": "d"}, "spec": spec}


def message(obj: dict[str, Any], old: dict[str, Any] | None = None, dry: str | None = None) -> str:
    return aggregate(validate_resourcedistribution(obj, old, dry_run_error=dry))


def test_a_valid_distributor_passes() -> None:
    assert message(rd(SECRET, includedNamespaces={"list": [{"name": "a"}]})) == ""


def test_empty_resource() -> None:
    assert message(rd(None)) == 'spec.resource: Invalid value: "null": empty resource is not allowed'


def test_unsupported_kind() -> None:
    text = message(rd({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"}}))
    assert text == (
        "spec.resource: Invalid value: Deployment.apps: unknown or unsupported resource GroupKind, "
        "only support [Secret ConfigMap]"
    )
    assert not needs_dry_run(rd({"apiVersion": "v1", "kind": "Pod"}), None)


def test_identity_is_immutable() -> None:
    renamed = {**SECRET, "metadata": {"name": "other"}}
    assert message(rd(renamed), rd(SECRET)).endswith("resource apiVersion, kind, and name are immutable")
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "s"}}
    assert "immutable" in message(rd(cm), rd(SECRET))


def test_dry_run_error_is_internal() -> None:
    assert message(rd(SECRET), dry="bad data") == (
        "spec.resource: Internal error: failed to dry-run to validate spec.resource, error: bad data"
    )


def test_conflicting_namespaces() -> None:
    text = message(
        rd(
            SECRET,
            includedNamespaces={"list": [{"name": "a"}, {"name": "b"}]},
            excludedNamespaces={"list": [{"name": "b"}, {"name": "a"}]},
        )
    )
    assert (
        "ambiguous targets because namespace [b a] is in both "
        "IncludedNamespaces.List and ExcludedNamespaces.List" in text
    )


def test_bad_namespace_name_and_selector() -> None:
    text = message(
        rd(
            SECRET,
            includedNamespaces={"list": [{"name": "Bad_Name"}]},
            namespaceLabelSelector={"matchExpressions": [{"key": "k", "operator": "Bogus"}]},
        )
    )
    assert 'spec.targets.includedNamespaces: Invalid value: "Bad_Name"' in text
    assert "spec.targets.namespaceLabelSelector" in text and "labelSelectorAsSelector error:" in text
