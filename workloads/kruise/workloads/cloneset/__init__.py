"""CloneSet controller: the pure decision core (diffs, ordering, in-place update, revisions, lifecycle)."""
