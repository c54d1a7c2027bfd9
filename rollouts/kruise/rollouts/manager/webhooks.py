"""Which admission webhooks the manager serves, and their handlers."""

from __future__ import annotations

from kruise.core.kube import KubeClient
from kruise.core.webhook import WebhookServer
from kruise.core.webhook.configuration import WebhookSettings, WebhookSpec
from kruise.rollouts.api.conversion import convert_review
from kruise.rollouts.manager.options import ManagerOptions
from kruise.rollouts.rollout.rollout_webhooks import (
    CONVERT_PATH,
    MUTATE_ROLLOUT_PATH,
    VALIDATE_ROLLOUT_PATH,
    RolloutWebhooks,
    rollout_webhook_specs,
)
from kruise.rollouts.workloads.holdwebhook import hold_webhook_specs, hold_webhooks
from kruise.workloads.cloneset.webhooks import (
    MUTATE_PATH,
    VALIDATE_PATH,
    CloneSetWebhooks,
    cloneset_webhook_specs,
)


def webhook_settings(options: ManagerOptions) -> WebhookSettings:
    """Failure policy and timeout from the flags; ``kube-system`` and the manager's namespace
    (that of its Lease, the chart's install namespace) are left out of the workload webhooks."""
    return WebhookSettings(
        failure_policy=options.webhook_failure_policy,
        timeout_seconds=options.webhook_timeout_seconds,
        excluded_namespaces=("kube-system", options.leader_election_namespace),
    )


def webhook_specs(options: ManagerOptions) -> list[WebhookSpec]:
    """Every webhook for the configurations (in registration order)."""
    settings = webhook_settings(options)
    protection = options.feature_gates.get("ResourcesDeletionProtection", False)
    return [
        *cloneset_webhook_specs(settings, deletion_protection=protection),
        *hold_webhook_specs(settings),
        *rollout_webhook_specs(settings),
    ]


def register_webhooks(server: WebhookServer, kube: KubeClient, options: ManagerOptions) -> None:
    gates = options.feature_gates
    cloneset = CloneSetWebhooks(
        kube,
        template_no_defaults=gates.get("TemplateNoDefaults", False),
        deletion_protection=gates.get("ResourcesDeletionProtection", False),
    )
    server.register(MUTATE_PATH, cloneset.mutate)
    server.register(VALIDATE_PATH, cloneset.validate)
    for path, hold in hold_webhooks(kube).items():
        server.register(path, hold)
    rollout = RolloutWebhooks(kube, partition_percent_limit=options.partition_percent_limit)
    server.register(MUTATE_ROLLOUT_PATH, rollout.mutate)
    server.register(VALIDATE_ROLLOUT_PATH, rollout.validate)
    server.register_conversion(CONVERT_PATH, convert_review)
