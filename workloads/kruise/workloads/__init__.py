"""kruise.workloads: CloneSet, Advanced StatefulSet, ... and their admission webhooks."""
