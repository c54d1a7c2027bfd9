"""A representative CloneSet pod as the API server returns it on the embedded cluster (a KWOK
node, in-place update state, readiness gate), for memory and throughput measurements."""

from __future__ import annotations

import copy
from typing import Any

JSON = dict[str, Any]

_POD: JSON = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "web-x7k2p",
        "generateName": "web-",
        "namespace": "shop",
        "uid": "5a0f3d7e-2b7c-4a53-9d2e-8f1c6b7a9e01",
        "resourceVersion": "123456",
        "creationTimestamp": "2026-12-01T10:00:00Z",
        "labels": {
            "app": "web",
            "apps.kruise.io/cloneset-instance-id": "x7k2p",
            "controller-revision-hash": "web-6f7d8c9b5",
            "pod-template-hash": "6f7d8c9b5",
            "lifecycle.apps.kruise.io/state": "Normal",
        },
        "annotations": {
            "apps.kruise.io/inplace-update-state": '{"revision":"web-6f7d8c9b5","updateTimestamp":'
            '"2026-12-01T10:05:00Z","lastContainerStatuses":{"web":{"imageID":"sha256:abc"}}}',
            "kwok.x-k8s.io/node": "fake",
        },
        "ownerReferences": [
            {
                "apiVersion": "apps.kruise.io/v1alpha1",
                "kind": "CloneSet",
                "name": "web",
                "uid": "1d2c3b4a-0000-4000-8000-000000000001",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
        "managedFields": [
            {
                "manager": "kruise-manager",
                "operation": "Update",
                "apiVersion": "v1",
                "time": "2026-12-01T10:00:00Z",
                "fieldsType": "FieldsV1",
                "fieldsV1": {
                    "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                    "f:spec": {"f:containers": {}},
                },
            },
            {
                "manager": "kwok",
                "operation": "Update",
                "apiVersion": "v1",
                "time": "2026-12-01T10:00:01Z",
                "fieldsType": "FieldsV1",
                "subresource": "status",
                "fieldsV1": {"f:status": {"f:conditions": {}, "f:containerStatuses": {}, "f:phase": {}}},
            },
        ],
    },
    "spec": {
        "containers": [
            {
                "name": "web",
                "image": "registry.example.com/shop/web:1.5.0",
                "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                "env": [{"name": "MODE", "value": "production"}],
                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
                "imagePullPolicy": "IfNotPresent",
            }
        ],
        "readinessGates": [{"conditionType": "InPlaceUpdateReady"}],
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst",
        "serviceAccountName": "default",
        "nodeName": "kwok-node-1",
        "schedulerName": "default-scheduler",
        "tolerations": [
            {
                "key": "node.kubernetes.io/not-ready",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            },
            {
                "key": "node.kubernetes.io/unreachable",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            },
        ],
        "priority": 0,
        "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
    },
    "status": {
        "phase": "Running",
        "conditions": [
            {"type": "InPlaceUpdateReady", "status": "True", "lastTransitionTime": "2026-12-01T10:00:01Z"},
            {"type": "Initialized", "status": "True", "lastTransitionTime": "2026-12-01T10:00:01Z"},
            {"type": "Ready", "status": "True", "lastTransitionTime": "2026-12-01T10:00:02Z"},
            {"type": "ContainersReady", "status": "True", "lastTransitionTime": "2026-12-01T10:00:02Z"},
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-12-01T10:00:00Z"},
        ],
        "hostIP": "10.0.0.1",
        "podIP": "10.0.1.17",
        "podIPs": [{"ip": "10.0.1.17"}],
        "startTime": "2026-12-01T10:00:01Z",
        "containerStatuses": [
            {
                "name": "web",
                "ready": True,
                "restartCount": 0,
                "image": "registry.example.com/shop/web:1.5.0",
                "imageID": "registry.example.com/shop/web@sha256:4b1f0c0e9d7a",
                "containerID": "kwok://web-x7k2p-web",
                "started": True,
                "state": {"running": {"startedAt": "2026-12-01T10:00:01Z"}},
            }
        ],
        "qosClass": "Burstable",
    },
}


def pod(i: int, namespace: str = "shop", owner: str = "web") -> JSON:
    """Pod number ``i`` (unique name, uid and resourceVersion), a fresh deep copy."""
    obj = copy.deepcopy(_POD)
    meta = obj["metadata"]
    meta["name"] = f"{owner}-{i:06d}"
    meta["namespace"] = namespace
    meta["uid"] = f"5a0f3d7e-2b7c-4a53-9d2e-{i:012d}"
    meta["resourceVersion"] = str(100000 + i)
    meta["ownerReferences"][0]["name"] = owner
    meta["ownerReferences"][0]["uid"] = f"1d2c3b4a-0000-4000-8000-{hash(owner) % 10**12:012d}"
    obj["status"]["podIP"] = f"10.{i // 65536 % 256}.{i // 256 % 256}.{i % 256}"
    return obj
