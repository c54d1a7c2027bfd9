"""UnitedDeployment defaulting (mutating webhook ``muniteddeployment.kb.io``), pure.

Mirrors ``SetDefaultsUnitedDeployment`` (OpenKruise v1.8, ``apis/apps/defaults``):

- ``revisionHistoryLimit: 10`` when unset;
- ``updateStrategy.type: Manual`` when empty, and then ``manualUpdate: {}`` when unset;
- a ``statefulSetTemplate``'s pod template and claim templates get the Kubernetes defaults
  (:func:`~.pod_defaults.default_pod_template`) on CREATE, or on UPDATE when ``spec.template``
  changed, unless gate ``TemplateNoDefaults``; the other template kinds are left as written (their
  own webhooks default the subset workloads);
- when some subset has ``minReplicas``/``maxReplicas`` and none has ``replicas``, every unset
  ``minReplicas`` becomes ``0``.

Not reproduced: what Go's re-marshalling of the whole object adds beside the defaults (empty
structs, ``creationTimestamp: null``); the stored object carries the defaults only.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from kruise.workloads.admission.pod_defaults import default_claim_template, default_pod_template

__all__ = ["default_uniteddeployment"]


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def default_uniteddeployment(
    obj: Mapping[str, Any], *, old: Mapping[str, Any] | None, template_no_defaults: bool = False
) -> dict[str, Any]:
    """The UnitedDeployment as the mutating webhook leaves it; the input is not modified.

    ``old`` is the stored object on UPDATE (``None`` on CREATE). Unchanged input comes back as
    an equal copy (the webhook then answers "allowed" without a patch).
    """
    out = copy.deepcopy(dict(obj))
    spec = dict(_mapping(out.get("spec")))
    out["spec"] = spec
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    strategy = dict(_mapping(spec.get("updateStrategy")))
    if strategy.get("type") in (None, ""):
        strategy["type"] = "Manual"
    if strategy["type"] == "Manual" and strategy.get("manualUpdate") is None:
        strategy["manualUpdate"] = {}
    spec["updateStrategy"] = strategy
    old_template = _mapping(_mapping(old).get("spec")).get("template") if old is not None else None
    inject = not template_no_defaults and (old is None or spec.get("template") != old_template)
    template = _mapping(spec.get("template"))
    workload = template.get("statefulSetTemplate")
    if inject and isinstance(workload, Mapping):
        workload_spec = dict(_mapping(workload.get("spec")))
        workload_spec["template"] = default_pod_template(_mapping(workload_spec.get("template")))
        claims = workload_spec.get("volumeClaimTemplates")
        if isinstance(claims, list):
            workload_spec["volumeClaimTemplates"] = [default_claim_template(c) for c in claims]
        spec["template"] = {**template, "statefulSetTemplate": {**workload, "spec": workload_spec}}
    topology = _mapping(spec.get("topology"))
    subsets = [dict(_mapping(s)) for s in topology.get("subsets") or [] if isinstance(s, Mapping)]
    has_replicas = any(s.get("replicas") is not None for s in subsets)
    has_bounds = any(s.get("minReplicas") is not None or s.get("maxReplicas") is not None for s in subsets)
    if has_bounds and not has_replicas:
        for subset in subsets:
            if subset.get("minReplicas") is None:
                subset["minReplicas"] = 0
        spec["topology"] = {**topology, "subsets": subsets}
    return out
