"""The mutating webhook's CloneSet defaults (``SetDefaultsCloneSet``) and upstream manifests."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from kruise.workloads.admission import aggregate, default_cloneset, validate_cloneset_create
from tests.support.corpus import UPSTREAM_EXAMPLES

UPSTREAM = UPSTREAM_EXAMPLES
UPSTREAM_CLONESETS = sorted(
    [
        *(UPSTREAM / "kruise" / "CloneSet").glob("*.yaml"),
        *(UPSTREAM / "kruise-rollouts" / "CloneSet").glob("*.yaml"),
    ]
)

DEFAULTED_CONTAINER = {
    "name": "web",
    "image": "registry.example.com/shop/web:1.4.0",
    "imagePullPolicy": "Always",
    "terminationMessagePath": "/dev/termination-log",
    "terminationMessagePolicy": "File",
    "resources": {},
}
DEFAULTED_POD_SPEC = {
    "containers": [DEFAULTED_CONTAINER],
    "dnsPolicy": "ClusterFirst",
    "restartPolicy": "Always",
    "securityContext": {},
    "terminationGracePeriodSeconds": 30,
    "schedulerName": "default-scheduler",
}


def cloneset(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "registry.example.com/shop/web:1.4.0"}]},
            },
            **spec,
        },
    }


def test_the_documented_example_keeps_its_strategy_and_gains_the_rest() -> None:
    given = cloneset(
        replicas=10, updateStrategy={"type": "InPlaceIfPossible", "partition": 8, "maxUnavailable": "20%"}
    )
    out = default_cloneset(given, old=None)
    assert out["spec"] == {
        "replicas": 10,
        "revisionHistoryLimit": 10,
        "selector": {"matchLabels": {"app": "web"}},
        "scaleStrategy": {},
        "template": {
            "metadata": {"labels": {"app": "web"}, "creationTimestamp": None},
            "spec": DEFAULTED_POD_SPEC,
        },
        "updateStrategy": {
            "type": "InPlaceIfPossible",
            "partition": 8,
            "maxUnavailable": "20%",
            "maxSurge": 0,
            "inPlaceUpdateStrategy": {},
        },
    }
    assert out["metadata"] == given["metadata"]


def test_an_empty_strategy_gets_recreate_and_the_default_numbers() -> None:
    spec = default_cloneset(cloneset(), old=None)["spec"]
    assert spec["replicas"] == 1
    assert spec["revisionHistoryLimit"] == 10
    assert spec["updateStrategy"] == {
        "type": "ReCreate",
        "partition": 0,
        "maxUnavailable": "20%",
        "maxSurge": 0,
    }


@pytest.mark.parametrize("kind", ["InPlaceIfPossible", "InPlaceOnly"])
def test_in_place_types_get_an_in_place_strategy(kind: str) -> None:
    strategy = default_cloneset(cloneset(updateStrategy={"type": kind}), old=None)["spec"]["updateStrategy"]
    assert strategy["inPlaceUpdateStrategy"] == {}


def test_an_existing_in_place_strategy_is_kept() -> None:
    given = cloneset(
        updateStrategy={"type": "InPlaceOnly", "inPlaceUpdateStrategy": {"gracePeriodSeconds": 10}}
    )
    strategy = default_cloneset(given, old=None)["spec"]["updateStrategy"]
    assert strategy["inPlaceUpdateStrategy"] == {"gracePeriodSeconds": 10}


def test_defaulting_never_mutates_and_is_idempotent() -> None:
    given = cloneset()
    snapshot = copy.deepcopy(given)
    once = default_cloneset(given, old=None)
    assert given == snapshot
    assert default_cloneset(once, old=None) == once


def test_an_update_with_an_unchanged_template_injects_no_template_defaults() -> None:
    old = cloneset()
    new = cloneset(replicas=3)
    out = default_cloneset(new, old=old)
    assert "dnsPolicy" not in out["spec"]["template"]["spec"]
    assert out["spec"]["replicas"] == 3


def test_an_update_with_a_changed_template_injects_template_defaults() -> None:
    old = cloneset()
    new = cloneset()
    new["spec"]["template"]["spec"]["containers"][0]["image"] = "registry.example.com/shop/web:1.5.0"
    out = default_cloneset(new, old=old)
    assert out["spec"]["template"]["spec"]["dnsPolicy"] == "ClusterFirst"


def test_template_no_defaults_skips_the_template_but_not_the_strategy() -> None:
    out = default_cloneset(cloneset(), old=None, template_no_defaults=True)
    assert "dnsPolicy" not in out["spec"]["template"]["spec"]
    assert out["spec"]["updateStrategy"]["type"] == "ReCreate"


def test_a_fully_defaulted_object_comes_back_unchanged() -> None:
    stored = default_cloneset(cloneset(), old=None)
    assert default_cloneset(stored, old=stored) == stored


def test_volume_claim_templates_get_pvc_defaults() -> None:
    claim = {
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1024Mi"}}},
    }
    out = default_cloneset(cloneset(volumeClaimTemplates=[claim]), old=None)["spec"]["volumeClaimTemplates"]
    assert out == [
        {
            "metadata": {"creationTimestamp": None, "name": "data"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
            "status": {"phase": "Pending"},
        }
    ]


@pytest.mark.parametrize("path", UPSTREAM_CLONESETS, ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_upstream_manifests_default_then_validate_cleanly(path: Path) -> None:
    manifest = yaml.safe_load(path.read_text())
    manifest["metadata"].setdefault("namespace", "default")  # the API server fills it before webhooks
    defaulted = default_cloneset(manifest, old=None)
    assert aggregate(validate_cloneset_create(defaulted)) == ""
    assert defaulted["spec"]["updateStrategy"]["type"] in ("ReCreate", "InPlaceIfPossible")


def test_the_upstream_corpus_is_present() -> None:
    assert len(UPSTREAM_CLONESETS) == 6


def test_without_template_defaults_quantities_are_still_printed_canonically_but_not_rounded() -> None:
    given = cloneset(volumeClaimTemplates=[{"metadata": {"name": "data"}, "spec": {}}])
    given["spec"]["template"]["spec"]["containers"][0]["resources"] = {
        "limits": {"cpu": "0.0001", "memory": "1024Mi"}
    }
    spec = default_cloneset(given, old=None, template_no_defaults=True)["spec"]
    assert spec["template"]["spec"]["containers"][0]["resources"] == {
        "limits": {"cpu": "100u", "memory": "1Gi"}
    }
    assert spec["volumeClaimTemplates"] == [
        {"metadata": {"creationTimestamp": None, "name": "data"}, "spec": {"resources": {}}, "status": {}}
    ]
