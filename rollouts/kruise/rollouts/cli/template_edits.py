"""``set image|env|resources`` on a workload's pod template (pure): the JSON patch, or a refusal.

Rules as ``kubectl set`` (kubectl-kruise reuses them for its kinds; the pod spec edited is the
one :mod:`.kinds` names: a pod template's, a CronJob's job template's, a Pod's own):

- ``image``: ``CONTAINER=IMAGE`` pairs, ``*`` for every container; init containers count;
  a name matching nothing is ``unable to find container named "x"``;
- ``env``: ``KEY=VALUE`` sets, ``KEY-`` removes, in the containers ``-c`` selects (shell
  wildcards, ``*`` by default); with ``--overwrite=false`` an existing key is refused;
- ``resources``: ``--limits``/``--requests`` as ``cpu=100m,memory=256Mi``, merged into each
  selected container's requirements.

Each change is a JSON patch replacing exactly the fields it changes (a container's ``image``,
``env`` or ``resources``): an image-only change stays an image-only change, which a CloneSet
updates in place; ``None`` when nothing changes.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from typing import Any

from kruise.rollouts.cli.edits import EditError
from kruise.rollouts.cli.kinds import pod_spec

JSON = dict[str, Any]
_KINDS = (("initContainers", "init container"), ("containers", "container"))


def _containers(obj: Mapping[str, Any]) -> list[tuple[str, int, Mapping[str, Any]]]:
    """``(list pointer, index, container)`` of every container of the pod spec, init ones first
    (the pod spec where :func:`~kruise.rollouts.cli.kinds.pod_spec` says it is)."""
    base, spec = pod_spec(obj)
    return [(f"{base}/{field}", i, c) for field, _ in _KINDS for i, c in enumerate(spec.get(field) or [])]


def _path(containers: str, index: int, leaf: str) -> str:
    return f"{containers}/{index}/{leaf}"


def parse_pairs(args: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """Split ``args`` into resource words and ``KEY=VALUE`` pairs (``kubectl set image`` style)."""
    words, pairs = [], {}
    for arg in args:
        key, eq, value = arg.partition("=")
        if eq and key and "/" not in key:
            pairs[key] = value
        else:
            words.append(arg)
    return words, pairs


def image_patch(obj: Mapping[str, Any], images: Mapping[str, str]) -> list[JSON] | None:
    """Set container images; ``*`` sets every container's."""
    if not images:
        raise EditError("at least one image update is required")
    containers = _containers(obj)
    ops: list[JSON] = []
    for name, image in images.items():
        hits = [(f, i, c) for f, i, c in containers if name == "*" or c.get("name") == name]
        if not hits:
            raise EditError(f'unable to find container named "{name}"')
        for field, index, container in hits:
            if container.get("image") != image:
                ops.append({"op": "replace", "path": _path(field, index, "image"), "value": image})
    return ops or None


def parse_env(args: Sequence[str]) -> tuple[dict[str, str], list[str]]:
    """``KEY=VALUE`` to set and ``KEY-`` to remove; :class:`EditError` for anything else."""
    sets: dict[str, str] = {}
    removes: list[str] = []
    for arg in args:
        key, eq, value = arg.partition("=")
        if eq and key:
            sets[key] = value
        elif arg.endswith("-") and len(arg) > 1:
            removes.append(arg[:-1])
        else:
            raise EditError(
                "environment variables must be of the form key=value and can only contain letters, "
                f"numbers, and underscores: {arg}"
            )
    return sets, removes


def _selected(
    containers: list[tuple[str, int, Mapping[str, Any]]], pattern: str
) -> list[tuple[str, int, Mapping[str, Any]]]:
    chosen = [(f, i, c) for f, i, c in containers if fnmatch.fnmatchcase(str(c.get("name")), pattern)]
    if not chosen:
        raise EditError(f"unable to find any container matching {pattern!r}")
    return chosen


def env_patch(
    obj: Mapping[str, Any],
    sets: Mapping[str, Any],
    removes: Sequence[str] = (),
    *,
    containers: str = "*",
    overwrite: bool = True,
) -> list[JSON] | None:
    """Set (``sets``: name -> value, or an ``{"valueFrom": ...}`` mapping) and remove env vars."""
    ops: list[JSON] = []
    for field, index, container in _selected(_containers(obj), containers):
        env = [dict(e) for e in container.get("env") or []]
        new = [e for e in env if e.get("name") not in removes]
        for key, value in sets.items():
            entry = {"name": key, **(value if isinstance(value, Mapping) else {"value": value})}
            existing = next((e for e in new if e.get("name") == key), None)
            if existing is None:
                new.append(entry)
            elif existing != entry:
                if not overwrite:
                    raise EditError(
                        f"'{key}' already has a value ({existing.get('value', '')}), and --overwrite is false"
                    )
                new[new.index(existing)] = entry
        if new != env:
            ops.append({"op": "add", "path": _path(field, index, "env"), "value": new})
    return ops or None


def parse_quantities(text: str) -> dict[str, str]:
    """``cpu=100m,memory=256Mi`` -> mapping; :class:`EditError` when malformed."""
    out: dict[str, str] = {}
    for item in filter(None, (p.strip() for p in text.split(","))):
        key, eq, value = item.partition("=")
        if not (eq and key and value):
            raise EditError(f"invalid resource specification {item!r}: want name=quantity, e.g. cpu=100m")
        out[key] = value
    return out


def resources_patch(
    obj: Mapping[str, Any], limits: Mapping[str, str], requests: Mapping[str, str], *, containers: str = "*"
) -> list[JSON] | None:
    """Merge ``limits``/``requests`` into the selected containers' resources."""
    if not limits and not requests:
        raise EditError(
            "you must specify an update to requests or limits (in the form of --requests/--limits)"
        )
    ops: list[JSON] = []
    for field, index, container in _selected(_containers(obj), containers):
        current = dict(container.get("resources") or {})
        new = dict(current)
        for section, values in (("limits", limits), ("requests", requests)):
            if values:
                new[section] = {**(current.get(section) or {}), **values}
        if new != current:
            ops.append({"op": "add", "path": _path(field, index, "resources"), "value": new})
    return ops or None


def env_listing(obj: Mapping[str, Any], containers: str = "*") -> str:
    """``set env --list``: ``# <kind> <name>, container <c>`` then ``KEY=VALUE`` lines."""
    kind, name = str(obj.get("kind", "")).lower(), obj["metadata"]["name"]
    lines = []
    for _field, _index, container in _selected(_containers(obj), containers):
        lines.append(f"# {kind} {name}, container {container.get('name')}")
        for env in container.get("env") or []:
            if "value" in env:
                lines.append(f"{env['name']}={env['value']}")
            else:
                source = next(iter(env.get("valueFrom") or {}), "valueFrom")
                lines.append(f"# {env['name']} from {source}")
    return "\n".join(lines) + "\n"


def apply_ops(obj: Mapping[str, Any], ops: Sequence[Mapping[str, Any]]) -> JSON:
    """``obj`` with the patch applied (``--local`` / ``--dry-run=client`` print this)."""
    import jsonpatch

    return dict(jsonpatch.apply_patch(dict(obj), list(ops)))
