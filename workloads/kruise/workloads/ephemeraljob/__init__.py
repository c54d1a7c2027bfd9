"""EphemeralJob (``apps.kruise.io/v1alpha1``, ``ejob``): ephemeral containers injected into the
pods a selector picks, their outcome counted from the pods' ``ephemeralContainerStatuses``."""
