"""Deletion protection webhooks for kinds kruise does not own (namespaces, CRDs, Services,
Ingresses, Deployments, ReplicaSets, StatefulSets) and the shared denial bookkeeping."""
