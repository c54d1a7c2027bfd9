-- kruise built-in: Istio VirtualService traffic routing (customNetworkRefs, networking.istio.io).
--
-- Same contract as Kruise Rollouts' custom network provider scripts:
--   obj.data                   {spec, labels, annotations} of the object before the rollout
--   obj.canaryWeight           canary percent; -1 when the step sets only matches
--   obj.stableWeight           100 - canaryWeight
--   obj.matches                Kruise HttpRouteMatch list (OR'ed); take precedence over weights
--   obj.canaryService, obj.stableService, obj.requestHeaderModifier
--   obj.canaryName             optional DestinationRule subset used when both services are one
-- Returns obj.data with the new spec.
--
-- Weights: every http/tcp/tls rule WITHOUT match conditions that routes to the stable service
-- keeps its routes, scaled to stableWeight (rounding leftovers go to its first route so the
-- rule still sums to 100), and gains a canary route with canaryWeight.
-- Matches: one rule per match, put in front of spec.http (the last match ends up first), that
-- sends the matched requests to the canary, with the header modifier if one is given.

local data = obj.data
local spec = data.spec
local stableService = obj.stableService
local canaryService = obj.canaryService
local canarySubset = obj.canaryName
if canarySubset == nil or canarySubset == "" then
  canarySubset = "canary"
end

local canaryWeight = obj.canaryWeight
local stableWeight = obj.stableWeight
if canaryWeight == -1 then
  canaryWeight = 100
  stableWeight = 0
end

-- "reviews.default.svc.cluster.local" and "reviews" name the same service
local function shortName(host)
  if host == nil then
    return nil
  end
  local dot = string.find(host, ".", 1, true)
  if dot ~= nil then
    return string.sub(host, 1, dot - 1)
  end
  return host
end

local function canaryDestination()
  if stableService == canaryService then
    return { host = stableService, subset = canarySubset }
  end
  return { host = canaryService }
end

local function sendsToStable(rule)
  for _, route in ipairs(rule.route or {}) do
    if route.destination ~= nil and shortName(route.destination.host) == stableService then
      return true
    end
  end
  return false
end

local function splitRules(rules)
  for _, rule in ipairs(rules or {}) do
    if rule.match == nil and sendsToStable(rule) then
      local count = #rule.route
      local given = 0
      for _, route in ipairs(rule.route) do
        local weight
        if route.weight ~= nil then
          weight = math.floor(route.weight * stableWeight / 100)
        else
          weight = math.floor(stableWeight / count)
        end
        route.weight = weight
        given = given + weight
      end
      rule.route[1].weight = rule.route[1].weight + (stableWeight - given)
      table.insert(rule.route, { destination = canaryDestination(), weight = canaryWeight })
    end
  end
end

local PATH_TYPES = { Exact = "exact", PathPrefix = "prefix", RegularExpression = "regex" }
local VALUE_TYPES = { Exact = "exact", Prefix = "prefix", RegularExpression = "regex" }

local function stringMatch(types, rule, default)
  local kind = types[rule.type or ""] or default
  return { [kind] = rule.value }
end

local function namedMatches(list)
  local out = nil
  for _, rule in ipairs(list or {}) do
    out = out or {}
    out[rule.name] = stringMatch(VALUE_TYPES, rule, "exact")
  end
  return out
end

local function istioMatch(match)
  local out = {}
  if match.path ~= nil then
    out.uri = stringMatch(PATH_TYPES, match.path, "prefix")
  end
  out.headers = namedMatches(match.headers)
  out.queryParams = namedMatches(match.queryParams)
  return out
end

local function headerOperations(modifier)
  if modifier == nil then
    return nil
  end
  local request = {}
  local any = false
  for _, action in ipairs({ "set", "add" }) do
    if modifier[action] ~= nil and #modifier[action] > 0 then
      request[action] = {}
      for _, header in ipairs(modifier[action]) do
        request[action][header.name] = header.value
      end
      any = true
    end
  end
  if modifier.remove ~= nil and #modifier.remove > 0 then
    request.remove = {}
    for _, name in ipairs(modifier.remove) do
      table.insert(request.remove, name)
    end
    any = true
  end
  if not any then
    return nil
  end
  return { request = request }
end

local function addMatchRules(matches)
  if spec.http == nil then
    spec.http = {}
  end
  for _, match in ipairs(matches) do
    local rule = {
      match = { istioMatch(match) },
      route = { { destination = canaryDestination() } },
    }
    rule.headers = headerOperations(obj.requestHeaderModifier)
    table.insert(spec.http, 1, rule)
  end
end

if obj.matches ~= nil and #obj.matches > 0 then
  addMatchRules(obj.matches)
else
  splitRules(spec.http)
  splitRules(spec.tcp)
  splitRules(spec.tls)
end
return data
