"""What the simulator remembers about each pod and node: the event log and what it implies.

Every change of a pod's state goes through ``PodRecord.log`` so that the figures in the
summary (times, stages) are derived from one recorded sequence of events.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpufleet.model.pod import Pod

#: the stage a pod is in while it is in a state (until it first works)
STAGE_OF = {"pending": "scheduling", "gang_wait": "gang_wait", "starting": "other"}


@dataclass
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
    remaining_s: float | None = None
    work_started_at: float = 0.0
    token: int = 0
    disruptions: list[float] = field(default_factory=list)
    log: list[tuple[float, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.remaining_s = self.pod.behavior.duration_s
        self.log.append((self.created_s, "pending"))

    def enter(self, t: float, state: str) -> None:
        self.log.append((t, state))

    def stages(self) -> dict[str, float]:
        """Named parts of created -> first working, from the log (empty until it works)."""
        if self.working_s is None:
            return {}
        out: dict[str, float] = {}
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
