"""RolloutHistory (``rollouts.kruise.io/v1alpha1``, feature gate ``RolloutHistory``): a record of
each release that has a rollout-id. ``record`` (pure) says what a history should hold;
``controller`` is the shell."""
