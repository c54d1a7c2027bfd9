"""UnitedDeployment: one workload per topology subset, replicas spread by an allocator.

:mod:`.allocator` holds upstream's replica allocators as arithmetic; :mod:`.allocation` is the
pure core a reconcile calls (schedulability of subsets under the Adaptive strategy, then the
allocation).
"""
