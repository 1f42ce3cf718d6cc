"""What the simulator remembers about each pod and node: the event log and what it implies.

Every change of a pod's state goes through ``PodRecord.log`` so that the figures in the
summary (times, stages) are derived from one recorded sequence of events.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from gpufleet.gpus.devices import Unit
from gpufleet.lazy_container import EMPTY_MAPPING
from gpufleet.lifecycle.checkpoints import last_checkpoint, progress, time_to_finish
from gpufleet.lifecycle.liveness import RestartBackOff
from gpufleet.model.dra import AllocationResult
from gpufleet.model.pod import Pod
from gpufleet.model.pod_failure_policy import ContainerExit
from gpufleet.model.scheduler_records import Recorded
from gpufleet.sim.placement_quality import RingPlacement

#: the stage a pod is in while it is in a state (until it first works)
STAGE_OF = {
    "queued": "queueing",  # held by Kueue until its workload is admitted
    "gated": "scheduling_gated",  # kept out of the queue by its scheduling gates (SchedulingGates)
    "pending": "scheduling",
    "provisioning": "node_provisioning",
    "gang_wait": "gang_wait",
    "image_pull": "image_pull",
    "model_load": "model_load",
    "warmup": "warmup",
    "starting": "other",
    "idle": "other",
}
#: the stage of a dump's pod created before the run (``PodRecord.dump_created_s``): from its
#: ``creationTimestamp`` to its arrival in the run, time the dump does not break down
BEFORE_SNAPSHOT = "before_snapshot"


@dataclass(frozen=True, slots=True)
class ImagePull:
    """The kubelet's pull of the pod's image before its first container started (``pullImage``): when it
    asked for it (``Pulling``), the pull's own time (the transfer at the registry bandwidth; none for a
    request that waited for a pull of the same image already under way) and when the image was on the
    node."""

    requested_s: float
    pull_s: float
    landed_s: float


@dataclass(slots=True)
class PodRecord:
    pod: Pod
    scheduler: str
    created_s: float
    phase: str = "Pending"
    reason: str | None = None
    node: str | None = None
    message: str | None = None
    bound_s: float | None = None
    running_s: float | None = None
    working_s: float | None = None
    finished_s: float | None = None
    deleted_s: float | None = None
    working: bool = False
    ready: bool = False
    ready_s: float | None = None  # when it last became Ready (its Ready condition's lastTransitionTime)
    terminating: bool = False
    done_s: float = 0.0  # computation of the current task kept (checkpointed, or finished)
    task_s: float | None = None  # the current task's work: the pod's duration, or a work item's
    consumer_idle: bool = False  # a queue worker waiting for an item
    work_started_at: float = 0.0
    token: int = 0
    #: when it was disrupted; a tuple, as most pods never are (the empty one is shared: a record is kept for
    #: the whole run)
    disruptions: tuple[float, ...] = ()
    #: the start chain of the node launched for it; most pods had none, and share one empty mapping
    node_stages: Mapping[str, float] = field(default_factory=lambda: EMPTY_MAPPING)
    devices: list[Unit] = field(default_factory=list)  # the GPU units it holds on its node
    #: its ResourceClaims' allocations when it was bound: (claim key, allocation), in its claims' order
    claims: tuple[tuple[str, AllocationResult], ...] = ()
    gpu_share: float = 0.0  # GPU-equivalents it holds
    restarts: int = 0  # its first container's ``restartCount``
    #: the kubelet's back-off before a restart, made at its container's first restart (``restart_back_off``):
    #: most pods never restart, and a record is kept for the whole run
    back_off: RestartBackOff | None = None
    #: each back-off the kubelet waited out before a restart: (when its container ended, seconds); a tuple,
    #: as most pods never restart
    back_offs: tuple[tuple[float, float], ...] = ()
    #: when each of its first container's containers started (``startContainer``: the first, then each
    #: restart's), in time order
    container_starts: list[float] = field(default_factory=list)
    image_pull: ImagePull | None = None  # its image's pull, where the kubelet pulled it for this pod
    hung: bool = False  # its process hangs: it holds its GPUs and computes nothing (``sim.hung_processes``)
    #: its node's kubelet stopped (``sim.unreachable_nodes``): its containers died with it, and nobody reports
    #: its status nor confirms its deletion until the kubelet is back or PodGC deletes it
    kubelet_down: bool = False
    work_lost_gpu_s: float = 0.0  # GPU-seconds of computation it lost (since a checkpoint, when stopped)
    checkpoint_save_gpu_s: float = 0.0  # GPU-seconds it spent writing checkpoints, computing paused
    ring: RingPlacement | None = None  # a gang member: its ring's placement and stretch
    #: its first container's terminated state once it ended (``state.terminated``: exit code and reason),
    #: None where the kubelet would report none (``model.pod_failure_policy``); and the one before its
    #: last restart (``lastState.terminated``: ``PodLifecycle.restart_container``)
    terminated: ContainerExit | None = None
    last_terminated: ContainerExit | None = None
    log: list[tuple[float, str]] = field(default_factory=list)
    #: a dump's pod: its ``creationTimestamp`` on the run's clock (``model.node_readiness.created_on_clock``;
    #: negative: before the run), where it is earlier than ``created_s``, when it arrived in the run
    dump_created_s: float | None = None
    #: such a pod of the dump already running on its node when the run began: it began working before the
    #: run, when the dump does not say (its running and working times are its arrival's; its ``bound_s`` the
    #: dump's where it says, ``kube.pod_times``)
    running_at_start: bool = False
    #: a dump's pending pod: the ``PodScheduled=False`` condition it arrived with (its reason and message),
    #: its condition until a scheduler of the run writes one; for a pod no scheduler of the run serves, to the
    #: end (``sim.pod_scheduled``)
    dump_condition: Recorded | None = None

    def __post_init__(self) -> None:
        self.log.append((self.created_s, "pending"))
        self.task_s = self.pod.behavior.duration_s
        self.gpu_share = float(self.pod.gpus)

    @property
    def creation_timestamp_s(self) -> float:
        """Its ``metadata.creationTimestamp`` on the run's clock: what its age counts from."""
        return self.created_s if self.dump_created_s is None else self.dump_created_s

    @property
    def remaining_s(self) -> float | None:
        """Seconds of work to the task's end, the checkpoints to save on the way included."""
        if self.task_s is None:
            return None
        interval, save = self.pod.behavior.checkpoint_interval_s, self.pod.behavior.checkpoint_save_s
        if interval and save and self.done_s < self.task_s:
            return time_to_finish(self.done_s, self.task_s, interval, save)
        return max(self.task_s - self.done_s, 0.0)

    @property
    def counts_for_gang(self) -> bool:
        """Past its start chain and running (its node's kubelet up), or finished: what a gang waits for."""
        stopped = self.terminating or self.hung or self.kubelet_down
        running = self.ready and self.phase == "Running" and not stopped
        return running or self.phase == "Succeeded"

    def stop_working(self, now: float, sigterm: bool = False) -> float:
        """Stop computing at ``now``; keep progress up to the last checkpoint (all of it when a
        SIGTERM lets the pod checkpoint, ``gpufleet.io/checkpoint-on-sigterm``): the last one taken since
        it started, else the one it resumed from (``done_s`` then: a predecessor's checkpoint on SIGTERM
        need not be a multiple of the interval). Returns the seconds lost; a pod without a task (a server
        with no ``gpufleet.io/duration``) loses none."""
        self.working = False
        start = self.done_s
        total = start + (now - self.work_started_at)  # (the time worked first: 0 adds nothing)
        task = self.task_s
        if task is None:  # a server computing forever keeps no progress that could be lost
            return 0.0
        interval, save = self.pod.behavior.checkpoint_interval_s, self.pod.behavior.checkpoint_save_s
        if interval and save:  # computing pauses while a checkpoint is written (lifecycle.checkpoints)
            made = progress(self.done_s, now - self.work_started_at, task, interval, save)
            self.checkpoint_save_gpu_s += made.saving_s * self.gpu_share
            total = made.done_s
            if total < task - 1e-9 and not (sigterm and self.pod.behavior.checkpoint_on_sigterm):
                self.done_s = made.saved_s
                return total - made.saved_s
        if total >= task - 1e-9:
            self.done_s = task
            return 0.0
        if sigterm and self.pod.behavior.checkpoint_on_sigterm:
            self.done_s = total
            return 0.0
        self.done_s = max(last_checkpoint(total, interval), start) if interval else start
        return max(total - self.done_s, 0.0)  # (a checkpoint a rounding error ahead loses nothing)

    def restart_back_off(self) -> RestartBackOff:
        """Its container's back-off (``back_off``), made the first time it restarts."""
        if self.back_off is None:
            self.back_off = RestartBackOff()
        return self.back_off

    def enter(self, t: float, state: str) -> None:
        self.log.append((t, state))

    def stages(self) -> dict[str, float]:
        """Named parts of created (``creation_timestamp_s``) -> first working, from the log (empty until it
        works); a dump's pod created before the run spent the time to its arrival ``BEFORE_SNAPSHOT``, less,
        where the dump says when it was bound before the run (``bound_s`` before its arrival), the time from
        its creation to then: pending, its ``scheduling`` stage."""
        if self.working_s is None:
            return {}
        out: dict[str, float] = {}
        if self.dump_created_s is not None:
            bound = self.bound_s if self.bound_s is not None and self.bound_s < self.created_s else None
            if bound is not None:
                out[STAGE_OF["pending"]] = bound - self.dump_created_s
            out[BEFORE_SNAPSHOT] = self.created_s - (self.dump_created_s if bound is None else bound)
        for (t0, state), (t1, _) in zip(self.log, [*self.log[1:], (self.working_s, "")], strict=True):
            if t0 >= self.working_s:
                break
            stage = STAGE_OF.get(state, "other")
            out[stage] = out.get(stage, 0.0) + min(t1, self.working_s) - t0
        return {k: round(v, 6) for k, v in out.items() if v > 0}


@dataclass
class NodeRecord:
    name: str
    pool: str | None
    created_s: float
    ready_s: float | None
    gpu_ready_s: float | None
    deleted_s: float | None = None
