"""Builders and corpus access shared by the Kruise Rollouts unit tests."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from tests.support.corpus import UPSTREAM_EXAMPLES

CORPUS = UPSTREAM_EXAMPLES / "kruise-rollouts"
KINDS = ("Rollout", "BatchRelease", "TrafficRouting")


def upstream_examples(*kinds: str) -> list[Path]:
    """The corpus files of ``kinds`` (all three rollouts.kruise.io kinds by default), sorted."""
    return sorted(p for kind in kinds or KINDS for p in (CORPUS / kind).glob("*.yaml"))


def load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def example(kind: str, number: str) -> dict[str, Any]:
    """The corpus document ``<kind>/<number>-*.yaml``."""
    (path,) = (CORPUS / kind).glob(f"{number}-*.yaml")
    return load(path)


def v1beta1_rollout(**strategy: Any) -> dict[str, Any]:
    """A valid v1beta1 Rollout on an apps/v1 Deployment; ``strategy`` replaces ``spec.strategy``."""
    body: dict[str, Any] = {
        "apiVersion": "rollouts.kruise.io/v1beta1",
        "kind": "Rollout",
        "metadata": {"name": "demo", "namespace": "shop"},
        "spec": {
            "workloadRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "strategy": {
                "canary": {
                    "steps": [{"replicas": "20%"}, {"replicas": "50%"}, {"replicas": "100%"}],
                }
            },
        },
    }
    if strategy:
        body["spec"]["strategy"] = copy.deepcopy(strategy)
    return body


def v1alpha1_rollout(**strategy: Any) -> dict[str, Any]:
    """A valid v1alpha1 Rollout on an apps/v1 Deployment; ``strategy`` replaces ``spec.strategy``."""
    body: dict[str, Any] = {
        "apiVersion": "rollouts.kruise.io/v1alpha1",
        "kind": "Rollout",
        "metadata": {"name": "demo", "namespace": "shop"},
        "spec": {
            "objectRef": {"workloadRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}},
            "strategy": {"canary": {"steps": [{"weight": 20}, {"weight": 50}, {"weight": 100}]}},
        },
    }
    if strategy:
        body["spec"]["strategy"] = copy.deepcopy(strategy)
    return body
