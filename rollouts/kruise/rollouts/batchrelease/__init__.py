"""BatchRelease: the per-step executor that moves a workload's partition (Kruise Rollouts' split)."""
