"""API models of the node-side kinds (``apps.kruise.io/v1alpha1``) and their CRD descriptions."""
