"""PodUnavailableBudget (``policy.kruise.io/v1alpha1``): budget arithmetic, validation, controller
and webhooks."""
