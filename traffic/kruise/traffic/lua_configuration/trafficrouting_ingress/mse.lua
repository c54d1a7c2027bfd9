-- kruise built-in: canary annotations for Alibaba Cloud MSE Ingress (Ingress classType "mse").
--
-- Same contract as nginx.lua (obj.annotations, obj.weight ("-1": no weight), obj.matches,
-- obj.requestHeaderModifier); MSE reads the nginx canary annotations and adds its own:
--   mse.ingress.kubernetes.io/canary-by-query[-value|-pattern]   first query param of a match
--   mse.ingress.kubernetes.io/request-header-control-update      "name value" per line, from
--                                                                requestHeaderModifier.set
--   mse.ingress.kubernetes.io/service-subset                     "gray" when the Ingress has one
-- Returns the new annotations table.

local NGINX = "nginx.ingress.kubernetes.io/"
local MSE = "mse.ingress.kubernetes.io/"
local CLEARED = {
  NGINX .. "canary-by-cookie",
  NGINX .. "canary-by-header",
  NGINX .. "canary-by-header-pattern",
  NGINX .. "canary-by-header-value",
  NGINX .. "canary-weight",
  MSE .. "canary-by-query",
  MSE .. "canary-by-query-pattern",
  MSE .. "canary-by-query-value",
  MSE .. "request-header-control-update",
}

local result = {}
for key, value in pairs(obj.annotations or {}) do
  result[key] = value
end
result[NGINX .. "canary"] = "true"
for _, key in ipairs(CLEARED) do
  result[key] = nil
end

if obj.weight ~= nil and obj.weight ~= "-1" then
  result[NGINX .. "canary-weight"] = obj.weight
end
if result[MSE .. "service-subset"] ~= nil then
  result[MSE .. "service-subset"] = "gray"
end

local modifier = obj.requestHeaderModifier
if modifier ~= nil and modifier.set ~= nil then
  local lines = {}
  for _, header in ipairs(modifier.set) do
    table.insert(lines, header.name .. " " .. header.value)
  end
  if #lines > 0 then
    result[MSE .. "request-header-control-update"] = table.concat(lines, "\n")
  end
end

local function put(prefix, first)
  result[prefix] = first.name
  if first.type == "RegularExpression" then
    result[prefix .. "-pattern"] = first.value
  else
    result[prefix .. "-value"] = first.value
  end
end

for _, match in ipairs(obj.matches or {}) do
  local header = match.headers and match.headers[1]
  if header ~= nil then
    if header.name == "canary-by-cookie" then
      result[NGINX .. "canary-by-cookie"] = header.value
    else
      put(NGINX .. "canary-by-header", header)
    end
  end
  local query = match.queryParams and match.queryParams[1]
  if query ~= nil then
    put(MSE .. "canary-by-query", query)
  end
end

return result
