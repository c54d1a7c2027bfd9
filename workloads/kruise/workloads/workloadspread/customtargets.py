"""The reads behind WorkloadSpread's custom-workload white list (:mod:`.whitelist`): the
``kruise-configuration`` ConfigMap, a custom kind's resource by API discovery
(``/apis/<group>/<version>``, remembered once found) and a pod's chain of owners.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from kruise.core.errors import ApiError, NotFoundError
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import CONFIGMAPS, Resource
from kruise.core.runtime import controller_ref
from kruise.workloads.api.workloadspread import TargetFilterView, TargetView
from kruise.workloads.objects import KubeObject
from kruise.workloads.objects import namespace as namespace_of
from kruise.workloads.workloadspread.targetfilter import filtered_replicas
from kruise.workloads.workloadspread.whitelist import (
    CONFIGURATION_NAME,
    DEFAULT_NAMESPACE,
    WHITELIST_KEY,
    CustomWorkload,
    WhitelistError,
    chain_kinds,
    group_of,
    parse_whitelist,
    permits,
    replicas_of,
    replicas_path,
    split_api_version,
)

__all__ = ["MAX_OWNERS", "CustomKinds", "CustomTargets", "read_whitelist"]

MAX_OWNERS = 5
"""How many owners the pod webhook reads up from a pod before it gives up."""
log = logging.getLogger("kruise.workloadspread")


async def read_whitelist(kube: KubeClient, namespace: str) -> tuple[CustomWorkload, ...]:
    """The white list of ``kruise-configuration`` in ``namespace`` (absent: empty).

    Raises:
        kruise.core.errors.ApiError: the read failed.
        WhitelistError: the value does not parse.
    """
    config = await kube.get_or_none(CONFIGMAPS, CONFIGURATION_NAME, namespace)
    text = ((config or {}).get("data") or {}).get(WHITELIST_KEY)
    return parse_whitelist(text) if text else ()


class CustomKinds:
    """The API resource of a custom kind, found by discovery: an API group version's kinds are
    remembered once it answers with the kind wanted (asked again otherwise: a CRD may come)."""

    def __init__(self, kube: KubeClient) -> None:
        self.kube = kube
        self._kinds: dict[str, dict[str, Resource]] = {}

    async def resource(self, api_version: str, kind: str) -> Resource | None:
        """The resource serving ``kind`` at ``api_version`` (``None``: not served).

        Raises:
            kruise.core.errors.ApiError: discovery failed (other than not found).
        """
        known = self._kinds.get(api_version) or {}
        if kind in known:
            return known[kind]
        group, version = split_api_version(api_version)
        path = f"/apis/{group}/{version}" if group else f"/api/{version}"
        try:
            answer = await self.kube.request("GET", path)
        except NotFoundError:
            return None
        served: dict[str, Resource] = {}
        for item in answer.get("resources") or []:
            plural = str(item.get("name") or "")
            if plural and "/" not in plural:
                served[str(item.get("kind"))] = Resource(
                    group, version, plural, str(item.get("kind")), namespaced=bool(item.get("namespaced"))
                )
        if kind in served:
            self._kinds[api_version] = served
        return served.get(kind)

    async def get(self, api_version: str, kind: str, name: str, namespace: str) -> KubeObject | None:
        """The object, or ``None`` when its kind is not served or it is gone.

        Raises:
            kruise.core.errors.ApiError: discovery or the read failed.
        """
        res = await self.resource(api_version, kind)
        return None if res is None else await self.kube.get_or_none(res, name, namespace)


class CustomTargets:
    """The white list's use by the pod webhook and the controller (see the module doc): read from
    ``kruise-configuration`` in ``config_namespace`` at each use (a read failure or a value that
    does not parse counts as an empty list, logged), custom kinds resolved by :class:`CustomKinds`."""

    def __init__(self, kube: KubeClient, config_namespace: str = DEFAULT_NAMESPACE) -> None:
        self.kube = kube
        self.config_namespace = config_namespace
        self.kinds = CustomKinds(kube)

    async def workloads(self) -> tuple[CustomWorkload, ...]:
        """The listed workloads (empty when unreadable)."""
        try:
            return await read_whitelist(self.kube, self.config_namespace)
        except (ApiError, WhitelistError) as err:
            log.warning("WorkloadSpread custom workload white list not read: %s", err)
            return ()

    async def target(
        self, target: Mapping[str, Any], target_filter: TargetFilterView | None, namespace: str
    ) -> tuple[KubeObject | None, int]:
        """A listed custom target and its replicas (``targetFilter.replicasPathList`` first, else
        its ``replicasPath``); ``(None, 0)`` when the kind is not listed or served, or it is gone.

        Raises:
            kruise.core.errors.ApiError: the read failed.
            kruise.workloads.workloadspread.targetfilter.TargetFilterError: a path to a
                non-integer.
        """
        api_version, kind = str(target.get("apiVersion") or ""), str(target.get("kind") or "")
        workloads = await self.workloads()
        if not permits(workloads, api_version, kind):
            return None, 0
        obj = await self.kinds.get(api_version, kind, str(target.get("name") or ""), namespace)
        if obj is None:
            return None, 0
        if (target_filter or {}).get("replicasPathList"):
            return obj, filtered_replicas(obj, target_filter, 0)
        return obj, replicas_of(obj, replicas_path(workloads, api_version, kind))

    async def owners(self, pod: KubeObject, walk_builtin: Iterable[tuple[str, str]]) -> list[TargetView]:
        """The pod's controller and the controllers above it, as upstream's ``isReferenceEqual``
        walks them: the pod's controller must be a listed kind (or one of ``walk_builtin``,
        group and kind); each owner of such a kind is read and its controller added, up to
        :data:`MAX_OWNERS`. Empty when the list is empty or the pod's controller is not listed."""
        ref = controller_ref(pod)
        workloads = await self.workloads() if ref is not None else ()
        walk = chain_kinds(workloads) | frozenset(walk_builtin)
        out: list[TargetView] = []
        if (
            not workloads
            or ref is None
            or (group_of(str(ref.get("apiVersion") or "")), ref.get("kind")) not in walk
        ):
            return out
        while ref is not None and len(out) < MAX_OWNERS:
            api_version, kind = str(ref.get("apiVersion") or ""), str(ref.get("kind") or "")
            out.append({"apiVersion": api_version, "kind": kind, "name": str(ref.get("name") or "")})
            if (group_of(api_version), kind) not in walk:
                break
            try:
                owner = await self.kinds.get(api_version, kind, str(ref.get("name") or ""), namespace_of(pod))
            except ApiError as err:
                log.info("WorkloadSpread: owner %s %s not read: %s", kind, ref.get("name"), err)
                break
            ref = controller_ref(owner) if owner is not None else None
        return out
