"""UPDATE rules (immutable fields, InPlaceOnly, podsToDelete) and DELETE protection."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kruise.workloads.admission import (
    aggregate,
    default_cloneset,
    validate_cloneset_delete,
    validate_cloneset_update,
)
from kruise.workloads.admission.cloneset import SPEC_UPDATE_FORBIDDEN_MESSAGE

from .builders import cloneset, pod

FORBIDDEN = f"spec: Forbidden: {SPEC_UPDATE_FORBIDDEN_MESSAGE}"


def updated(old: dict[str, Any], change: Any) -> dict[str, Any]:
    """Apply ``change`` to a copy of ``old``, then the mutating webhook, as the API server does."""
    new = copy.deepcopy(old)
    change(new)
    return default_cloneset(new, old=old)


def container(obj: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = obj["spec"]["template"]["spec"]["containers"][0]
    return result


def test_the_forbidden_message_is_upstreams() -> None:
    assert SPEC_UPDATE_FORBIDDEN_MESSAGE == (
        "updates to cloneset spec for fields other than "
        "'replicas', 'template', 'lifecycle', 'scaleStrategy', "
        "'updateStrategy', 'minReadySeconds', 'volumeClaimTemplates' and 'revisionHistoryLimit' are forbidden"
    )


def test_changing_the_image_and_replicas_is_admitted() -> None:
    old = cloneset()

    def change(obj: dict[str, Any]) -> None:
        obj["spec"]["replicas"] = 8
        container(obj)["image"] = "nginx:1.26"

    assert validate_cloneset_update(updated(old, change), old) == []


def test_every_mutable_field_may_change() -> None:
    old = cloneset()

    def change(obj: dict[str, Any]) -> None:
        obj["spec"].update(
            minReadySeconds=10,
            revisionHistoryLimit=3,
            lifecycle={"preDelete": {"finalizersHandler": ["example.com/hook"]}},
            scaleStrategy={"disablePVCReuse": True},
            updateStrategy={**obj["spec"]["updateStrategy"], "paused": True, "partition": 2},
        )

    assert validate_cloneset_update(updated(old, change), old) == []


def test_changing_the_selector_is_forbidden() -> None:
    old = cloneset()

    def change(obj: dict[str, Any]) -> None:
        obj["spec"]["selector"] = {"matchLabels": {"app": "web", "tier": "front"}}
        obj["spec"]["template"]["metadata"]["labels"]["tier"] = "front"

    assert aggregate(validate_cloneset_update(updated(old, change), old)) == FORBIDDEN


def test_an_empty_match_labels_map_equals_a_missing_one() -> None:
    old = cloneset()
    old["spec"]["selector"]["matchExpressions"] = []
    new = copy.deepcopy(old)
    del new["spec"]["selector"]["matchExpressions"]
    assert validate_cloneset_update(new, old) == []


def in_place_only() -> dict[str, Any]:
    obj = cloneset(updateStrategy={"type": "InPlaceOnly"})
    container(obj)["env"] = [{"name": "MODE", "value": "blue"}]
    return obj


@pytest.mark.parametrize(
    ("change", "found"),
    [
        pytest.param(
            lambda o: container(o)["env"][0].update(value="green"),
            "replace /containers/0/env/0/value",
            id="an env value",
        ),
        pytest.param(
            lambda o: container(o).update(command=["run"]), "add /containers/0/command", id="a new command"
        ),
        pytest.param(lambda o: container(o).pop("env"), "remove /containers/0/env", id="a dropped env list"),
        pytest.param(
            lambda o: o["spec"]["template"]["spec"].update(nodeSelector={"disk": "ssd"}),
            "add /nodeSelector",
            id="pod fields",
        ),
    ],
)
def test_in_place_only_rejects_anything_but_images(change: Any, found: str) -> None:
    old = in_place_only()
    assert aggregate(validate_cloneset_update(updated(old, change), old)) == (
        f"spec: Forbidden: only allowed to update images in spec for InPlaceOnly, but found {found}"
    )


def test_in_place_only_accepts_an_image_change_and_metadata_changes() -> None:
    old = in_place_only()

    def change(obj: dict[str, Any]) -> None:
        container(obj)["image"] = "nginx:1.26"
        obj["spec"]["template"]["metadata"]["annotations"] = {"note": "x"}

    assert validate_cloneset_update(updated(old, change), old) == []


def test_in_place_if_possible_accepts_any_template_change() -> None:
    old = cloneset(updateStrategy={"type": "InPlaceIfPossible"})
    new = updated(old, lambda o: container(o).update(env=[{"name": "A", "value": "1"}]))
    assert validate_cloneset_update(new, old) == []


def test_both_update_errors_come_before_the_create_checks() -> None:
    old = in_place_only()

    def change(obj: dict[str, Any]) -> None:
        obj["spec"]["selector"] = {"matchLabels": {"app": "api"}}
        container(obj)["env"][0]["value"] = "green"

    assert aggregate(validate_cloneset_update(updated(old, change), old)) == (
        f"[{FORBIDDEN}, spec: Forbidden: only allowed to update images in spec for InPlaceOnly, but found "
        "replace /containers/0/env/0/value, spec.template.metadata.labels: Invalid value: "
        'map[string]string{"app":"web"}: `selector` does not match template `labels`]'
    )


def test_only_newly_added_pods_to_delete_are_looked_up() -> None:
    old = cloneset(scaleStrategy={"podsToDelete": ["web-gone"]})
    new = copy.deepcopy(old)
    new["spec"]["scaleStrategy"]["podsToDelete"] = ["web-gone", "web-a"]
    looked_up: list[str] = []

    def lookup(name: str) -> dict[str, Any] | None:
        looked_up.append(name)
        return pod(name)

    assert validate_cloneset_update(new, old, pod_lookup=lookup) == []
    assert looked_up == ["web-a"]


@pytest.mark.parametrize(
    ("labels", "replicas", "extra", "message"),
    [
        pytest.param({}, 3, {}, None, id="an unprotected CloneSet may go"),
        pytest.param(
            {"policy.kruise.io/delete-protection": "Always"},
            0,
            {},
            "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Always",
            id="Always protects even with no replicas",
        ),
        pytest.param(
            {"policy.kruise.io/delete-protection": "Cascading"},
            3,
            {},
            "forbidden by ResourcesProtectionDeletion for "
            "policy.kruise.io/delete-protection=Cascading and replicas 3>0",
            id="Cascading protects while replicas are wanted",
        ),
        pytest.param(
            {"policy.kruise.io/delete-protection": "Cascading"}, 0, {}, None, id="Cascading allows at zero"
        ),
        pytest.param(
            {"policy.kruise.io/delete-protection": "Sometimes"},
            3,
            {},
            None,
            id="other values protect nothing",
        ),
        pytest.param(
            {"policy.kruise.io/delete-protection": "Always"},
            3,
            {"deletionTimestamp": "2024-05-01T12:00:00Z"},
            None,
            id="an object already being deleted is let go",
        ),
    ],
)
def test_deletion_protection(
    labels: dict[str, str], replicas: int, extra: dict[str, Any], message: str | None
) -> None:
    obj = cloneset(replicas=replicas)
    obj["metadata"].update(labels=labels, **extra)
    assert validate_cloneset_delete(obj, gate_enabled=True) == message


def test_deletion_protection_needs_the_feature_gate() -> None:
    obj = cloneset()
    obj["metadata"]["labels"] = {"policy.kruise.io/delete-protection": "Always"}
    assert validate_cloneset_delete(obj, gate_enabled=False) is None
