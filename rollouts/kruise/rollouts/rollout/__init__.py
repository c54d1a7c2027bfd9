"""The Rollout engine: pure planning and state machine, plus the controllers that act on them."""
