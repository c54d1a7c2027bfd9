"""Mutating/ValidatingWebhookConfiguration objects for the webhooks we serve.

Like kruise-manager (``pkg/webhook/util/configuration``), the manager owns two
configurations, ``kruise-mutating-webhook-configuration`` and
``kruise-validating-webhook-configuration``, and writes its CA bundle into them
at start. The client config is a URL when the manager runs outside the cluster
(tests, the demo) or a Service reference when it runs in it (the Helm chart).

**A webhook sees only what it must.** With ``failurePolicy: Fail`` every request a webhook
matches waits for the manager, and is refused while it is down. So each webhook narrows what
the API server sends it: ``objectSelector`` (the workload hold webhooks only see workloads a
Rollout labelled ``rollouts.kruise.io/workload-type``, as Kruise Rollouts' chart),
``namespaceSelector`` (:func:`excluded_namespaces_selector`: ``kube-system`` and the manager's
own namespace) and CEL ``matchConditions`` (:func:`operation_or_changed`: an UPDATE that leaves
the fields a webhook judges untouched, such as a label or a finalizer, is not sent).
``timeoutSeconds`` bounds the wait when the manager hangs (``--webhook-timeout-seconds``).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from kruise.core.errors import ConflictError, NotFoundError
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import CRDS, MUTATING_WEBHOOKS, VALIDATING_WEBHOOKS, Resource
from kruise.core.webhook.conditions import MatchCondition as MatchCondition
from kruise.core.webhook.conditions import entry_changed as entry_changed
from kruise.core.webhook.conditions import field_changed as field_changed
from kruise.core.webhook.conditions import operation_or as operation_or
from kruise.core.webhook.conditions import operation_or_changed as operation_or_changed

JSON = dict[str, Any]
MUTATING_NAME = "kruise-mutating-webhook-configuration"
VALIDATING_NAME = "kruise-validating-webhook-configuration"


@dataclass(frozen=True)
class Rule:
    """One admission rule: group, version, plural (``pods/status`` style allowed), operations."""

    group: str
    version: str
    resource: str
    operations: tuple[str, ...] = ("CREATE", "UPDATE")

    def to_dict(self) -> JSON:
        return {
            "apiGroups": [self.group],
            "apiVersions": [self.version],
            "resources": [self.resource],
            "operations": list(self.operations),
        }


DEFAULT_TIMEOUT_SECONDS = 30
"""Webhooks' ``timeoutSeconds`` unless configured (kruise chart: ``webhookConfiguration.timeoutSeconds``)."""
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
"""The label the API server puts on every Namespace, its own name."""


@dataclass(frozen=True)
class WebhookSettings:
    """What every webhook of one manager shares: failure policy, timeout, namespaces left out.

    ``excluded_namespaces`` is what :func:`excluded_namespaces_selector` keeps out of the
    webhooks that watch objects the manager does not own (native Deployments, and CloneSets
    only as Rollout workloads): ``kube-system`` and the manager's own namespace.
    ``pod_failure_policy`` is the mutating pod webhook's own (upstream's chart value
    ``webhookConfiguration.failurePolicy.pods``); ``None`` means ``failure_policy``.
    """

    failure_policy: str = "Fail"
    timeout_seconds: int = DEFAULT_TIMEOUT_SECONDS
    excluded_namespaces: tuple[str, ...] = ("kube-system",)
    pod_failure_policy: str | None = None

    @property
    def pods_failure_policy(self) -> str:
        """``failurePolicy`` of the mutating pod webhook (``mpod.kb.io``)."""
        return self.pod_failure_policy or self.failure_policy


@dataclass(frozen=True)
class WebhookSpec:
    """One webhook: its name (``mcloneset.kb.io``), served path, kind, rules and scope."""

    name: str
    path: str
    mutating: bool
    rules: tuple[Rule, ...]
    failure_policy: str = "Fail"
    object_selector: JSON | None = None
    namespace_selector: JSON | None = field(default=None)
    timeout_seconds: int = DEFAULT_TIMEOUT_SECONDS
    match_conditions: tuple[MatchCondition, ...] = ()


def excluded_namespaces_selector(namespaces: tuple[str, ...]) -> JSON:
    """A ``namespaceSelector`` matching every namespace except ``namespaces`` (by name label)."""
    return {
        "matchExpressions": [
            {"key": NAMESPACE_NAME_LABEL, "operator": "NotIn", "values": sorted(set(namespaces))}
        ]
    }


@dataclass(frozen=True)
class ClientTarget:
    """Where the API server reaches us: ``url_base`` (https://host:port) or a Service."""

    url_base: str | None = None
    service_namespace: str | None = None
    service_name: str | None = None
    service_port: int = 443

    def client_config(self, path: str, ca_bundle: str) -> JSON:
        cfg: JSON = {"caBundle": ca_bundle}
        if self.url_base:
            cfg["url"] = f"{self.url_base.rstrip('/')}{path}"
        else:
            cfg["service"] = {
                "namespace": self.service_namespace,
                "name": self.service_name,
                "path": path,
                "port": self.service_port,
            }
        return cfg


