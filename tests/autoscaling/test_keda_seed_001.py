"""Acceptance: seed 001's ScaledObject (T4 training workers fed by the redis list ``train:jobs``).

The seed configures KEDA to scale ``train-worker`` 0..4 on ``train:jobs`` with ``listLength: "1"``
and ``cooldownPeriod: 300``, then checks: submit 3 jobs, replicas rise to 3 (at most 4); once
the work is consumed, the Deployment returns to 0. Because workers pop an item when they start
working, the list empties long before the work ends, and KEDA (which sees only the list) scales
the Deployment to zero ``cooldownPeriod`` after the last active poll, with the workers still
busy -- the seed's first pitfall (save a checkpoint before scale-in).

Upstream rules: ``scale_scaledobjects.go`` (``scaleFromZeroOrIdle`` to 1, ``scaleToZeroOrIdle``
after ``lastActiveTime + cooldownPeriod``), the HPA's External ``AverageValue`` proposal
``ceil(LLEN / listLength)`` (``replica_calculator.go``, via ``gpufleet.autoscaling.hpa_replicas``),
clamped to ``[max(min, 1), max]``.
"""

from __future__ import annotations

import yaml

from gpufleet.autoscaling.hpa_replicas import ReplicaCalculator
from gpufleet.autoscaling.keda import KedaReason, ScaledObjectState, hpa_inputs, to_milli
from gpufleet.model.keda import ScaledObjectSpec, scaled_object_from_manifest

SEED_001_YAML = """
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: gpu-train-scaler
  namespace: ai-train
spec:
  scaleTargetRef:
    name: train-worker
  minReplicaCount: 0
  maxReplicaCount: 4
  cooldownPeriod: 300
  triggers:
  - type: redis
    metadata:
      address: redis.ai-train.svc:6379
      listName: train:jobs
      listLength: "1"
"""


def seed_spec() -> ScaledObjectSpec:
    return scaled_object_from_manifest(yaml.safe_load(SEED_001_YAML))


def hpa_replicas(list_length: int, status_replicas: int) -> int:
    """What the HPA asks for: its External AverageValue proposal, clamped to [minReplicas, maxReplicas]."""
    inputs = hpa_inputs(seed_spec())
    metric = inputs.metrics[0]
    proposal = ReplicaCalculator().get_external_per_pod_metric_replicas(
        status_replicas, metric.target_milli, metric.name, [to_milli(list_length)]
    )
    return min(max(proposal.replicas, inputs.min_replicas), inputs.max_replicas)


def test_seed_001_hpa_is_one_metric_on_train_jobs_between_1_and_4() -> None:
    inputs = hpa_inputs(seed_spec())
    assert inputs.name == "keda-hpa-gpu-train-scaler"
    assert inputs.scale_target_ref.name == "train-worker"
    assert (inputs.min_replicas, inputs.max_replicas) == (1, 4)
    assert [(m.name, m.target_type, m.target) for m in inputs.metrics] == [
        ("s0-redis-train-jobs", "AverageValue", 1.0)
    ]


def test_seed_001_three_items_give_three_replicas_and_more_than_four_are_capped() -> None:
    assert hpa_replicas(list_length=3, status_replicas=1) == 3
    assert hpa_replicas(list_length=7, status_replicas=3) == 4


def test_seed_001_scales_to_zero_cooldown_after_the_list_empties_while_workers_still_work() -> None:
    state = ScaledObjectState(seed_spec(), created_at=0.0)
    replicas = 0
    # (time, LLEN train:jobs). 3 jobs pushed at t=20; the 3 workers start working (and pop their
    # items) at t=75 after their GPU nodes come up; each item takes 2 h, so all still work at t=360.
    timeline = [(0, 0), (30, 3), (60, 3)] + [(t, 0) for t in range(90, 391, 30)]
    log = []
    for now, llen in timeline:
        decision = state.poll(float(now), [llen], replicas)
        if decision.scale_to is not None:
            replicas = decision.scale_to
        if decision.hpa_enabled and decision.reason == KedaReason.ACTIVATED:
            replicas = hpa_replicas(llen, replicas)  # the HPA's next sync after activation
        log.append((now, decision.reason, replicas))

    assert log[:3] == [
        (0, KedaReason.NOT_ACTIVE, 0),
        (30, KedaReason.ACTIVATED, 3),  # KEDA 0 -> 1, then the HPA 1 -> ceil(3 / 1) = 3
        (60, KedaReason.ACTIVE, 3),  # last active poll
    ]
    assert [(now, reason) for now, reason, _ in log[3:12]] == [
        (t, KedaReason.COOLDOWN) for t in range(90, 331, 30)
    ]
    assert log[12] == (360, KedaReason.DEACTIVATED, 0)  # 60 + 300: scaled in, work unfinished
    assert log[13:] == [(390, KedaReason.NOT_ACTIVE, 0)]
    # During the cooldown the HPA proposes 0 for an empty list; its minReplicas (1) holds it up.
    assert hpa_replicas(list_length=0, status_replicas=3) == 1
