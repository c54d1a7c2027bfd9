"""Which objects a kubectl-style command names: ``TYPE/NAME ...``, ``TYPE NAME ...`` or ``-f FILE``.

Resource types are spelled as kubectl accepts them: singular, plural, short name or
``plural.group`` (``rollout``, ``rollouts``, ``ro``, ``rollouts.rollouts.kruise.io``; ``cloneset``,
``clone``; ``deployment``, ``deploy``, ...), case-insensitively. A word two kinds share (``sts``,
``statefulset``, ``daemonset``) names the built-in ``apps`` kind, as kubectl's discovery order has
it; the Advanced ones are ``asts``, ``ads``, ``daemon`` or ``statefulset.apps.kruise.io``. Objects
are printed as kubectl's
name printer does: ``<kind>.<group>/<name>`` (``cloneset.apps.kruise.io/web``,
``deployment.apps/web``, ``service/web``).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kruise.core.kube import Resource
from kruise.core.kube.resources import (
    ADVANCEDCRONJOBS,
    CLONESETS,
    DAEMONSETS,
    DEPLOYMENTS,
    NATIVE_DAEMONSETS,
    NATIVE_STATEFULSETS,
    PODS,
    SERVICES,
    STATEFULSETS,
)
from kruise.rollouts.resources import ROLLOUTS

CRONJOBS = Resource("batch", "v1", "cronjobs", "CronJob")
JOBS = Resource("batch", "v1", "jobs", "Job")
ADVANCED_STATEFULSETS, ADVANCED_DAEMONSETS = STATEFULSETS, DAEMONSETS  # apps.kruise.io

_SHORT: dict[Resource, tuple[str, ...]] = {ROLLOUTS: ("ro",), CLONESETS: ("clone",), DEPLOYMENTS: ("deploy",)}
_SHORT |= {CRONJOBS: ("cj",), SERVICES: ("svc",), PODS: ("po",)}
_SHORT |= {NATIVE_STATEFULSETS: ("sts",), NATIVE_DAEMONSETS: ("ds",), ADVANCEDCRONJOBS: ("acj",)}
_SHORT |= {ADVANCED_STATEFULSETS: ("sts", "asts"), ADVANCED_DAEMONSETS: ("daemon", "ads")}
# built-in kinds before CRDs: the first kind a word spells wins, as in kubectl's discovery order
KNOWN: tuple[Resource, ...] = (ROLLOUTS, CLONESETS, DEPLOYMENTS, CRONJOBS, JOBS, SERVICES, PODS)
KNOWN += (NATIVE_STATEFULSETS, NATIVE_DAEMONSETS, ADVANCED_STATEFULSETS, ADVANCED_DAEMONSETS)
KNOWN += (ADVANCEDCRONJOBS,)


class RefError(ValueError):
    """The arguments name no object this tool can find (kubectl's message)."""


def _spellings(res: Resource) -> Iterable[str]:
    singular = res.kind.lower()
    for base in (singular, res.plural, *_SHORT.get(res, ())):
        yield base
        if res.group:
            yield f"{base}.{res.group}"


TYPES: dict[str, Resource] = {}
for _res in KNOWN:
    for _name in _spellings(_res):
        TYPES.setdefault(_name, _res)
BY_KIND: dict[tuple[str, str], Resource] = {(res.group, res.kind): res for res in KNOWN}


def resource_for(api_version: str, kind: str) -> Resource | None:
    """The resource of ``apiVersion``/``kind`` (``apps.kruise.io/v1beta1``, ``StatefulSet``), or None."""
    group = api_version.rpartition("/")[0]
    return BY_KIND.get((group, kind))


def qualified(res: Resource) -> str:
    """``cloneset.apps.kruise.io``, ``deployment.apps``, ``service``: kubectl's name-printer prefix."""
    return f"{res.kind.lower()}.{res.group}" if res.group else res.kind.lower()


def group_resource(res: Resource) -> str:
    """``clonesets.apps.kruise.io``: how API errors name the resource."""
    return f"{res.plural}.{res.group}" if res.group else res.plural


@dataclass(frozen=True)
class Ref:
    """One named object."""

    res: Resource
    name: str
    namespace: str

    def __str__(self) -> str:
        return f"{qualified(self.res)}/{self.name}"


def resource_type(word: str) -> Resource:
    """The resource for a type word; :class:`RefError` as kubectl words it when unknown."""
    res = TYPES.get(word.lower())
    if res is None:
        raise RefError(f'the server doesn\'t have a resource type "{word}"')
    return res


def read_documents(filenames: Sequence[str]) -> list[dict[str, Any]]:
    """The objects in ``filenames`` (files, directories of ``.yaml``/``.yml``/``.json``, ``-``)."""
    texts: list[str] = []
    for name in filenames:
        if name == "-":
            texts.append(sys.stdin.read())
            continue
        path = Path(name)
        if path.is_dir():
            texts += [p.read_text() for p in sorted(path.iterdir()) if p.suffix in (".yaml", ".yml", ".json")]
        elif path.is_file():
            texts.append(path.read_text())
        else:
            raise RefError(f'the path "{name}" does not exist')
    return [doc for text in texts for doc in yaml.safe_load_all(text) if doc]


def ref_of(doc: Mapping[str, Any], namespace: str) -> Ref:
    """The :class:`Ref` of an object read from a file (its namespace, else ``namespace``)."""
    res = resource_for(str(doc.get("apiVersion") or ""), str(doc.get("kind")))
    if res is None:
        raise RefError(f"this tool does not handle kind {doc.get('kind')!r} (from -f)")
    meta = doc.get("metadata") or {}
    return Ref(res, str(meta.get("name")), str(meta.get("namespace") or namespace))


def parse_refs(args: Sequence[str], namespace: str, filenames: Sequence[str] = ()) -> list[Ref]:
    """The objects named by ``args`` (``TYPE/NAME ...`` or ``TYPE NAME ...``) and ``filenames``."""
    refs = [ref_of(doc, namespace) for doc in read_documents(filenames)]
    if any("/" in a for a in args):
        if not all("/" in a for a in args):
            raise RefError(
                "there is no need to specify a resource type as a separate argument when passing "
                "arguments in resource/name form (e.g. 'kubectl get resource/<resource_name>' instead "
                "of 'kubectl get resource resource/<resource_name>'"
            )
        for arg in args:
            word, _, name = arg.partition("/")
            if not name:
                raise RefError(f"arguments in resource/name form must have a single resource and name: {arg}")
            refs.append(Ref(resource_type(word), name, namespace))
    elif args:
        res = resource_type(args[0])
        if len(args) == 1:
            raise RefError(f"resource(s) were provided, but no name was specified: {args[0]}")
        refs += [Ref(res, name, namespace) for name in args[1:]]
    if not refs:
        raise RefError("required resource not specified")
    return refs


def only(refs: Sequence[Ref], allowed: Sequence[Resource], verb: str) -> list[Ref]:
    """``refs`` when every one is of an ``allowed`` kind, else :class:`RefError` (kubectl-kruise's
    ``<resource> "<name>" <verb> is not supported``)."""
    for ref in refs:
        if ref.res not in allowed:
            raise RefError(f'{group_resource(ref.res)} "{ref.name}" {verb} is not supported')
    return list(refs)