def build_configuration(
    specs: list[WebhookSpec], *, mutating: bool, target: ClientTarget, ca_bundle: str
) -> JSON:
    """The webhook configuration object (data) for the mutating or validating ``specs``."""
    webhooks = []
    for spec in specs:
        if spec.mutating != mutating:
            continue
        hook: JSON = {
            "name": spec.name,
            "clientConfig": target.client_config(spec.path, ca_bundle),
            "rules": [r.to_dict() for r in spec.rules],
            "failurePolicy": spec.failure_policy,
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
            "timeoutSeconds": spec.timeout_seconds,
        }
        if spec.object_selector is not None:
            hook["objectSelector"] = spec.object_selector
        if spec.namespace_selector is not None:
            hook["namespaceSelector"] = spec.namespace_selector
        if spec.match_conditions:
            hook["matchConditions"] = [c.to_dict() for c in spec.match_conditions]
        if mutating:
            hook["reinvocationPolicy"] = "Never"
        webhooks.append(hook)
    kind = "MutatingWebhookConfiguration" if mutating else "ValidatingWebhookConfiguration"
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {
            "name": MUTATING_NAME if mutating else VALIDATING_NAME,
            "labels": {"app.kubernetes.io/managed-by": "kruise-manager"},
        },
        "webhooks": webhooks,
    }


async def ensure_configurations(
    kube: KubeClient, specs: list[WebhookSpec], *, target: ClientTarget, ca_bundle: str
) -> None:
    """Create or update both configurations so the API server calls ``specs`` with our CA."""
    for mutating, res in ((True, MUTATING_WEBHOOKS), (False, VALIDATING_WEBHOOKS)):
        desired = build_configuration(specs, mutating=mutating, target=target, ca_bundle=ca_bundle)
        try:
            current = await kube.get(res, desired["metadata"]["name"])
        except NotFoundError:
            await kube.create(res, desired)
            continue
        desired["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
        await kube.replace(res, desired)


async def delete_configurations(kube: KubeClient) -> None:
    """Remove both configurations (so a stopped test manager cannot block the API server)."""
    await kube.delete(MUTATING_WEBHOOKS, MUTATING_NAME, missing_ok=True)
    await kube.delete(VALIDATING_WEBHOOKS, VALIDATING_NAME, missing_ok=True)


async def ensure_crd_conversion(
    kube: KubeClient, crd_names: list[str], *, target: ClientTarget, path: str, ca_bundle: str
) -> None:
    """Point multi-version CRDs at our conversion webhook (as kruise-manager does at start)."""
    for name in crd_names:
        try:
            crd = await kube.get(CRDS, name)
        except NotFoundError:
            continue
        conversion = {
            "strategy": "Webhook",
            "webhook": {
                "clientConfig": target.client_config(path, ca_bundle),
                "conversionReviewVersions": ["v1"],
            },
        }
        if crd["spec"].get("conversion") == conversion:
            continue
        await kube.patch(CRDS, name, {"spec": {"conversion": conversion}}, patch_type="merge")


def configuration_of(mutating: bool) -> tuple[Resource, str]:
    """Our mutating (``True``) or validating configuration: its resource and name."""
    return (MUTATING_WEBHOOKS, MUTATING_NAME) if mutating else (VALIDATING_WEBHOOKS, VALIDATING_NAME)


def conditions_differ(
    config: JSON | None, webhook: str, conditions: tuple[MatchCondition, ...]
) -> bool | None:
    """Whether ``webhook``'s ``matchConditions`` in ``config`` (a configuration object, e.g. the
    informer's copy) differ from ``conditions``; ``None`` when ``config`` is ``None`` or has no
    such webhook (nothing to write). An absent list equals no conditions."""
    entry = next((h for h in (config or {}).get("webhooks") or [] if h.get("name") == webhook), None)
    if config is None or entry is None:
        return None
    return (entry.get("matchConditions") or []) != [c.to_dict() for c in conditions]


async def set_match_conditions(
    kube: KubeClient,
    webhook: str,
    conditions: tuple[MatchCondition, ...],
    *,
    mutating: bool = True,
    attempts: int = 5,
    current: JSON | None = None,
) -> bool | None:
    """Make ``webhook``'s ``matchConditions`` in our configuration equal ``conditions``.

    Returns True when written, False when already so, ``None`` when the configuration or the
    webhook does not exist (a manager with the webhook's gate off). The configuration is replaced
    with the resourceVersion read, again on conflict. ``current``: a copy of the configuration
    already at hand (the informer's; not modified) used by the first attempt instead of a GET, so
    a configuration that is already right costs no request; a stale copy fails the replace with a
    conflict and the next attempt reads the live one.

    Raises:
        ConflictError: still conflicting after ``attempts`` tries.
    """
    res, config = configuration_of(mutating)
    wanted = [c.to_dict() for c in conditions]
    for attempt in range(attempts):
        if attempt == 0 and current is not None:
            live: JSON | None = copy.deepcopy(current)
        else:
            live = await kube.get_or_none(res, config)
        differ = conditions_differ(live, webhook, conditions)
        if live is None or differ is None:
            return None
        if not differ:
            return False
        entry = next(h for h in live["webhooks"] if h.get("name") == webhook)
        if wanted:
            entry["matchConditions"] = wanted
        else:
            entry.pop("matchConditions", None)
        try:
            await kube.replace(res, live)
            return True
        except ConflictError:
            if attempt == attempts - 1:
                raise
    return False
