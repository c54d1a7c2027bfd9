-- kruise built-in: canary annotations for ingress-nginx (Ingress classType "nginx").
--
-- Same contract as Kruise Rollouts' trafficrouting_ingress/nginx.lua:
--   obj.annotations            annotations of the canary Ingress as they are now
--   obj.weight                 canary percent as a string; "-1" when the step sets no traffic
--   obj.matches                Kruise HttpRouteMatch list (only the first header of each is used)
--   obj.canaryService, obj.stableService, obj.requestHeaderModifier (unused by nginx)
-- Returns the new annotations table.

local NGINX = "nginx.ingress.kubernetes.io/"
local MANAGED = {
  "canary-by-cookie",
  "canary-by-header",
  "canary-by-header-pattern",
  "canary-by-header-value",
  "canary-weight",
}

local result = {}
for key, value in pairs(obj.annotations or {}) do
  result[key] = value
end

-- this Ingress is an nginx canary; forget every routing choice of the previous step
result[NGINX .. "canary"] = "true"
for _, name in ipairs(MANAGED) do
  result[NGINX .. name] = nil
end

if obj.weight ~= nil and obj.weight ~= "-1" then
  result[NGINX .. "canary-weight"] = obj.weight
end

for _, match in ipairs(obj.matches or {}) do
  local first = match.headers and match.headers[1]
  if first ~= nil then
    if first.name == "canary-by-cookie" then
      -- the cookie convention: a header named canary-by-cookie carries the cookie name
      result[NGINX .. "canary-by-cookie"] = first.value
    else
      result[NGINX .. "canary-by-header"] = first.name
      if first.type == "RegularExpression" then
        result[NGINX .. "canary-by-header-pattern"] = first.value
      else
        result[NGINX .. "canary-by-header-value"] = first.value
      end
    end
  end
end

return result
