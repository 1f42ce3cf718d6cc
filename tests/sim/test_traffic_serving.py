"""The replicas a Traffic's target serves with, as the simulator feeds them to the fluid queue: at every
moment the target's pods that work, and their GPUs, however the Deployment is scaled meanwhile (the
simulator keeps the count between events where no pod started or stopped working and the target's
pods stayed as they were)."""

from __future__ import annotations

from dataclasses import replace

from gpufleet.control.clock import Priority
from gpufleet.model.load import Traffic
from gpufleet.model.node import Node
from gpufleet.model.pod import Behavior, Pod
from gpufleet.model.resources import GPU
from gpufleet.model.scenario import Scenario
from gpufleet.model.simulation import SimulationSettings
from gpufleet.model.workloads import Created, Deployment, Job
from gpufleet.sim.simulation import Simulation

TARGET = "Deployment/serving/inference"


Seen = tuple[float, tuple[int, float], tuple[int, float]]
#: an 8-GPU node's capacity, and the inference Deployment's pod: one GPU, a model of 1 GB to load
NODE = {"cpu": 96_000, "memory": 768 * 2**30, "pods": 110, GPU: 8}
SERVER = Pod(
    "", labels={"app": "inference"}, requests={"cpu": 1000, GPU: 1}, behavior=Behavior(model_size_bytes=1e9)
)


def day(scale_to: list[tuple[float, int]]) -> list[Seen]:
    """Two 8-GPU nodes, an inference Deployment of 4 one-GPU replicas under Traffic, training Jobs
    starting and ending beside it, and the Deployment scaled at the given times. Returns, every 7 s,
    the time, (serving, GPUs) as the queue had them and (serving, GPUs) counted afresh."""
    node, server = NODE, replace(SERVER, termination_grace_s=45.0)
    jobs = [
        Job(
            f"train-{k}",
            "research",
            Pod("", requests={GPU: 1}, restart_policy="Never", behavior=Behavior(duration_s=90.0)),
            created=Created(20.0 * k, k),
        )
        for k in range(20)
    ]
    sim = Simulation(
        Scenario(
            nodes=[Node(f"gpu-{i}", capacity=node) for i in range(2)],
            jobs=jobs,
            deployments=[Deployment("inference", "serving", server, replicas=4, created=Created(0.0, 20))],
            traffic=[Traffic("chat", "serving", "inference", ((0.0, 30.0),), per_replica_rps=10)],
            simulation=SimulationSettings(duration_s=600.0),
        )
    )
    for at, replicas in scale_to:
        sim.loop.at(at, Priority.ARRIVAL, lambda n=replicas: sim.scale(TARGET, n))
    seen: list[Seen] = []

    def look() -> None:
        controller = sim.scale_target(TARGET)
        assert controller is not None
        working = [sim.records[k] for k in controller.active if sim.records[k].working]
        queue = sim.traffic[TARGET]
        fresh = (len(working), sum(r.gpu_share for r in working))
        seen.append((sim.loop.now, (queue.serving, queue.gpus), fresh))
        if sim.loop.now < 590:
            sim.loop.at(sim.loop.now + 7, Priority.SAMPLE, look)

    sim.loop.at(0.0, Priority.SAMPLE, look)
    sim.run()
    return seen


def test_the_queue_serves_with_the_working_replicas_of_the_moment_through_scale_downs_and_ups() -> None:
    seen = day([(100.0, 2), (200.0, 6), (300.0, 1), (400.0, 3)])
    assert [(t, queue) for t, queue, _ in seen] == [(t, fresh) for t, _, fresh in seen]
    assert {serving for _, (serving, _), _ in seen} >= {1, 2, 3, 4, 6}  # the scaling was seen


def test_a_replica_serves_from_the_event_that_made_it_work_when_no_other_event_follows() -> None:
    """One replica of 10 requests/s under 10 requests/s, nothing else in the run: it works from 0.1 s (its
    model loaded), and the queue counts its service from then to the run's end at 600 s (5,999 served, the
    first 0.1 s of arrivals still waiting), not from the next event, of which there is none (before, the
    run served nothing: the replicas an event left were read only at the next event)."""
    sim = Simulation(
        Scenario(
            nodes=[Node("gpu-0", capacity=NODE)],
            deployments=[Deployment("inference", "serving", SERVER, replicas=1, created=Created(0.0, 1))],
            traffic=[Traffic("chat", "serving", "inference", ((0.0, 10.0),), per_replica_rps=10)],
            simulation=SimulationSettings(duration_s=600.0),
        )
    )
    sim.run()
    (rec,) = sim.records.values()
    queue = sim.traffic[TARGET]
    assert rec.working_s == 0.1
    assert (round(queue.served, 6), round(queue.backlog, 6), queue.requests) == (5999.0, 1.0, 6000.0)
    assert queue.timeline[-1][4] == 1.0  # the last sample: one replica working
