-- kruise built-in: Istio DestinationRule subsets (customNetworkRefs, networking.istio.io).
--
-- Same contract as Kruise Rollouts' custom network provider scripts (obj.data is
-- {spec, labels, annotations} before the rollout), plus the revision facts upstream hands to
-- this script:
--   obj.revisionLabelKey       pod label telling versions apart (pod-template-hash, ...)
--   obj.stableRevision, obj.canaryRevision
--   obj.stableName             optional stable subset name (additionalParams
--                              istio.destinationRule.stableSubsetName); left alone when unset
--   obj.canaryName             canary subset name (istio.destinationRule.canarySubsetName),
--                              "canary" by default: the subset the VirtualService script uses
-- Returns obj.data with the subsets added or updated (the first subset of a name wins).

local data = obj.data
local spec = data.spec
if spec.subsets == nil then
  spec.subsets = {}
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
