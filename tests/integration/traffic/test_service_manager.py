"""The canary Service and the stable selector against the real API server (upstream manager.go)."""

from __future__ import annotations

import dataclasses

from kruise.core.kube import KubeClient
from kruise.traffic.intent import TrafficIntent
from kruise.traffic.resources import SERVICES
from kruise.traffic.service_manager import ServiceManager

KEY = "pod-template-hash"


def stable_service() -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "echo", "labels": {"app": "echo"}, "annotations": {"team": "payments"}},
        "spec": {
            "type": "NodePort",
            "selector": {"app": "echo"},
            "ports": [{"name": "http", "port": 80, "targetPort": 8080}],
        },
    }


def intent(namespace: str, canary_revision: str = "v2") -> TrafficIntent:
    return TrafficIntent(
        namespace=namespace,
        stable_service="echo",
        canary_service="echo-canary",
        weight=20,
        revision_key=KEY,
        stable_revision="v1",
        canary_revision=canary_revision,
    )


async def test_canary_service_is_created_once_and_retargeted(kube: KubeClient, namespace: str) -> None:
    stable = await kube.create(SERVICES, stable_service(), namespace)
    services = ServiceManager(kube)
    owner = {"apiVersion": "v1", "kind": "Service", "name": "echo", "uid": stable["metadata"]["uid"]}

    first = await services.ensure_canary_service(intent(namespace), owner)
    assert first.changed and not first.converged
    again = await services.ensure_canary_service(intent(namespace), owner)
    assert again.converged and not again.changed

    canary = await kube.get(SERVICES, "echo-canary", namespace)
    assert canary["spec"]["selector"] == {"app": "echo", KEY: "v2"}
    assert canary["spec"]["clusterIP"] != stable["spec"]["clusterIP"]
    assert canary["spec"]["ports"][0]["nodePort"] != stable["spec"]["ports"][0]["nodePort"]
    assert canary["metadata"]["labels"] == {"app": "echo"}
    assert canary["metadata"]["annotations"] == {"team": "payments"}
    assert canary["metadata"]["ownerReferences"][0]["uid"] == stable["metadata"]["uid"]

    retarget = await services.ensure_canary_service(intent(namespace, "v3"), owner)
    assert retarget.changed
    canary = await kube.get(SERVICES, "echo-canary", namespace)
    assert canary["spec"]["selector"][KEY] == "v3"


async def test_stable_selector_is_pinned_and_unpinned(kube: KubeClient, namespace: str) -> None:
    await kube.create(SERVICES, stable_service(), namespace)
    services = ServiceManager(kube)

    pinned = await services.pin_stable_service(intent(namespace))
    assert pinned.changed and not pinned.converged
    assert (await services.pin_stable_service(intent(namespace))).converged
    stable = await kube.get(SERVICES, "echo", namespace)
    assert stable["spec"]["selector"] == {"app": "echo", KEY: "v1"}

    restored = await services.restore_stable_service(intent(namespace))
    assert restored.changed and not restored.converged
    again = await services.restore_stable_service(intent(namespace))
    assert again.converged and not again.changed
    stable = await kube.get(SERVICES, "echo", namespace)
    assert stable["spec"]["selector"] == {"app": "echo"}


async def test_canary_service_is_deleted(kube: KubeClient, namespace: str) -> None:
    await kube.create(SERVICES, stable_service(), namespace)
    services = ServiceManager(kube)
    await services.ensure_canary_service(intent(namespace))

    deleted = await services.delete_canary_service(intent(namespace))
    assert deleted.changed and not deleted.converged
    gone = await services.delete_canary_service(intent(namespace))
    assert gone.converged and not gone.changed
    assert await kube.get_or_none(SERVICES, "echo-canary", namespace) is None


async def test_waits_without_revisions_or_stable_service(kube: KubeClient, namespace: str) -> None:
    services = ServiceManager(kube)
    no_revision = dataclasses.replace(intent(namespace), canary_revision="")
    report = await services.ensure_canary_service(no_revision)
    assert not report.converged and not report.changed
    missing = await services.ensure_canary_service(intent(namespace))
    assert not missing.converged and not missing.changed
    assert await services.restore_stable_service(intent(namespace)) == await services.restore_stable_service(
        intent(namespace)
    )


async def test_shared_service_needs_no_canary_service(kube: KubeClient, namespace: str) -> None:
    services = ServiceManager(kube)
    shared = dataclasses.replace(intent(namespace), canary_service="echo")
    for call in (services.ensure_canary_service, services.pin_stable_service, services.delete_canary_service):
        report = await call(shared)
        assert report.converged and not report.changed
