"""PersistentPodState: remembers where each StatefulSet pod ran (node topology labels, chosen pod
annotations) and steers the re-created pod back there through the pod webhook."""
