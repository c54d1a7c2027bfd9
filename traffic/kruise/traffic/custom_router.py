"""Adapter: Lua-driven custom providers (``trafficRoutings[].customNetworkRefs[]``).

For every referenced object: read it, run its script on the saved original
(:mod:`kruise.traffic.custom`), and replace it with the read ``resourceVersion`` when the result
differs. As upstream, every object is read and every script run before the first write, so a
broken script leaves all objects untouched. Kinds we do not know are resolved to their plural
through API discovery (``/apis/<group>/<version>``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kruise.core.errors import NotFoundError, ProviderError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import Resource
from kruise.traffic.custom import desired_object, differs, restored_object
from kruise.traffic.intent import JSON, RouteReport, TrafficIntent
from kruise.traffic.resources import known_resource, split_api_version
from kruise.traffic.retry import retry_on_conflict
from kruise.traffic.scripts import LuaScriptSource, custom_script


async def resolve_resource(kube: KubeClient, api_version: str, kind: str) -> Resource:
    """The Resource of ``apiVersion``/``kind``: our table, else API discovery.

    Raises ProviderError when the API server does not serve the kind.
    """
    known = known_resource(api_version, kind)
    if known is not None:
        return known
    group, version = split_api_version(api_version)
    path = f"/apis/{group}/{version}" if group else f"/api/{version}"
    try:
        listing = await kube.request("GET", path)
    except NotFoundError as err:
        raise ProviderError(f"API {api_version} is not served") from err
    for item in listing.get("resources") or []:
        if item.get("kind") == kind and "/" not in str(item.get("name")):
            return Resource(group, version, str(item["name"]), kind, bool(item.get("namespaced", True)))
    raise ProviderError(f"kind {kind} is not served by {api_version}")


class CustomRouter:
    """A TrafficRouter over ``customNetworkRefs`` (upstream ``customController``)."""

    def __init__(
        self,
        kube: KubeClient,
        namespace: str,
        refs: Sequence[Mapping[str, Any]],
        scripts: LuaScriptSource,
        params: Mapping[str, str] | None = None,
    ) -> None:
        for ref in refs:
            if not (ref.get("apiVersion") and ref.get("kind") and ref.get("name")):
                raise ProviderError(f"customNetworkRefs entry needs apiVersion, kind and name: {dict(ref)}")
        self.kube = kube
        self.namespace = namespace
        self.refs = [dict(ref) for ref in refs]
        self.scripts = scripts
        self.params = dict(params or {})
        self._resources: dict[tuple[str, str], Resource] = {}

    async def _resource(self, ref: Mapping[str, Any]) -> Resource:
        key = (str(ref["apiVersion"]), str(ref["kind"]))
        if key not in self._resources:
            self._resources[key] = await resolve_resource(self.kube, *key)
        return self._resources[key]

    async def ensure(self, intent: TrafficIntent) -> RouteReport:
        """Apply every object's script for ``intent``; NotFoundError when an object is missing."""
        if not intent.routes_traffic:
            return RouteReport.unchanged("custom providers: step routes no traffic")
        return await retry_on_conflict(lambda: self._ensure(intent))

    async def _ensure(self, intent: TrafficIntent) -> RouteReport:
        planned: list[tuple[Resource, JSON, JSON]] = []
        for ref in self.refs:
            res = await self._resource(ref)
            obj = await self.kube.get(res, str(ref["name"]), self.namespace)
            script = await custom_script(self.scripts, str(ref["apiVersion"]), str(ref["kind"]))
            planned.append((res, obj, desired_object(obj, script, intent, self.params)))
        reports = []
        for res, obj, desired in planned:
            label = f"{res.kind} {obj['metadata']['name']}"
            if differs(obj, desired):
                await self.kube.replace(res, desired)
                reports.append(RouteReport.applied(f"{label} updated"))
            else:
                reports.append(RouteReport.unchanged(f"{label} already routes as wanted"))
        return RouteReport.combine(reports)

    async def restore(self, intent: TrafficIntent) -> RouteReport:
        """Put every object's saved spec/labels/annotations back; missing objects are skipped."""
        return await retry_on_conflict(self._restore)

    async def _restore(self) -> RouteReport:
        reports = []
        for ref in self.refs:
            res = await self._resource(ref)
            label = f"{ref['kind']} {ref['name']}"
            obj = await self.kube.get_or_none(res, str(ref["name"]), self.namespace)
            restored = None if obj is None else restored_object(obj)
            if obj is None or restored is None:
                reports.append(RouteReport.unchanged(f"{label} has nothing to restore"))
                continue
            await self.kube.replace(res, restored)
            reports.append(RouteReport.applied(f"{label} restored"))
        return RouteReport.combine(reports)
