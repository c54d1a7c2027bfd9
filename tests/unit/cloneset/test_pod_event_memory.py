"""A deleted pod takes its in-place write expectation with it: no reconcile checks a gone pod
again, so the entry would otherwise stay in the controller for the life of the process."""

from __future__ import annotations

from typing import Any

from kruise.core.informer import Delta, EventType
from kruise.workloads.cloneset.controller import CloneSetController, CloneSetOptions


def _pod(uid: str) -> dict[str, Any]:
    return {
        "metadata": {
            "name": "web-a",
            "namespace": "ns",
            "uid": uid,
            "resourceVersion": "9",
            "ownerReferences": [
                {
                    "apiVersion": "apps.kruise.io/v1alpha1",
                    "kind": "CloneSet",
                    "name": "web",
                    "uid": "cs-uid",
                    "controller": True,
                }
            ],
        }
    }


def test_a_deleted_pod_drops_its_resource_version_expectation() -> None:
    controller = CloneSetController(None, None, None, CloneSetOptions())  # type: ignore[arg-type]
    controller.rv_expectations.expect("pod-a", "10")
    controller.rv_expectations.expect("pod-b", "10")
    controller._pod_event(Delta(EventType.MODIFIED, _pod("pod-b"), None))
    assert len(controller.rv_expectations) == 2, "an update keeps the expectation"
    controller._pod_event(Delta(EventType.DELETED, _pod("pod-a"), None))
    assert len(controller.rv_expectations) == 1
    assert controller.rv_expectations.check("pod-b", "9") is False, "the live pod's still waits"
