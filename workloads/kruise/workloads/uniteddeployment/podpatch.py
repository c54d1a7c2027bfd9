"""A subset's ``patch`` applied to its pod template: a strategic merge patch of a
``PodTemplateSpec`` (upstream ``strategicpatch.StrategicMergePatch(template, patch,
&corev1.PodTemplateSpec{})``), pure.

The Kubernetes rules for the fields a pod template has:

- maps merge key by key; a ``null`` value deletes the key; ``{"$patch": "replace"}`` in a map
  replaces it whole, ``{"$patch": "delete"}`` removes it;
- lists with a merge key merge item by item (new items appended, matched ones merged,
  ``{"<key>": ..., "$patch": "delete"}`` removes one, a ``{"$patch": "replace"}`` item replaces the
  list): containers, initContainers, ephemeralContainers, volumes, imagePullSecrets,
  resourceClaims, schedulingGates (``name``), hostAliases (``ip``), topologySpreadConstraints
  (``topologyKey``); in a container env (``name``), ports (``containerPort``), volumeMounts
  (``mountPath``), volumeDevices (``devicePath``);
- every other list (tolerations, args, command, ...) is replaced.

Not handled: ``$retainKeys``, ``$setElementOrder`` and ``$deleteFromPrimitiveList`` directives
(ignored), and the ``patchStrategy: merge`` of primitive lists (``finalizers``; replaced).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

__all__ = ["patch_pod_template"]

_CONTAINER = {
    "env": "name",
    "ports": "containerPort",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
}
_POD_SPEC = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "volumes": "name",
    "imagePullSecrets": "name",
    "resourceClaims": "name",
    "schedulingGates": "name",
    "hostAliases": "ip",
    "topologySpreadConstraints": "topologyKey",
}
_CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")


class _Schema:
    """Merge keys of a map's list fields, and the schema of their items / child maps."""

    def __init__(
        self, keys: Mapping[str, str] | None = None, children: Mapping[str, _Schema] | None = None
    ) -> None:
        self.keys = dict(keys or {})
        self.children = dict(children or {})

    def child(self, name: str) -> _Schema:
        return self.children.get(name, _PLAIN)


_PLAIN = _Schema()
_CONTAINER_SCHEMA = _Schema(_CONTAINER)
_POD_SPEC_SCHEMA = _Schema(_POD_SPEC, {name: _CONTAINER_SCHEMA for name in _CONTAINER_LISTS})
_TEMPLATE_SCHEMA = _Schema(children={"spec": _POD_SPEC_SCHEMA})


def _clean(value: Any) -> Any:
    """A patch value as stored: directives dropped, ``null`` members left out."""
    if isinstance(value, Mapping):
        return {k: _clean(v) for k, v in value.items() if not k.startswith("$") and v is not None}
    if isinstance(value, list):
        return [_clean(v) for v in value if not (isinstance(v, Mapping) and v.get("$patch") == "replace")]
    return value


def _merge_map(original: Any, patch: Mapping[str, Any], schema: _Schema) -> Any:
    directive = patch.get("$patch")
    if directive == "replace":
        return _clean(patch)
    if directive == "delete":
        return None
    out = copy.deepcopy(dict(original)) if isinstance(original, Mapping) else {}
    for key, value in patch.items():
        if key.startswith("$"):
            continue
        if value is None:
            out.pop(key, None)
        elif key in schema.keys and isinstance(value, list):
            out[key] = _merge_list(out.get(key), value, schema.keys[key], schema.child(key))
        elif isinstance(value, Mapping):
            merged = _merge_map(out.get(key), value, schema.child(key))
            if merged is None:
                out.pop(key, None)
            else:
                out[key] = merged
        else:
            out[key] = copy.deepcopy(value)
    return out


def _merge_list(original: Any, patch: list[Any], key: str, item_schema: _Schema) -> list[Any]:
    if any(isinstance(i, Mapping) and i.get("$patch") == "replace" for i in patch):
        return [_clean(i) for i in patch if not (isinstance(i, Mapping) and i.get("$patch") == "replace")]
    out = copy.deepcopy(list(original)) if isinstance(original, list) else []
    for item in patch:
        if not isinstance(item, Mapping):
            out.append(copy.deepcopy(item))
            continue
        at = next(
            (
                i
                for i, o in enumerate(out)
                if isinstance(o, Mapping) and key in item and o.get(key) == item[key]
            ),
            None,
        )
        if item.get("$patch") == "delete":
            if at is not None:
                del out[at]
        elif at is not None:
            out[at] = _merge_map(out[at], item, item_schema)
        else:
            out.append(_merge_map({}, item, item_schema))
    return out


def patch_pod_template(template: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """``template`` with ``patch`` applied as a strategic merge patch of a ``PodTemplateSpec``
    (see the module doc); the inputs are not modified."""
    merged = _merge_map(template, patch, _TEMPLATE_SCHEMA)
    return merged if isinstance(merged, dict) else {}
