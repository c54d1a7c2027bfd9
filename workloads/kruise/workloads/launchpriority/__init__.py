"""Container launch priority (OpenKruise v1.0): containers of a pod start in a set order."""
