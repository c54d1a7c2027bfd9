-- kruise built-in: Istio DestinationRule subsets (customNetworkRefs, networking.istio.io).
--
-- Same contract as Kruise Rollouts' custom network provider scripts (obj.data is
-- {spec, labels, annotations} before the rollout). Returns obj.data with the canary subset.
--
-- Default, as Kruise Rollouts' built-in script: a subset named "canary" selecting the pod label
-- istio.service.tag=gray is appended (users put that label on canary pods, e.g. through the
-- Rollout's patchPodTemplateMetadata); the VirtualService script routes to subset "canary" when
-- the stable and canary services are the same.
--
-- kruise extension, only when the trafficRoutings[] entry sets additionalParams
-- istio.destinationRule.stableSubsetName and/or istio.destinationRule.canarySubsetName
-- (handed to this script as obj.stableName / obj.canaryName): the subsets select the versions by
-- the revision label instead, using
--   obj.revisionLabelKey       pod label telling versions apart (pod-template-hash, ...)
--   obj.stableRevision, obj.canaryRevision
-- the named stable subset gets the stable revision label, the canary subset (obj.canaryName,
-- "canary" by default) the canary one; an existing subset of that name is updated in place.

local data = obj.data
local spec = data.spec
if spec.subsets == nil then
  spec.subsets = {}
end

local named = (obj.stableName ~= nil and obj.stableName ~= "") or (obj.canaryName ~= nil and obj.canaryName ~= "")

if not named then
  table.insert(spec.subsets, { name = "canary", labels = { ["istio.service.tag"] = "gray" } })
  return data
end

local function revisionLabels(revision)
  local labels = {}
  if obj.revisionLabelKey ~= nil and obj.revisionLabelKey ~= "" and revision ~= nil and revision ~= "" then
    labels[obj.revisionLabelKey] = revision
  end
  return labels
end

local function upsertSubset(name, labels)
  for _, subset in ipairs(spec.subsets) do
    if subset.name == name then
      if next(labels) ~= nil then
        subset.labels = subset.labels or {}
        for key, value in pairs(labels) do
          subset.labels[key] = value
        end
      end
      return
    end
  end
  local subset = { name = name }
  if next(labels) ~= nil then
    subset.labels = labels
  end
  table.insert(spec.subsets, subset)
end

if obj.stableName ~= nil and obj.stableName ~= "" then
  upsertSubset(obj.stableName, revisionLabels(obj.stableRevision))
end

local canaryName = obj.canaryName
if canaryName == nil or canaryName == "" then
  canaryName = "canary"
end
upsertSubset(canaryName, revisionLabels(obj.canaryRevision))

return data
