"""Fixtures for the CloneSet scenarios.

``pv_binder`` plays the PersistentVolume controller, the way KWOK plays the kubelets: the local
control plane runs no PV binder and no provisioner, so kube-scheduler would keep every pod with a
PVC Pending. For each unbound PVC in the test namespace it creates a PersistentVolume claimed by
that PVC and marks the claim bound (``spec.volumeName`` plus ``pv.kubernetes.io/bind-completed``),
which is all kube-scheduler's VolumeBinding plugin checks. It also plays the pvc-protection
controller (also not running here) by dropping the ``kubernetes.io/pvc-protection`` finalizer of
terminating claims, so deleted PVCs and the namespace really go away.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kruise.core.errors import AlreadyExistsError, KruiseError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, PVCS, Resource

PVS = Resource("", "v1", "persistentvolumes", "PersistentVolume", namespaced=False)
BINDER_LABEL = "kruise-test/pv-binder"


async def _bind(kube: KubeClient, namespace: str, claim: dict[str, Any]) -> None:
    meta, spec = claim["metadata"], claim.get("spec") or {}
    pv_name = f"pv-{meta['uid']}"
    storage = ((spec.get("resources") or {}).get("requests") or {}).get("storage", "1Gi")
    volume = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": pv_name, "labels": {BINDER_LABEL: namespace}},
        "spec": {
            "capacity": {"storage": storage},
            "accessModes": spec.get("accessModes") or ["ReadWriteOnce"],
            "persistentVolumeReclaimPolicy": "Retain",
            "hostPath": {"path": f"/tmp/{pv_name}"},
            "claimRef": {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "namespace": namespace,
                "name": meta["name"],
                "uid": meta["uid"],
            },
        },
    }
    with contextlib.suppress(AlreadyExistsError):
        await kube.create(PVS, volume)
    patch = {
        "metadata": {"annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
        "spec": {"volumeName": pv_name},
    }
    await kube.patch(PVCS, meta["name"], patch, namespace, patch_type="merge")
    await kube.patch(PVCS, meta["name"], {"status": {"phase": "Bound"}}, namespace, subresource="status")


async def _release(kube: KubeClient, namespace: str, claim: dict[str, Any]) -> None:
    with contextlib.suppress(KruiseError):
        await kube.patch(PVCS, claim["metadata"]["name"], {"metadata": {"finalizers": None}}, namespace)


@pytest.fixture
async def pv_binder(kube: KubeClient, namespace: str) -> AsyncIterator[None]:
    """Bind every PVC created in ``namespace`` to a fresh PersistentVolume while the test runs."""

    async def loop() -> None:
        while True:
            try:
                for claim in (await kube.list(PVCS, namespace))["items"]:
                    if claim["metadata"].get("deletionTimestamp"):
                        await _release(kube, namespace, claim)
                    elif not (claim.get("spec") or {}).get("volumeName"):
                        await _bind(kube, namespace, claim)
            except KruiseError:
                pass  # a claim deleted or changed meanwhile: the next pass sees the truth
            await asyncio.sleep(0.2)

    task = asyncio.create_task(loop())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        for cs in (await kube.list(CLONESETS, namespace))["items"]:
            await kube.delete(CLONESETS, cs["metadata"]["name"], namespace, missing_ok=True)
        for claim in (await kube.list(PVCS, namespace))["items"]:
            await kube.delete(PVCS, claim["metadata"]["name"], namespace, missing_ok=True)
            await _release(kube, namespace, claim)
        for volume in (await kube.list(PVS, label_selector=f"{BINDER_LABEL}={namespace}"))["items"]:
            await kube.delete(PVS, volume["metadata"]["name"], missing_ok=True)
            with contextlib.suppress(KruiseError):
                await kube.patch(PVS, volume["metadata"]["name"], {"metadata": {"finalizers": None}})
