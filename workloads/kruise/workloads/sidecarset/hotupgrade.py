"""Hot upgrade: a sidecar runs as two containers, ``<name>-1`` and ``<name>-2`` (pure).

Upstream (``sidecarcontrol/util_hotupgrade.go``, ``webhook/pod/mutating/sidecarset_hotupgrade.go``,
``controller/sidecarset/sidecarset_hotupgrade.go``):

- at injection ``<name>-1`` runs the sidecar and ``<name>-2`` runs ``hotUpgradeEmptyImage`` (a
  do-nothing image with the same command, probes...); both get env ``SIDECARSET_VERSION`` /
  ``SIDECARSET_VERSION_ALT`` from the pod annotations ``version.sidecarset.kruise.io/<c>`` /
  ``versionalt.sidecarset.kruise.io/<c>`` (``-1``: 1/0, ``-2``: 0/1) and
  ``kruise.io/sidecarset-working-hotupgrade-container`` records ``{name: name-1}``;
- an upgrade writes the new image into the idle container (the one on the empty image; else the
  one not ready; else the older one), makes it the working one and sets the versions to the
  SidecarSet's resourceVersion;
- once the pod is consistent and ready again, the controller resets the other one to the empty
  image (versions ``0``): the "flip". The working container is never stopped on the way.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from kruise.workloads.objects import KubeObject, mapping, sequence, spec
from kruise.workloads.pods import container_status
from kruise.workloads.sidecarset.keys import (
    VERSION_ALT_ENV,
    VERSION_ENV,
    version_alt_annotation,
    version_annotation,
)
from kruise.workloads.sidecarset.podinfo import working_containers

__all__ = [
    "container_names",
    "empty_image",
    "hot_containers",
    "is_hot_upgrade",
    "pick_container_to_upgrade",
    "working_and_idle",
]

JSON = dict[str, Any]


def is_hot_upgrade(sidecar: Mapping[str, Any]) -> bool:
    """``upgradeStrategy.upgradeType`` is ``HotUpgrade``."""
    return mapping(sidecar.get("upgradeStrategy")).get("upgradeType") == "HotUpgrade"


def empty_image(sidecar: Mapping[str, Any]) -> str:
    """``upgradeStrategy.hotUpgradeEmptyImage`` ("" when unset)."""
    return str(mapping(sidecar.get("upgradeStrategy")).get("hotUpgradeEmptyImage") or "")


def container_names(name: str) -> tuple[str, str]:
    """``(<name>-1, <name>-2)``."""
    return f"{name}-1", f"{name}-2"


def working_and_idle(sidecar_name: str, pod: KubeObject) -> tuple[str, str]:
    """``(working, other)`` for ``sidecar_name`` from the pod's working-container annotation:
    ``-1`` when it says so, else ``-2`` (``GetPodHotUpgradeContainers``)."""
    first, second = container_names(sidecar_name)
    if working_containers(pod).get(sidecar_name) == first:
        return first, second
    return second, first


def _version_env(container: JSON) -> None:
    env = list(sequence(container.get("env")))
    name = str(container.get("name") or "")
    for key, annotation in (
        (VERSION_ENV, version_annotation(name)),
        (VERSION_ALT_ENV, version_alt_annotation(name)),
    ):
        env.append(
            {
                "name": key,
                "valueFrom": {
                    "fieldRef": {"apiVersion": "v1", "fieldPath": f"metadata.annotations['{annotation}']"}
                },
            }
        )
    container["env"] = env


def hot_containers(sidecar: Mapping[str, Any], working: dict[str, str]) -> tuple[list[JSON], dict[str, str]]:
    """The two containers injected for a hot-upgrade ``sidecar`` (``-1`` working, ``-2`` on the
    empty image) and the pod annotations to add; ``working`` (sidecar -> working container) is
    updated in place with ``{name: name-1}``."""
    name = str(sidecar.get("name") or "")
    first, second = container_names(name)
    one, two = copy.deepcopy(dict(sidecar)), copy.deepcopy(dict(sidecar))
    one["name"], two["name"] = first, second
    two["image"] = empty_image(sidecar)
    _version_env(one)
    _version_env(two)
    working[name] = first
    annotations = {
        version_annotation(first): "1",
        version_alt_annotation(first): "0",
        version_annotation(second): "0",
        version_alt_annotation(second): "1",
    }
    return [one, two], annotations


def pick_container_to_upgrade(
    sidecar: Mapping[str, Any], pod: KubeObject, consistent: Mapping[str, bool]
) -> tuple[str, str]:
    """``(to upgrade, the other)`` for a hot-upgrade sidecar (``findContainerToHotUpgrade``).

    The one on the empty image first; else the one not ready (ready = its status is ready and
    ``consistent[name]``); else the older one (not the working container).
    """
    first, second = container_names(str(sidecar.get("name") or ""))
    images = {mapping(c).get("name"): mapping(c).get("image") for c in sequence(spec(pod).get("containers"))}
    empty = empty_image(sidecar)
    if images.get(first) == empty:
        return first, second
    if images.get(second) == empty:
        return second, first

    def ready(name: str) -> bool:
        status = container_status(pod, name) or {}
        return bool(status.get("ready")) and consistent.get(name, False)

    if ready(first) and not ready(second):
        return second, first
    if not ready(first) and ready(second):
        return first, second
    working, other = working_and_idle(str(sidecar.get("name") or ""), pod)
    return other, working
