"""Native ``apps/v1`` Deployments as a release sees them: template revisions, the
``rollouts.kruise.io/deployment-strategy`` annotation, the workload info and the hold."""
