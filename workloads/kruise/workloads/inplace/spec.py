"""Can a pod be updated in place? (``pkg/util/inplaceupdate`` ``defaultCalculateInPlaceUpdateSpec``).

Upstream diffs the two revisions' raw data with a JSON patch and accepts only ``replace`` of
``/spec/containers/<i>/image`` plus any ``/metadata/...`` change; anything else means recreate.
:func:`_json_patch_ops` reproduces that patch generator (appscode/jsonpatch) closely enough for
the decision, so edge cases (a container added, an image added rather than replaced, a whole
``spec`` replaced) fall out the same way.

Not mirrored (documented deviations):

* gate ``InPlaceWorkloadVerticalScaling`` (off by default): resource changes always recreate;
* a metadata op that is not a label/annotation key (e.g. ``/metadata/finalizers/0``) is only
  part of the metadata patch; upstream also flags every container for env-from-metadata;
* adding a whole ``labels``/``annotations`` map (upstream panics on that op path) is treated
  key by key;

The annotation shapes and the completion check live in :mod:`.state`; the package re-exports
both, so ``kruise.workloads.inplace`` is the one import for the in-place engine.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kruise.core.patches import merge_patch
from kruise.workloads.objects import mapping, sequence, spec

_IMAGE_PATH = re.compile(r"/spec/containers/([0-9]+)/image")
_Op = tuple[str, str, Any]


@dataclass(frozen=True)
class InPlaceUpdateSpec:
    """What an in-place update changes (upstream ``UpdateSpec``).

    Attributes:
        revision: target revision name, written to the pod's revision labels.
        container_images: container name -> new image.
        container_ref_metadata: container name -> ``{"labels": {...}, "annotations": {...}}`` for
            changed keys that container reads through downward-API env (gate
            ``InPlaceUpdateEnvFromMetadata``); applied in that container's batch.
        metadata_patch: merge patch ``{"metadata": {"labels": {...}, ...}}`` for the other
            label/annotation changes (``None`` values delete), or ``None``.
        update_env_from_metadata: whether any ``container_ref_metadata`` was recorded.
        grace_seconds: ``inPlaceUpdateStrategy.gracePeriodSeconds``.
    """

    revision: str = ""
    container_images: Mapping[str, str] = field(default_factory=dict)
    container_ref_metadata: Mapping[str, Mapping[str, Mapping[str, str]]] = field(default_factory=dict)
    metadata_patch: Mapping[str, Any] | None = None
    update_env_from_metadata: bool = False
    grace_seconds: int = 0

    def to_json(self) -> str:
        """The ``apps.kruise.io/inplace-update-grace`` annotation value (Go ``UpdateSpec`` JSON)."""
        body: dict[str, Any] = {"revision": self.revision}
        if self.container_images:
            body["containerImages"] = dict(self.container_images)
        if self.container_ref_metadata:
            body["containerRefMetadata"] = {k: dict(v) for k, v in self.container_ref_metadata.items()}
        if self.metadata_patch is not None:
            raw = json.dumps(self.metadata_patch, separators=(",", ":"), sort_keys=True).encode()
            body["metaDataPatch"] = base64.b64encode(raw).decode()
        if self.update_env_from_metadata:
            body["updateEnvFromMetadata"] = True
        if self.grace_seconds:
            body["graceSeconds"] = self.grace_seconds
        return json.dumps(body, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> InPlaceUpdateSpec:
        """Parse a grace annotation value. Raises ``ValueError`` on malformed JSON."""
        body = mapping(json.loads(text))
        patch_b64 = body.get("metaDataPatch")
        patch = json.loads(base64.b64decode(patch_b64)) if isinstance(patch_b64, str) and patch_b64 else None
        return cls(
            revision=str(body.get("revision") or ""),
            container_images=dict(mapping(body.get("containerImages"))),
            container_ref_metadata={
                k: dict(mapping(v)) for k, v in mapping(body.get("containerRefMetadata")).items()
            },
            metadata_patch=patch if isinstance(patch, dict) and patch else None,
            update_env_from_metadata=bool(body.get("updateEnvFromMetadata")),
            grace_seconds=int(body.get("graceSeconds") or 0),
        )


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "object" if isinstance(value, Mapping) else "array"


def _path(base: str, key: object) -> str:
    return f"{base}/{str(key).replace('~', '~0').replace('/', '~1')}"


def _json_patch_ops(old: Any, new: Any, path: str = "") -> list[_Op]:
    """JSON-patch ops turning ``old`` into ``new`` (shape of appscode/jsonpatch ``CreatePatch``).

    Arrays of objects/arrays are compared element-wise (trailing removes/adds); arrays of
    scalars that differ yield a single ``replace`` of the array (upstream emits edit-distance
    ops there, which the in-place decision treats the same way).
    """
    kind_old, kind_new = _kind(old), _kind(new)
    if kind_old == "null" and kind_new == "null":
        return []
    if kind_old == "null":
        return [("add", path, new)]
    if kind_old != kind_new:
        return [("replace", path, new)]
    if kind_old == "object":
        ops: list[_Op] = []
        for key, value in new.items():
            ops += (
                [("add", _path(path, key), value)]
                if key not in old
                else _json_patch_ops(old[key], value, _path(path, key))
            )
        ops += [("remove", _path(path, key), None) for key in old if key not in new]
        return ops
    if kind_old == "array":
        if all(_kind(v) not in ("object", "array") for v in [*old, *new]):
            return [] if list(old) == list(new) else [("replace", path, new)]
        common = min(len(old), len(new))
        ops = [("remove", _path(path, i), None) for i in range(len(old) - 1, common - 1, -1)]
        ops += [("add", _path(path, i), new[i]) for i in range(common, len(new))]
        for i in range(common):
            ops += _json_patch_ops(old[i], new[i], _path(path, i))
        return ops
    return [] if old == new else [("replace", path, new)]


def _references_meta(container: Mapping[str, Any], field_path: str) -> bool:
    for env in sequence(container.get("env")):
        ref = mapping(mapping(mapping(env).get("valueFrom")).get("fieldRef"))
        if ref.get("fieldPath") == field_path:
            return True
    return False


def calculate_in_place_update_spec(
    old_template: Mapping[str, Any],
    new_template: Mapping[str, Any],
    *,
    revision: str = "",
    grace_seconds: int = 0,
    env_from_metadata: bool = True,
) -> InPlaceUpdateSpec | None:
    """Decide whether ``old_template`` -> ``new_template`` (pod templates) can be done in place.

    Returns ``None`` (recreate) when anything changed besides container images (same container
    count, image replaced rather than added) and ``metadata`` keys; otherwise the spec with
    images by container name, env-referenced metadata per container (when
    ``env_from_metadata``, the default-on gate ``InPlaceUpdateEnvFromMetadata``) and a merge
    patch for the remaining label/annotation changes. Mirrors ``defaultCalculateInPlaceUpdateSpec``.
    """
    old_t, new_t = dict(old_template), dict(new_template)
    old_t.pop("$patch", None)
    new_t.pop("$patch", None)
    images: dict[str, str] = {}
    metadata_ops: list[_Op] = []
    old_containers = sequence(spec(old_t).get("containers"))
    for op, path, value in _json_patch_ops(old_t, new_t):
        if not path.startswith("/spec/"):
            if path.startswith("/metadata/"):
                metadata_ops.append((op, path, value))
                continue
            return None
        match = _IMAGE_PATH.fullmatch(path)
        if op != "replace" or match is None or not isinstance(value, str):
            return None
        index = int(match.group(1))
        if index >= len(old_containers):
            return None
        images[str(mapping(old_containers[index]).get("name") or "")] = value

    if not metadata_ops:
        return InPlaceUpdateSpec(revision=revision, container_images=images, grace_seconds=grace_seconds)

    old_meta = {
        k: dict(mapping(v)) if k in ("labels", "annotations") else v
        for k, v in mapping(old_t.get("metadata")).items()
    }
    new_meta = {
        k: dict(mapping(v)) if k in ("labels", "annotations") else v
        for k, v in mapping(new_t.get("metadata")).items()
    }
    ref_metadata: dict[str, dict[str, dict[str, str]]] = {}
    if env_from_metadata:
        changed: list[tuple[str, str, str]] = []
        for op, path, value in metadata_ops:
            words = path.split("/", 3)
            if op not in ("replace", "add") or words[2] not in ("labels", "annotations"):
                continue
            if len(words) == 4:
                changed.append((words[2], words[3].replace("~1", "/").replace("~0", "~"), str(value)))
            else:
                changed += [(words[2], str(k), str(v)) for k, v in mapping(value).items()]
        for kind, key, value in changed:
            for container in sequence(spec(new_t).get("containers")):
                if not _references_meta(mapping(container), f"metadata.{kind}['{key}']"):
                    continue
                entry = ref_metadata.setdefault(str(mapping(container).get("name") or ""), {})
                entry.setdefault(kind, {})[key] = value
                for meta in (old_meta, new_meta):
                    bucket = meta.get(kind)
                    if isinstance(bucket, dict):
                        bucket.pop(key, None)
    patch = merge_patch(old_meta, new_meta)
    return InPlaceUpdateSpec(
        revision=revision,
        container_images=images,
        container_ref_metadata=ref_metadata,
        metadata_patch={"metadata": patch} if patch else None,
        update_env_from_metadata=bool(ref_metadata),
        grace_seconds=grace_seconds,
    )
