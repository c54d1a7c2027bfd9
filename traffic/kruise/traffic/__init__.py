"""kruise.traffic: traffic routers (Gateway API, Ingress, Istio, custom Lua providers)."""
