"""ContainerRecreateRequest on the manager's side: its admission webhooks and its controller."""
