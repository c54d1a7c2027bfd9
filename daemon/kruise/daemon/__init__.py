"""kruise.daemon: the node daemon (CRI): image pre-pull and container restarts."""
