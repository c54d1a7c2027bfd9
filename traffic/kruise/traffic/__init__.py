"""kruise.traffic: traffic routers (Gateway API, Ingress, Istio, custom Lua providers).

Kruise Rollouts' traffic-routing layer (``KR:pkg/trafficrouting``) as small pieces:

- :mod:`.intent`: ``TrafficIntent`` (what a step wants), ``RouteReport`` and the
  ``TrafficRouter`` Protocol with its convergence contract;
- pure transforms, no I/O: :mod:`.gatewayapi` (HTTPRoute rules), :mod:`.ingress` (the
  ``<ingress>-canary`` object), :mod:`.custom` (Lua-edited objects and their saved original),
  :mod:`.services` (canary Service, selector patches), :mod:`.lua` (the sandboxed runtime),
  :mod:`.scripts` (which script, ConfigMap first, then ``lua_configuration/`` built-ins);
- adapters over ``kruise.core.kube.KubeClient``: :mod:`.gateway_router`, :mod:`.ingress_router`,
  :mod:`.custom_router`, :mod:`.composite`, :mod:`.service_manager`, :mod:`.configmap_source`;
- :mod:`.registry`: ``build_router`` for one ``trafficRoutings[]`` entry.

This module imports nothing, so importing a pure module never loads the I/O stack.
"""
