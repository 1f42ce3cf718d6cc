"""Workload autoscalers: HPAs, KEDA ScaledObjects (and the HPA each one owns), and ScaledJobs,
driving the replicas of Deployments and ReplicaSets (through their scale subresource) and Job creation
from the cluster's metrics.

The decisions are ``gpufleet.autoscaling`` (pure); this module only feeds them, on their own
clocks: the HPA controller syncs every 15 s (``--horizontal-pod-autoscaler-sync-period``), KEDA
polls each object every ``pollingInterval``. It reads and acts through a
``control.port.WorkloadPort``: a ``redis`` trigger reads its list's length (items queued, not yet
popped); a ``cron`` trigger reads the wall-clock time, the clock's time after
``wall_clock_start_s`` (the Simulation's ``startTime``); a Pods metric reads a per-pod metric
(``queue_length``, ``requests_per_second``, ``DCGM_FI_DEV_GPU_UTIL``; the simulator's ``Traffic``
yields them); a ``prometheus`` trigger evaluates its PromQL query over every pod's series
(``control.pod_series``, ``autoscaling.promql_eval``); a Resource metric (an HPA's own, or the one a
KEDA cpu/memory trigger gives its HPA) reads each running pod's usage as the metrics server reports it
(``WorkloadPort.pod_resource_usage``: a Traffic's usage fields or the pod's ``gpufleet.io/cpu-usage`` /
``memory-usage``); a pod without one has no sample, which the replica calculation treats as upstream's
does a missing pod (an HPA none of whose pods has a sample holds).
A ScaledObject with ``advanced.scalingModifiers`` gives its HPA one External metric, ``composite-metric``,
the formula over every trigger's value (``autoscaling.keda_scaling_modifiers``); what KEDA last answered
for each External metric is kept for ``summary.json``'s ``scaled_objects`` (``scaled_object_figures``).
A ScaledJob's pending Jobs are counted as KEDA's ``getPendingJobCount`` does
(``autoscaling.keda_scaled_job.job_is_pending``). Each HPA's status, conditions and events, as the controller
leaves them at each sync, are kept for ``summary.json``'s ``hpas`` (``autoscaling.hpa_status``).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field, replace
from functools import partial
from operator import attrgetter
from typing import Any

from gpufleet.autoscaling.hpa_controller import (
    HPA_SYNC_PERIOD_SECONDS,
    SCALING_DISABLED,
    HorizontalAutoscaler,
    MetricsOutcome,
)
from gpufleet.autoscaling.hpa_replicas import HPAPod, MetricObservation, PodMetric
from gpufleet.autoscaling.hpa_status import HPAStatus, hpa_summary
from gpufleet.autoscaling.keda import (
    FallbackTracker,
    HpaExternalMetric,
    HpaResourceMetric,
    JobPod,
    KedaHpaInputs,
    ScaledJobState,
    ScaledObjectState,
    hpa_inputs,
    job_is_pending,
)
from gpufleet.autoscaling.keda_scaling_modifiers import TriggerRead, composite_value, external_triggers
from gpufleet.autoscaling.keda_triggers import cron_value, prometheus_value
from gpufleet.autoscaling.promql_eval import PromQLEvalError, instant_vector
from gpufleet.control.clock import Clock, Priority
from gpufleet.control.pod_series import PodSeries
from gpufleet.control.port import PodStatus, WorkloadPort
from gpufleet.model.hpa import (
    CrossVersionObjectReference,
    ExternalMetricSource,
    HorizontalPodAutoscalerSpec,
    MetricIdentifier,
    MetricSpec,
    MetricTarget,
    PodsMetricSource,
    ResourceMetricSource,
)
from gpufleet.model.keda import (
    CronScaler,
    PrometheusScaler,
    RedisListScaler,
    ScaledJobSpec,
    ScaledObjectSpec,
    ScaleTrigger,
)
from gpufleet.model.workloads import Job
from gpufleet.workloads.kind import ReplicaBound

#: the window of a resource sample: metrics-server's ``--metric-resolution`` default (its CPU rate is taken
#: over the last two scrapes), seconds; the sample is stamped at the sync that reads it
METRICS_SERVER_WINDOW_S = 15.0

#: what the HPA controller reads of a pod (``_hpa_pod``): its object and status
HPA_READS = ("pod", "phase", "ready", "working_s", "running_s", "terminating")
READ = attrgetter(*HPA_READS)


@dataclass
class TargetPods:
    """An HPA's target's pods as a sync read them: each one's object and status (``READ``), the pods the
    controller made of them, and where their per-pod metrics come from (``sources``)."""

    read: list[tuple[object, ...]]
    pods: list[HPAPod]
    statuses: list[PodStatus]
    #: ``WorkloadPort.target_pods_version`` when they were read (None: not kept)
    version: Hashable = None
    #: one ready pod of each metric source (``WorkloadPort.pod_metric_source``), and for each pod the
    #: position of its source there (that of None, past the last, for a pod not ready); worked out when
    #: a Pods metric first reads them
    sources: tuple[list[PodStatus], list[int]] | None = None

    def metric_sources(
        self, port: WorkloadPort, statuses: list[PodStatus]
    ) -> tuple[list[PodStatus], list[int]]:
        if self.sources is None:
            first: dict[Hashable, int] = {}
            representatives: list[PodStatus] = []
            where = []
            for r in statuses:
                if not r.ready:
                    where.append(-1)
                    continue
                source = port.pod_metric_source(r)
                k = first.get(source)
                if k is None:
                    k = first[source] = len(representatives)
                    representatives.append(r)
                where.append(k)
            self.sources = representatives, [len(representatives) if k < 0 else k for k in where]
        return self.sources


@dataclass
class HpaRuntime:
    key: str  # "ns/name" of the HPA
    target: str  # "<kind>/<ns>/<name>" of its scaleTargetRef
    hpa: HorizontalAutoscaler
    keda: ScaledObjectState | None = None  # set for the HPA a ScaledObject owns
    #: KEDA's metrics adapter for a ScaledObject with ``spec.fallback`` (``GetMetricsWithFallback``)
    fallback: FallbackTracker | None = None
    #: its target's pods at the last sync (``TargetPods``)
    pods_read: TargetPods | None = None
    #: the last sync's proposal, with what it was made of (``_propose``)
    proposed: tuple[tuple[object, ...], MetricsOutcome] | None = None
    #: for the HPA a ScaledObject owns: what KEDA last answered for each External metric (None: no metric)
    answered: dict[str, float | None] = field(default_factory=dict)
    #: the HPA's status and events as the controller leaves them (``summary.json``'s ``hpas``)
    status: HPAStatus = field(default_factory=HPAStatus)


def keda_hpa_spec(inputs: KedaHpaInputs, so: ScaledObjectSpec) -> HorizontalPodAutoscalerSpec:
    """The HPA KEDA writes for a ScaledObject: one External metric per trigger, a Resource metric for a
    cpu/memory trigger; a cpu/memory trigger with ``containerName`` (a ``ContainerResource`` metric) is
    left out, as the HPA reader leaves that metric out (not modelled, warned by ``kube.keda``)."""
    metrics: list[MetricSpec] = []
    for m in inputs.metrics:
        if isinstance(m, HpaResourceMetric):
            if m.container is None:
                metrics.append(ResourceMetricSource(m.resource, m.target))
            continue
        metrics.append(
            ExternalMetricSource(
                MetricIdentifier(m.name),
                MetricTarget(
                    m.target_type,
                    value=m.target_milli if m.target_type == "Value" else None,
                    average_value=m.target_milli if m.target_type == "AverageValue" else None,
                ),
            )
        )
    ref = CrossVersionObjectReference(inputs.scale_target_ref.kind, inputs.scale_target_ref.name)
    return HorizontalPodAutoscalerSpec(
        ref, inputs.max_replicas, inputs.min_replicas, tuple(metrics), so.hpa_behavior_rules
    )


class WorkloadAutoscalers:
    def __init__(
        self,
        port: WorkloadPort,
        clock: Clock,
        hpas: list[tuple[str, HorizontalPodAutoscalerSpec]],
        scaled_objects: list[ScaledObjectSpec],
        scaled_jobs: list[tuple[ScaledJobSpec, Job]],
        wall_clock_start_s: float = 0.0,
    ):
        self.port = port
        self.clock = clock
        #: the wall-clock time (Unix seconds) of the clock's 0, which a cron trigger reads
        self.wall_clock_start_s = wall_clock_start_s
        self.series = PodSeries(port)
        self.hpas = [
            HpaRuntime(
                key,
                _target(spec.scale_target_ref.kind, key.split("/")[0], spec.scale_target_ref.name),
                HorizontalAutoscaler(spec),
            )
            for key, spec in hpas
        ]
        self.scaled_objects: list[tuple[ScaledObjectSpec, ScaledObjectState, HpaRuntime]] = []
        for so in scaled_objects:
            tracker = None if so.fallback is None else FallbackTracker(so)
            state = ScaledObjectState(so, 0.0, tracker)
            runtime = HpaRuntime(
                f"{so.namespace}/{so.name}",
                _target(so.scale_target_ref.kind, so.namespace, so.scale_target_ref.name),
                HorizontalAutoscaler(keda_hpa_spec(hpa_inputs(so), so)),
                state,
                fallback=tracker,
            )
            self.scaled_objects.append((so, state, runtime))
        self.scaled_jobs = [(spec, job, ScaledJobState(spec, 0.0)) for spec, job in scaled_jobs]
        self.jobs_of: dict[str, list[str]] = {
            f"{spec.namespace}/{spec.name}": [] for spec, _, _ in self.scaled_jobs
        }
        self.timeline: dict[str, list[float]] = {}

    def start(self) -> None:
        loop = self.clock
        if self.hpas or self.scaled_objects:
            loop.at(0.0, Priority.CONTROLLER, self._hpa_sync, background=True)
        for so, state, runtime in self.scaled_objects:
            loop.at(0.0, Priority.CONTROLLER, partial(self._keda_poll, so, state, runtime), background=True)
        for spec, job, job_state in self.scaled_jobs:
            loop.at(
                0.0,
                Priority.CONTROLLER,
                partial(self._scaled_job_poll, spec, job, job_state),
                background=True,
            )

    def active(self) -> bool:
        return bool(self.hpas or self.scaled_objects or self.scaled_jobs)

    # -- metrics -----------------------------------------------------------------------------
    def _pods(self, target: str) -> list[PodStatus]:
        scaled = self.port.scale_target(target)
        if scaled is None:
            return []
        return list(map(self.port.pods.__getitem__, sorted(scaled.active)))

    def _trigger_value(self, trigger: ScaleTrigger) -> float | None:
        """The scaler's value now; None when it fails (a query with several series, a cron trigger's
        unknown timezone) or reports none (a cpu/memory trigger: the HPA reads its Resource metric)."""
        scaler = trigger.scaler
        if isinstance(scaler, RedisListScaler):
            return float(self.port.list_length(scaler.list_name))
        if isinstance(scaler, CronScaler):
            return cron_value(scaler, self.wall_clock_start_s + self.clock.now)
        if not isinstance(scaler, PrometheusScaler):
            return None
        try:
            result = instant_vector(scaler.expr, self.series)
        except PromQLEvalError:
            return prometheus_value(scaler, None)
        return prometheus_value(scaler, result)

    def _values(self, rt: HpaRuntime, statuses: list[PodStatus]) -> tuple[object, ...]:
        """What each metric reads now: a Pods metric each pod's value, in order (None for a pod not ready),
        read once per metric source; a Resource metric each pod's usage, in order (None: no sample); an
        External metric of KEDA's its trigger's value; others None."""
        values: list[object] = []
        for metric in rt.hpa.spec.effective_metrics():
            if isinstance(metric, PodsMetricSource):
                assert rt.pods_read is not None
                representatives, where = rt.pods_read.metric_sources(self.port, statuses)
                name = metric.metric.name
                read = [self.port.pod_metric(r, name) for r in representatives]
                read.append(None)
                values.append(tuple(map(read.__getitem__, where)))
            elif isinstance(metric, ExternalMetricSource) and rt.keda is not None:
                values.append(self._keda_metric(rt, rt.keda.spec, metric.metric.name, statuses))
            elif isinstance(metric, ResourceMetricSource):
                usage = self.port.pod_resource_usage
                values.append(tuple(usage(r, metric.name) for r in statuses))
            else:
                values.append(None)  # Object and unknown External metrics: nothing models them
        return tuple(values)

    def _keda_metric(
        self, rt: HpaRuntime, so: ScaledObjectSpec, name: str, statuses: list[PodStatus]
    ) -> float | None:
        """What KEDA's metrics adapter answers the HPA for External metric ``name``
        (``GetScaledObjectMetrics``): its trigger's value or, with a formula, ``composite-metric`` over all
        the External triggers' (``keda_scaling_modifiers.composite_value``), each through the fallback once
        past its threshold."""
        if so.scaling_modifiers is not None:
            indexes = [i for i, _ in external_triggers(so)]
        else:
            indexes = [
                next(
                    i
                    for i, m in enumerate(hpa_inputs(so).metrics)
                    if isinstance(m, HpaExternalMetric) and m.name == name
                )
            ]
        reads = [TriggerRead(self._trigger_value(so.triggers[i])) for i in indexes]
        if rt.fallback is not None:  # the metrics adapter's answer: the fallback's once past its threshold
            scaled = self.port.scale_target(rt.target)
            current = 0 if scaled is None else scaled.replicas
            ready = sum(1 for s in statuses if s.phase == "Running" and s.ready)
            reads = [
                rt.fallback.read(i, r.value, current, ready) for i, r in zip(indexes, reads, strict=True)
            ]
        value = reads[0].value if so.scaling_modifiers is None else composite_value(so, reads)
        rt.answered[name] = value
        return value

    def _observations(
        self, rt: HpaRuntime, statuses: list[PodStatus], values: tuple[object, ...]
    ) -> list[MetricObservation]:
        """Each metric's observation of the values read (``_values``)."""
        now = self.clock.now
        out: list[MetricObservation] = []
        for metric, value in zip(rt.hpa.spec.effective_metrics(), values, strict=True):
            if isinstance(metric, PodsMetricSource):
                assert isinstance(value, tuple)
                samples = {}
                read: dict[float, PodMetric] = {}  # one sample per value read: pods mostly share theirs
                for r, each in zip(statuses, value, strict=True):
                    if each is not None:
                        sample = read.get(each)
                        if sample is None:
                            sample = read[each] = PodMetric(round(each * 1000), now)
                        samples[r.pod.name] = sample
                out.append(samples)
            elif isinstance(metric, ResourceMetricSource):
                assert isinstance(value, tuple)
                out.append(
                    {
                        r.pod.name: PodMetric(round(each * 1000), now, METRICS_SERVER_WINDOW_S)
                        for r, each in zip(statuses, value, strict=True)
                        if each is not None
                    }
                )
            elif isinstance(metric, ExternalMetricSource) and rt.keda is not None:
                assert value is None or isinstance(value, float)
                out.append(None if value is None else [round(value * 1000)])
            else:
                out.append(None)
        return out

    def _propose(
        self,
        rt: HpaRuntime,
        spec_replicas: int,
        status_replicas: int,
        pods: list[HPAPod],
        statuses: list[PodStatus],
        hpas_of: dict[str, list[str]],
    ) -> MetricsOutcome:
        """The metrics' proposal (``HorizontalAutoscaler.propose``). The last sync's stands when it was
        made of the same replica counts, pods and values read, unless the proposal reads the time."""
        values = self._values(rt, statuses)
        controlling = hpas_of[rt.target] if pods else []
        inputs = (spec_replicas, status_replicas, pods, values, controlling)
        if rt.proposed is not None and rt.proposed[0] == inputs and not rt.hpa.proposal_reads_time:
            return rt.proposed[1]
        proposal = rt.hpa.propose(
            self.clock.now,
            spec_replicas=spec_replicas,
            status_replicas=status_replicas,
            pods=pods,
            observations=self._observations(rt, statuses, values),
            controlling_hpas=controlling,
        )
        rt.proposed = (inputs, proposal)
        return proposal

    def _target_pods(self, rt: HpaRuntime) -> tuple[list[PodStatus], list[HPAPod]]:
        """The target's pods, and the pods as the HPA controller reads them. The last sync's stand, unread,
        while the port's ``target_pods_version`` does."""
        version = self.port.target_pods_version(rt.target)
        kept = rt.pods_read
        if version is not None and kept is not None and kept.version == version:
            return kept.statuses, kept.pods
        statuses = self._pods(rt.target)
        pods = self._hpa_pods(rt, statuses)
        assert rt.pods_read is not None
        rt.pods_read.statuses, rt.pods_read.version = statuses, version
        return statuses, pods

    @classmethod
    def _hpa_pods(cls, rt: HpaRuntime, pods: list[PodStatus]) -> list[HPAPod]:
        """The pods as the HPA controller reads them; the last sync's stand while every pod's object and
        status read as they were (99 % of the simulated day's syncs: its pods change a few times an hour)."""
        read = list(map(READ, pods))
        if rt.pods_read is None or rt.pods_read.read != read:
            rt.pods_read = TargetPods(read, [cls._hpa_pod(r) for r in pods], pods)
        return rt.pods_read.pods

    @staticmethod
    def _hpa_pod(r: PodStatus) -> HPAPod:
        return HPAPod(
            r.pod.name,
            "Running" if r.phase == "Running" else "Pending",
            "True" if r.ready else "False",
            r.working_s or 0.0,
            r.running_s,
            r.terminating,
            {k: v * (1 if k == "cpu" else 1000) for k, v in r.pod.requests.items()},
        )

    # -- loops -------------------------------------------------------------------------------
    def _hpa_sync(self) -> None:
        now = self.clock.now
        runtimes = self.hpas + [r for _, _, r in self.scaled_objects]
        # the HPAs (KEDA's included) whose selectors select each target's pods: those aimed at it
        hpas_of: dict[str, list[str]] = {}
        for rt in runtimes:
            hpas_of.setdefault(rt.target, []).append(rt.key)
        for rt in runtimes:
            controller = self.port.scale_target(rt.target)
            if controller is None:
                continue
            if rt.keda is not None and controller.replicas == 0:  # KEDA scales it from zero, the HPA stands
                rt.status.record(now, 0, SCALING_DISABLED)
                continue
            statuses, pods = self._target_pods(rt)
            proposal = self._propose(rt, controller.replicas, len(controller.active), pods, statuses, hpas_of)
            decision = rt.hpa.decide(now, controller.replicas, proposal)
            rt.status.record(now, controller.replicas, decision)
            if decision.desired_replicas != controller.replicas:
                self.port.scale(rt.target, decision.desired_replicas)
        self.clock.at(now + HPA_SYNC_PERIOD_SECONDS, Priority.CONTROLLER, self._hpa_sync, background=True)

    def _keda_poll(self, so: ScaledObjectSpec, state: ScaledObjectState, rt: HpaRuntime) -> None:
        now = self.clock.now
        controller = self.port.scale_target(rt.target)
        if controller is not None:
            values = [self._trigger_value(t) for t in so.triggers]
            decision = state.poll(now, values, controller.replicas)
            if decision.scale_to is not None and decision.scale_to != controller.replicas:
                self.port.scale(rt.target, decision.scale_to)
        self.clock.at(
            now + so.polling_interval_s,
            Priority.CONTROLLER,
            partial(self._keda_poll, so, state, rt),
            background=True,
        )

    def _scaled_job_poll(self, spec: ScaledJobSpec, template: Job, state: ScaledJobState) -> None:
        port, now = self.port, self.clock.now
        key = f"{spec.namespace}/{spec.name}"
        jobs = [port.job(k) for k in self.jobs_of[key]]
        running = [j for j in jobs if j is not None and not j.done]
        conditions = spec.scaling_strategy.pending_pod_conditions
        pending = [
            j for j in running if job_is_pending([_job_pod(port.pods[p]) for p in j.active], conditions)
        ]
        values = [self._trigger_value(t) for t in spec.triggers]
        for _ in range(state.poll(now, values, len(running), len(pending))):
            name = f"{spec.name}-{len(self.jobs_of[key])}"
            self.jobs_of[key].append(f"{spec.namespace}/{name}")
            port.create_job(replace(template, name=name))
        self.clock.at(
            now + spec.polling_interval_s,
            Priority.CONTROLLER,
            partial(self._scaled_job_poll, spec, template, state),
            background=True,
        )

    def scaled_object_figures(self) -> dict[str, dict[str, Any]]:
        """``summary.json``'s ``scaled_objects``, by ``namespace/name``: the HPA KEDA writes, its External
        metrics (with a formula the one ``composite-metric``) with their type, target and the value KEDA
        last answered the HPA (None: no metric), the formula and ``activationTarget`` where there is one,
        and the last poll's activity with ``status.lastActiveTime``."""
        out: dict[str, dict[str, Any]] = {}
        for so, state, rt in self.scaled_objects:
            inputs = hpa_inputs(so)
            decision = state.last_decision
            entry: dict[str, Any] = {
                "hpa": inputs.name,
                "metrics": [
                    {
                        "name": m.name,
                        "type": m.target_type,
                        "target": m.target,
                        "value": rt.answered.get(m.name),
                    }
                    for m in inputs.metrics
                    if isinstance(m, HpaExternalMetric)
                ],
                "active": decision is not None and decision.active,
                "last_active_s": state.last_active_at,
            }
            modifiers = so.scaling_modifiers
            if modifiers is not None:
                entry["formula"] = modifiers.formula
                entry["activation_target"] = modifiers.activation_value
            out[f"{so.namespace}/{so.name}"] = entry
        return out

    def hpa_figures(self) -> dict[str, dict[str, Any]]:
        """``summary.json``'s ``hpas``, by ``namespace/name``: each HPA's spec, status, conditions, events and
        rescales (``autoscaling.hpa_status.hpa_summary``), KEDA's under the name KEDA gives them."""
        out = {rt.key: hpa_summary(rt.hpa.spec, rt.status) for rt in self.hpas}
        for so, _, rt in self.scaled_objects:
            key = f"{so.namespace}/{hpa_inputs(so).name}"
            out[key] = hpa_summary(rt.hpa.spec, rt.status, f"{so.namespace}/{so.name}")
        return dict(sorted(out.items()))

    def active_jobs(self, key: str) -> int:
        return sum(1 for k in self.jobs_of[key] if (j := self.port.job(k)) is not None and not j.done)

    def replica_bounds(self) -> list[ReplicaBound]:
        """``kind.BoundsReplicas``: each ScaledJob's unfinished Jobs at most ``MinReplicaCount() +
        MaxReplicaCount()`` (its ``maxReplicaCount``), as every scaling strategy but ``custom`` keeps them
        (``keda_scaled_job.effective_max_scale``; ``custom`` deducts only a share of the running Jobs)."""
        return [
            ReplicaBound(
                f"ScaledJob/{spec.namespace}/{spec.name} Jobs",
                self.active_jobs(f"{spec.namespace}/{spec.name}"),
                0,
                spec.effective_min_replica_count + spec.effective_max_replica_count,
            )
            for spec, _, _ in self.scaled_jobs
            if spec.scaling_strategy.selected != "custom"
        ]


def _target(kind: str, namespace: str, name: str) -> str:
    """A scaleTargetRef as the port names it: ``<kind>/<ns>/<name>``."""
    return f"{kind}/{namespace}/{name}"


def _job_pod(status: PodStatus) -> JobPod:
    """A pod as ``getPendingJobCount`` reads it: its phase and the conditions gpufleet tracks."""
    true_conditions = set()
    if status.bound_s is not None:
        true_conditions.add("PodScheduled")
    if status.running_s is not None:
        true_conditions.add("Initialized")
    if status.ready:
        true_conditions.update(("ContainersReady", "Ready"))
    return JobPod(status.phase, frozenset(true_conditions))
