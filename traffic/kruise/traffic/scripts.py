"""Which Lua script drives an Ingress class or a custom network kind.

Upstream (``KR:pkg/util/configuration/configuration.go``, ``ingress.go``,
``custom_network_provider.go``) looks scripts up in the ``kruise-rollout-configuration``
ConfigMap of the controller's namespace under

- ``lua.traffic.routing.ingress.<classType>`` for ``trafficRoutings[].ingress.classType``
  (default class ``nginx``), and
- ``lua.traffic.routing.<Kind>.<group>`` for ``customNetworkRefs[]``,

and has scripts built into the binary (``lua_configuration/``). We ship our own scripts with
the same contract: ``trafficrouting_ingress/{nginx,mse}.lua`` and
``networking.istio.io/{VirtualService,DestinationRule}/trafficRouting.lua``.

The two lookups differ in precedence, exactly as upstream's:

- an Ingress class: the ConfigMap first, then the built-in script
  (``ingressController.getTrafficRoutingIngressLuaScript``), so a user can replace ``nginx.lua``;
- a custom network kind: the built-in script first, the ConfigMap only for kinds without one
  (``customController.getLuaScript``), so a ConfigMap entry for ``VirtualService`` or
  ``DestinationRule`` is never used. Upstream's own e2e suite installs such a ConfigMap whose
  VirtualService script writes ``queryParams`` in a shape Istio's schema refuses; it passes only
  because the built-in wins.

Where the scripts come from is a small Protocol, :class:`LuaScriptSource`; the ConfigMap reader
is the adapter in :mod:`kruise.traffic.configmap_source`.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from typing import Protocol

from kruise.core.errors import ProviderError
from kruise.traffic.resources import split_api_version

LUA_CONFIGMAP = "kruise-rollout-configuration"
"""Name of upstream's configuration ConfigMap (``configuration.RolloutConfigurationName``)."""
DEFAULT_CONFIG_NAMESPACE = "kruise-rollout"
"""Upstream's controller namespace when ``POD_NAMESPACE`` is unset (``util.GetRolloutNamespace``)."""
INGRESS_KEY_PREFIX = "lua.traffic.routing.ingress"
CUSTOM_KEY_PREFIX = "lua.traffic.routing"
DEFAULT_INGRESS_CLASS = "nginx"

_BUILTIN_ROOT = "lua_configuration"


class LuaScriptSource(Protocol):
    """Where user-provided scripts live: ``get(key)`` is the ConfigMap ``data[key]`` or None."""

    async def get(self, key: str) -> str | None: ...


class StaticLuaSource:
    """Scripts from a mapping (tests, or a manager that already holds the ConfigMap data)."""

    def __init__(self, data: Mapping[str, str] | None = None) -> None:
        self._data = dict(data or {})

    async def get(self, key: str) -> str | None:
        return self._data.get(key)


def ingress_script_key(class_type: str) -> str:
    """``lua.traffic.routing.ingress.<classType>`` (``LuaTrafficRoutingIngressTypePrefix``)."""
    return f"{INGRESS_KEY_PREFIX}.{class_type or DEFAULT_INGRESS_CLASS}"


def custom_script_key(api_version: str, kind: str) -> str:
    """``lua.traffic.routing.<Kind>.<group>`` (``LuaTrafficRoutingCustomTypePrefix``)."""
    group, _ = split_api_version(api_version)
    return f"{CUSTOM_KEY_PREFIX}.{kind}.{group}"


def _builtin(*parts: str) -> str | None:
    node = resources.files("kruise.traffic").joinpath(_BUILTIN_ROOT)
    for part in parts:
        node = node.joinpath(part)
    return node.read_text(encoding="utf-8") if node.is_file() else None


def builtin_ingress_script(class_type: str) -> str | None:
    """Our built-in script for an Ingress class (``nginx`` and ``mse`` ship; upstream also has
    ``aliyun-alb`` and ``higress``, which users can paste into the ConfigMap)."""
    name = class_type or DEFAULT_INGRESS_CLASS
    if "/" in name or name.startswith("."):
        return None
    return _builtin("trafficrouting_ingress", f"{name}.lua")


def builtin_custom_script(api_version: str, kind: str) -> str | None:
    """Our built-in script for ``<group>/<Kind>`` (Istio VirtualService and DestinationRule)."""
    group, _ = split_api_version(api_version)
    if not group or "/" in kind or kind.startswith(".") or group.startswith("."):
        return None
    return _builtin(group, kind, "trafficRouting.lua")


async def ingress_script(source: LuaScriptSource, class_type: str) -> str:
    """The script for an Ingress ``classType``: ConfigMap first, then built-in.

    Raises ProviderError ``"<classType> lua script is not found"`` as upstream does.
    """
    class_type = class_type or DEFAULT_INGRESS_CLASS
    script = await source.get(ingress_script_key(class_type))
    if script:
        return script
    script = builtin_ingress_script(class_type)
    if script is None:
        raise ProviderError(f"{class_type} lua script is not found")
    return script


async def custom_script(source: LuaScriptSource, api_version: str, kind: str) -> str:
    """The script for a custom network reference: built-in first, then the ConfigMap.

    Upstream rule (``KR:pkg/trafficrouting/network/customNetworkProvider/custom_network_provider.go``
    ``getLuaScript``): the local ``lua_configuration/<group>/<Kind>/trafficRouting.lua`` wins; only
    when there is none is ``lua.traffic.routing.<Kind>.<group>`` read from the ConfigMap.
    Raises ProviderError "expected script not found neither locally nor in ConfigMap" (upstream's
    message) when neither has one.
    """
    script = builtin_custom_script(api_version, kind)
    if script is not None:
        return script
    script = await source.get(custom_script_key(api_version, kind))
    if script:
        return script
    raise ProviderError("expected script not found neither locally nor in ConfigMap")
