"""The Rollout validating webhook's decision for either API version, as one pure function.

Mirrors ``RolloutCreateUpdateHandler.Handle``: the request's version selects the rule set
(:mod:`.rollout` for v1beta1, :mod:`.rollout_v1alpha1` for v1alpha1); spec errors and the
conflict check come first, and only an update that passes them is checked for immutability.
"""

from __future__ import annotations

from collections.abc import Iterable

from kruise.rollouts.admission.rollout import (
    DEFAULT_PARTITION_PERCENT_LIMIT,
    RolloutLike,
    conflict_errors,
    parse_rollout,
    update_errors,
    validate_rollout_spec,
)
from kruise.rollouts.admission.rollout_v1alpha1 import validate_v1alpha1
from kruise.rollouts.api.conversion import rollout_to_v1alpha1, rollout_to_v1beta1
from kruise.rollouts.api.rollout import Rollout
from kruise.rollouts.api.rollout_v1alpha1 import RolloutV1alpha1
from kruise.workloads.admission.fielderrors import FieldError

__all__ = ["validate_rollout"]


def _beta(obj: Rollout | RolloutV1alpha1) -> Rollout:
    return obj if isinstance(obj, Rollout) else rollout_to_v1beta1(obj)


def _alpha(obj: Rollout | RolloutV1alpha1) -> RolloutV1alpha1:
    return obj if isinstance(obj, RolloutV1alpha1) else rollout_to_v1alpha1(obj)


def validate_rollout(
    obj: RolloutLike,
    old: RolloutLike | None = None,
    *,
    partition_percent_limit: int = DEFAULT_PARTITION_PERCENT_LIMIT,
    workload_lookup: Iterable[RolloutLike],
    latest: RolloutLike | None = None,
    filter_workload_type: bool = True,
) -> list[FieldError]:
    """Validate a Rollout create (``old is None``) or update, as Kruise Rollouts' webhook does.

    Args:
        obj: the new Rollout, v1alpha1 or v1beta1 (model or wire dict); its version selects
            the rule set.
        old: the previous object on update (a model of the other version is converted).
        partition_percent_limit: ``--partition-percent-limit`` (default 50): the largest
            percentage ``replicas`` a partition-style step with traffic or matches may have.
        workload_lookup: the Rollouts of ``obj``'s namespace (any version, models or dicts),
            in list order, for the one-Rollout-per-workload conflict check.
        latest: the stored Rollout whose ``status.phase`` gates the immutability rules
            (upstream re-reads it from its cache); defaults to ``old``.
        filter_workload_type: ``--filter-workload-type``; ``False`` admits any workload kind.

    Returns:
        Field errors with upstream's paths and messages; empty means admitted. The webhook
        denies with code 422 and ``aggregate(errors)`` as the message.
    """
    new = parse_rollout(obj)
    previous = None if old is None else parse_rollout(old)
    stored = None if latest is None else parse_rollout(latest)
    if isinstance(new, RolloutV1alpha1):
        return validate_v1alpha1(
            new,
            None if previous is None else _alpha(previous),
            partition_percent_limit=partition_percent_limit,
            workload_lookup=workload_lookup,
            latest=None if stored is None else _alpha(stored),
            filter_workload_type=filter_workload_type,
        )
    errors = validate_rollout_spec(
        new, partition_percent_limit=partition_percent_limit, filter_workload_type=filter_workload_type
    )
    errors += conflict_errors(new, workload_lookup)
    if errors or previous is None:
        return errors
    gate = _beta(previous if stored is None else stored)
    phase = gate.status.phase if gate.status is not None else None
    return update_errors(_beta(previous), new, phase)
