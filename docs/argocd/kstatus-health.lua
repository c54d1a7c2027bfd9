-- Argo CD health check for kruise's CloneSet and Rollout (and any kind carrying kstatus conditions):
-- reads the Ready / Reconciling / Stalled conditions kruise writes (docs/gitops.md).
-- argocd-cm: resource.customizations.health.rollouts.kruise.io_Rollout and
--            resource.customizations.health.apps.kruise.io_CloneSet
hs = { status = "Progressing", message = "Waiting for the controller to observe the change" }
if obj.status == nil or obj.status.conditions == nil then
  return hs
end
if obj.status.observedGeneration ~= nil and obj.metadata.generation ~= obj.status.observedGeneration then
  return hs
end
local ready = nil
for _, c in ipairs(obj.status.conditions) do
  if c.type == "Stalled" and c.status == "True" then
    hs.status = "Degraded"
    hs.message = c.message
    return hs
  end
  if c.type == "Ready" then
    ready = c
  end
end
if ready == nil then
  return hs
end
hs.message = ready.message
if ready.status == "True" then
  hs.status = "Healthy"
elseif ready.reason == "AwaitingApproval" or ready.reason == "Paused" or ready.reason == "UpdatePaused"
    or ready.reason == "Partitioned" then
  hs.status = "Suspended"
end
return hs
