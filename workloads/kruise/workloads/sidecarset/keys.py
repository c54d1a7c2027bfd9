"""SidecarSet's well-known keys, as upstream spells them (``pkg/control/sidecarcontrol``)."""

from __future__ import annotations

from typing import Final

SIDECARSET_NAME_LABEL: Final = "kruise.io/sidecarset-name"
"""ControllerRevision label naming the SidecarSet the revision belongs to."""
CUSTOM_VERSION_LABEL: Final = "apps.kruise.io/sidecarset-custom-version"
"""SidecarSet label copied onto its newest ControllerRevision."""

HASH_ANNOTATION: Final = "kruise.io/sidecarset-hash"
"""On the SidecarSet: its hash; on a pod: JSON map SidecarSet name -> upgrade spec."""
HASH_WITHOUT_IMAGE_ANNOTATION: Final = "kruise.io/sidecarset-hash-without-image"
"""As :data:`HASH_ANNOTATION`, with every container image blanked before hashing."""
INJECTED_LIST_ANNOTATION: Final = "kruise.io/sidecarset-injected-list"
"""Pod annotation: the comma-separated, sorted names of the SidecarSets injected into the pod."""
INPLACE_UPDATE_STATE_ANNOTATION: Final = "kruise.io/sidecarset-inplace-update-state"
"""Pod annotation: JSON map SidecarSet name -> ``InPlaceUpdateState`` of its last upgrade."""
WORKING_HOT_UPGRADE_ANNOTATION: Final = "kruise.io/sidecarset-working-hotupgrade-container"
"""Pod annotation: JSON map sidecar name -> the working container (``envoy`` -> ``envoy-2``)."""

INJECTED_ENV: Final = "IS_INJECTED"
"""Env ``IS_INJECTED=true`` marks an injected container (app containers never carry it)."""
VERSION_ENV: Final = "SIDECARSET_VERSION"
"""Hot upgrade: env from ``metadata.annotations['version.sidecarset.kruise.io/<container>']``."""
VERSION_ALT_ENV: Final = "SIDECARSET_VERSION_ALT"
"""Hot upgrade: env from ``metadata.annotations['versionalt.sidecarset.kruise.io/<container>']``."""

SIDECAR_ONLY_FIELDS: Final = (
    "podInjectPolicy",
    "upgradeStrategy",
    "shareVolumePolicy",
    "transferEnv",
    "resourcesPolicy",
)
"""SidecarContainer fields that are not the container's (left out of the injected container)."""

UPGRADABLE_CONDITION: Final = "SidecarSetUpgradable"
"""Pod condition: False (reason ``UpdateImmutableField``) when a SidecarSet changed more than
images and cannot upgrade the pod in place; the message is a JSON map SidecarSet -> bool."""
UPGRADABLE_REASON: Final = "AllSidecarsetUpgradable"
NOT_UPGRADABLE_REASON: Final = "UpdateImmutableField"
NOT_UPGRADABLE_EVENT: Final = "NotUpgradablePods"


def version_annotation(container: str) -> str:
    """``version.sidecarset.kruise.io/<container>`` (hot-upgrade containers only)."""
    return f"version.sidecarset.kruise.io/{container}"


def version_alt_annotation(container: str) -> str:
    """``versionalt.sidecarset.kruise.io/<container>`` (hot-upgrade containers only)."""
    return f"versionalt.sidecarset.kruise.io/{container}"
