"""Advanced StatefulSet (``apps.kruise.io`` StatefulSet): pure decisions and the controller shell."""
