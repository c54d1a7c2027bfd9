"""Adapter: user Lua scripts from the ``kruise-rollout-configuration`` ConfigMap.

Upstream reads the ConfigMap on every lookup (``configuration.getRolloutConfiguration``); so do
we, so that an edited script takes effect on the next reconcile without a restart.
"""

from __future__ import annotations

from kruise.core.kube import KubeClient
from kruise.traffic.resources import CONFIGMAPS
from kruise.traffic.scripts import DEFAULT_CONFIG_NAMESPACE, LUA_CONFIGMAP


class ConfigMapLuaSource:
    """:class:`~kruise.traffic.scripts.LuaScriptSource` over one ConfigMap (missing -> no scripts)."""

    def __init__(
        self, kube: KubeClient, namespace: str = DEFAULT_CONFIG_NAMESPACE, name: str = LUA_CONFIGMAP
    ) -> None:
        self.kube = kube
        self.namespace = namespace
        self.name = name

    async def get(self, key: str) -> str | None:
        configmap = await self.kube.get_or_none(CONFIGMAPS, self.name, self.namespace)
        if configmap is None:
            return None
        value = (configmap.get("data") or {}).get(key)
        return str(value) if value else None
