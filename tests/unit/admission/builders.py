"""Shared CloneSet and pod builders for the admission tests."""

from __future__ import annotations

from typing import Any

from kruise.workloads.admission import default_cloneset

UID = "0b6c7f1e-1111-4222-8333-944445555666"


def raw_cloneset(replicas: int = 5, **spec: Any) -> dict[str, Any]:
    """A valid CloneSet as a user writes it (before defaulting)."""
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "web", "namespace": "shop", "uid": UID},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]},
            },
            **spec,
        },
    }


def cloneset(replicas: int = 5, **spec: Any) -> dict[str, Any]:
    """A valid CloneSet after the mutating webhook (what the validating webhook sees)."""
    return default_cloneset(raw_cloneset(replicas, **spec), old=None)


def pod(name: str, *, owner_uid: str = UID, terminating: bool = False) -> dict[str, Any]:
    """A pod controlled by the CloneSet ``owner_uid``."""
    metadata: dict[str, Any] = {
        "name": name,
        "namespace": "shop",
        "ownerReferences": [
            {
                "apiVersion": "apps.kruise.io/v1alpha1",
                "kind": "CloneSet",
                "name": "web",
                "uid": owner_uid,
                "controller": True,
            }
        ],
    }
    if terminating:
        metadata["deletionTimestamp"] = "2024-05-01T12:00:00Z"
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata}
