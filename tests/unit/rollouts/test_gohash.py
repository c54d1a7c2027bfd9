"""The ComputeHash port (``workloads/deployment/gohash``) on values pinned from Go.

The pins were printed by ``hack/gohash`` (``gohash hash`` / ``gohash text``); the oracle test
(``tests/conformance/test_gohash_oracle.py``) checks the port against Go over a whole corpus.
"""

from __future__ import annotations

from typing import Any

import pytest

from kruise.rollouts.workloads.deployment.gohash import Unsupported, compute_hash, template_text
from kruise.rollouts.workloads.deployment.gohash.quantity import parse_quantity

ECHOSERVER: dict[str, Any] = {
    "metadata": {"labels": {"app": "echoserver", "b": "x"}, "creationTimestamp": None},
    "spec": {
        "containers": [
            {
                "name": "echoserver",
                "image": "cilium/echoserver:latest",
                "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                "resources": {
                    "requests": {"cpu": "100m", "memory": "1Gi"},
                    "limits": {"cpu": "0.5", "memory": "1.5Gi", "x/y": "1e3"},
                },
                "env": [{"name": "PORT", "value": "8080"}],
                "readinessProbe": {
                    "httpGet": {"path": "/", "port": 8080, "scheme": "HTTP"},
                    "timeoutSeconds": 1,
                },
                "terminationMessagePath": "/dev/termination-log",
                "imagePullPolicy": "IfNotPresent",
            }
        ],
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst",
        "securityContext": {},
        "schedulerName": "default-scheduler",
    },
}


def _limit(q: str) -> dict[str, Any]:
    return {"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": q}}}]}}


def test_hash_per_k8s_api_version() -> None:
    assert compute_hash(ECHOSERVER) == "7f69494756"  # k8s.io/api v0.28.9: Kruise Rollouts
    assert compute_hash(ECHOSERVER, version="v0.37.2") == "694999d486"  # kube-controller-manager 1.37


def test_unknown_keys_are_dropped_and_key_order_is_irrelevant() -> None:
    noisy = {**ECHOSERVER, "spec": {"notAField": 1, **ECHOSERVER["spec"]}}
    assert compute_hash(noisy) == compute_hash(ECHOSERVER)


def test_collision_count_changes_the_hash() -> None:
    assert compute_hash(ECHOSERVER, collision_count=1) != compute_hash(ECHOSERVER)


@pytest.mark.parametrize(
    ("quantity", "go_hash"),
    [
        ("100m", "6c7bfff4c"),
        ("1.5Gi", "5f5d46d5f6"),
        ("0.5", "69577c978c"),
        ("8Ei", "bbb7b979d"),
        ("1e-10", "d9444776c"),
    ],
)
def test_quantity_forms(quantity: str, go_hash: str) -> None:
    assert compute_hash(_limit(quantity)) == go_hash


def test_quantity_internals_as_spew_prints_them() -> None:
    text = template_text(_limit("1.5Gi"))
    assert (
        "map[cpu:{i:(resource.int64Amount){value:(int64)0 scale:(resource.Scale)0} "
        "d:(resource.infDecAmount){Dec:(*inf.Dec){unscaled:(big.Int){neg:(bool)false "
        "abs:(big.nat)[1610612736000000000]} scale:(inf.Scale)9}} s:(string) "
        "Format:(resource.Format)BinarySI}]"
    ) in text
    assert parse_quantity("100m") == {"i": {"value": 100, "scale": -3}, "s": "100m", "Format": "DecimalSI"}
    assert parse_quantity("0.5")["s"] == ""  # not canonical: the string is not cached


def test_nil_and_empty_differ_as_after_json_unmarshal() -> None:
    nil = template_text({"spec": {"nodeSelector": None, "containers": None}})
    empty = template_text({"spec": {"nodeSelector": {}, "containers": []}})
    assert "NodeSelector:(map[string]string)<nil>" in nil and "Containers:([]v1.Container)<nil>" in nil
    assert "NodeSelector:(map[string]string)map[]" in empty and "Containers:([]v1.Container)[]" in empty


def test_unsupported_and_invalid_inputs() -> None:
    with pytest.raises(Unsupported):
        compute_hash({"metadata": {"creationTimestamp": "2024-01-01T00:00:00Z"}})
    with pytest.raises(ValueError):
        compute_hash(_limit("1.5x"))
    with pytest.raises(ValueError):
        compute_hash({"spec": {"containers": "nope"}})
