"""kruise.rollouts: Rollout and BatchRelease, the manager composition and the CLI."""
