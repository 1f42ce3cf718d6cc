"""cluster-autoscaler's scale-up and scale-down asked as the tests ask them: a request with upstream's
defaults (``scaleDownUnneededTime`` and ``scaleDownDelayAfterAdd`` 10 minutes, no scale-up for a long
time, nothing unneeded, deleting or budgeted, the least-waste expander) and the default scheduler
profile, each test naming only what it checks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gpufleet.autoscaling.cluster_autoscaler import (
    Candidate,
    ScaleDownReply,
    ScaleDownRequest,
    ScaleUpReply,
    ScaleUpRequest,
    scale_down,
    scale_up,
)
from gpufleet.autoscaling.scale_down import UtilizationRule
from gpufleet.autoscaling.scale_up import PoolOption
from gpufleet.cluster.state import ClusterState
from gpufleet.model.pod import Pod
from gpufleet.model.scheduler_config import ProfileConfig
from gpufleet.scheduling.profile import build_profile

PROFILE = build_profile(ProfileConfig())


def scale_down_request(
    state: ClusterState, candidates: Sequence[Candidate], **fields: Any
) -> ScaleDownRequest:
    """The request to scale down ``candidates`` on ``state``, ``fields`` over the defaults."""
    request: dict[str, Any] = dict(
        now=0.0, state=state, profile=PROFILE, candidates=candidates, utilization=UtilizationRule(),
        unneeded_time_s=600.0, delay_after_add_s=600.0, last_scale_up_s=-1e9, unneeded_since={},
        deleting=frozenset(), budgets=[], allowed={}, daemon_pods=frozenset(), computing=None,
    )  # fmt: skip
    request.update(fields)
    return ScaleDownRequest(**request)


def scale_down_with(state: ClusterState, candidates: Sequence[Candidate], **fields: Any) -> ScaleDownReply:
    """``scale_down`` of ``candidates`` on ``state``, ``fields`` over the defaults."""
    return scale_down(scale_down_request(state, candidates, **fields))


def scale_up_with(
    state: ClusterState, pending: Sequence[Pod], options: Sequence[PoolOption], **fields: Any
) -> ScaleUpReply:
    """``scale_up`` for ``pending`` over ``options`` on ``state``, ``fields`` over the defaults."""
    request: dict[str, Any] = dict(
        now=0.0, state=state, profile=PROFILE, pending=pending, options=options, backed_off=frozenset(),
        expander="least-waste", rng=np.random.default_rng(0), exclude=frozenset(), total_reached=False,
    )  # fmt: skip
    request.update(fields)
    return scale_up(ScaleUpRequest(**request))
