"""Named work lists fed by ``QueueFeed``s and drained by consumer pods (``gpufleet.io/consumes``).

An item is popped when a consumer starts working on it (as a Redis ``LPOP`` by the worker) and
finished after its work. A consumer terminated mid-item pushes it back with the progress it had
checkpointed if it is annotated ``gpufleet.io/requeue-on-sigterm: "true"``; otherwise the item is
lost. Always ``fed = completed + lost + queued + in_progress``.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field


@dataclass
class WorkItem:
    id: int
    work_s: float
    done_s: float = 0.0  # checkpointed progress carried by a re-queued item


@dataclass
class WorkList:
    name: str
    queued: deque[WorkItem] = field(default_factory=deque)
    in_progress: dict[str, WorkItem] = field(default_factory=dict)  # consumer pod -> item
    idle: list[str] = field(default_factory=list)  # consumers waiting for an item, in arrival order
    fed: int = 0
    started: int = 0
    completed: int = 0
    lost: int = 0
    requeued: int = 0

    def push(self, work_s: float) -> None:
        self.fed += 1
        self.queued.append(WorkItem(self.fed, work_s))

    def pop(self, consumer: str) -> WorkItem | None:
        if not self.queued:
            return None
        item = self.queued.popleft()
        self.in_progress[consumer] = item
        self.started += 1
        return item

    def finish(self, consumer: str) -> None:
        del self.in_progress[consumer]
        self.completed += 1

    def interrupt(self, consumer: str, kept_s: float, requeue: bool) -> None:
        """The consumer was terminated mid-item: push it back with ``kept_s`` done, or lose it."""
        item = self.in_progress.pop(consumer)
        if requeue:
            item.done_s = kept_s
            self.queued.appendleft(item)
            self.requeued += 1
        else:
            self.lost += 1

    def counts(self) -> dict[str, int]:
        return {
            "fed": self.fed,
            "started": self.started,
            "completed": self.completed,
            "lost": self.lost,
            "requeued": self.requeued,
            "queued": len(self.queued),
            "in_progress": len(self.in_progress),
        }
