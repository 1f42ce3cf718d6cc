"""Properties of the simulator over random clusters and workloads (hypothesis).

- no node ever has more of a resource assigned than it has allocatable, at any step;
- under Coscheduling a gang is never partly bound;
- the same input and seed give the same ``summary.json``, byte for byte;
- the timeline's series have one length, ``t_s`` rises from 0 to ``end_time_s``, and every
  summary passes the schema;
- the stages of every pod that worked add up to ``working_s - created_s``.
"""

from __future__ import annotations

import atexit
import itertools
import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import gpu_node, gpu_pod
from gpufleet.kube import load_scenario
from gpufleet.model.pod import POD_GROUP_LABEL, Behavior
from gpufleet.model.scenario import BarePod, Scenario
from gpufleet.model.scheduler_config import PluginRef, PluginSet, ProfileConfig, SchedulerConfig
from gpufleet.model.simulation import SimulationSettings
from gpufleet.model.workloads import Created, Job, PodGroup
from gpufleet.report import validate_summary
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary

#: the generated pods run to completion (under ``Always``, the Pod default, the kubelet would restart them
#: after each exit for the whole 30 days a run without a duration may last)
RUN_ONCE: dict[str, object] = {"restart_policy": "Never"}
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
GANG_SCHEDULER = "gang-scheduler"
COSCHEDULING = SchedulerConfig(
    "coscheduler",
    profiles=[
        ProfileConfig(
            GANG_SCHEDULER,
            plugins={
                "multiPoint": PluginSet((PluginRef("Coscheduling"),)),
                "queueSort": PluginSet((PluginRef("Coscheduling"),), ("*",)),
            },
        )
    ],
)

# -- strategies ------------------------------------------------------------------------------
node_shapes = st.tuples(
    st.sampled_from([0, 1, 2, 4, 8]),  # GPUs
    st.sampled_from([8, 32, 96]),  # cpu cores
    st.sampled_from([64, 256, 768]),  # memory GiB
)
pod_shapes = st.tuples(
    st.sampled_from([0, 1, 2, 4, 8]),  # GPUs
    st.integers(1, 64),  # cpu cores
    st.sampled_from([1, 16, 128, 512]),  # memory GiB
    st.integers(0, 12).map(lambda n: n * 300.0),  # submit at (ties are frequent)
    st.one_of(st.none(), st.integers(1, 24).map(lambda n: n * 300.0)),  # duration
)


@st.composite
def clusters(draw: st.DrawFn, gangs: bool = False) -> Scenario:
    nodes = [
        gpu_node(f"n{i}", g, c, m)
        for i, (g, c, m) in enumerate(draw(st.lists(node_shapes, min_size=1, max_size=4)))
    ]
    scheduler = GANG_SCHEDULER if gangs else "default-scheduler"
    pods = []
    for i, (g, c, m, at, dur) in enumerate(draw(st.lists(pod_shapes, min_size=1, max_size=10))):
        pod = gpu_pod(
            f"p{i}", g, c, m, scheduler_name=scheduler, behavior=Behavior(duration_s=dur), **RUN_ONCE
        )
        pods.append(BarePod(pod, Created(at, i)))
    groups: dict[str, PodGroup] = {}
    jobs: list[Job] = []
    if gangs:
        for j in range(draw(st.integers(1, 3))):
            g, c, m, at, dur = draw(pod_shapes)
            members = draw(st.integers(1, 4))
            min_member = draw(st.integers(1, members + 1))  # +1: a gang that can never start
            name = f"gang{j}"
            groups[f"default/{name}"] = PodGroup(name, "default", min_member=min_member)
            as_job = draw(st.booleans())
            template = gpu_pod(
                "" if as_job else name,
                g,
                c,
                m,
                scheduler_name=scheduler,
                labels={POD_GROUP_LABEL: name},
                behavior=Behavior(duration_s=dur),
                **RUN_ONCE,
            )
            if as_job:
                jobs.append(
                    Job(
                        name,
                        "default",
                        template,
                        parallelism=members,
                        completions=members,
                        created=Created(at, 100 + j),
                    )
                )
            else:
                for k in range(members):
                    pod = gpu_pod(
                        f"{name}-{k}",
                        g,
                        c,
                        m,
                        scheduler_name=scheduler,
                        labels={POD_GROUP_LABEL: name},
                        behavior=Behavior(duration_s=dur),
                        **RUN_ONCE,
                    )
                    pods.append(BarePod(pod, Created(at, 100 + 10 * j + k)))
    # Without a duration a run goes on while anything is left to do (30 days at most); a gang
    # that Coscheduling keeps rejecting keeps it busy, so gang runs are bounded.
    duration = draw(st.sampled_from([1800.0, 3600.0]) if gangs else st.one_of(st.none(), st.just(7200.0)))
    return Scenario(
        nodes=nodes,
        pods=pods,
        jobs=jobs,
        pod_groups=groups,
        schedulers=[COSCHEDULING] if gangs else [],
        simulation=SimulationSettings(duration_s=duration, sample_interval_s=600.0 if gangs else 3 * 3600.0),
    )


# -- helpers ---------------------------------------------------------------------------------
def run_checked(sim: Simulation, check: Callable[[Simulation], None]) -> dict[str, Any]:
    """Run ``sim`` calling ``check`` after every event, then check once more and summarise."""
    step = sim.loop.step

    def checked_step() -> bool:
        done = step()
        check(sim)
        return done

    sim.loop.step = checked_step  # type: ignore[method-assign]
    sim.run()
    check(sim)
    return build_summary(sim)


def never_overcommitted(sim: Simulation) -> None:
    state = sim.state
    active = state.active
    over = np.argwhere(state.requested[active] > state.alloc[active])
    assert over.size == 0, [
        (state.nodes[int(np.flatnonzero(active)[r])].name, state.resources[c]) for r, c in over
    ]
    assert (state.requested[active] >= 0).all()


def gangs_whole(sim: Simulation) -> None:
    for key, group in sim.scenario.pod_groups.items():
        members = [r for r in sim.records.values() if f"{r.pod.namespace}/{r.pod.pod_group}" == key]
        # bound at some time (Running now, or since finished): waiting at Permit is not bound
        bound = [r for r in members if r.bound_s is not None]
        running = [r for r in bound if r.phase == "Running"]
        assert len(bound) == 0 or len(bound) >= group.min_member, (key, [r.pod.name for r in bound])
        assert all(r.pod.key in sim.state.assignments for r in running)
        # gang members work only together
        working = [r for r in members if r.working]
        assert (
            len(working) == 0
            or len(working) + sum(r.phase == "Succeeded" for r in members) >= group.min_member
        )


def check_summary(summary: dict[str, Any]) -> None:
    validate_summary(summary)
    timeline = summary["timeline"]
    lengths = {k: len(v) for k, v in timeline.items() if isinstance(v, list)}
    assert len(set(lengths.values())) == 1, lengths
    t = timeline["t_s"]
    assert t[0] == 0
    assert t[-1] == summary["end_time_s"]
    assert all(a < b for a, b in itertools.pairwise(t)), t
    for pod in summary["pods"]:
        if pod["working_s"] is not None:
            assert sum(pod["stages"].values()) == pytest.approx(pod["working_s"] - pod["created_s"]), pod
        else:
            assert pod["stages"] == {}


def summary_text(summary: dict[str, Any]) -> str:
    return json.dumps(summary, sort_keys=True)


# -- properties ------------------------------------------------------------------------------
@SETTINGS
@given(clusters())
def test_no_node_is_ever_overcommitted(scenario: Scenario) -> None:
    summary = run_checked(Simulation(scenario, seed=0), never_overcommitted)
    check_summary(summary)


@SETTINGS
@given(clusters(gangs=True), st.integers(0, 3))
def test_coscheduling_never_binds_part_of_a_gang(scenario: Scenario, seed: int) -> None:
    def check(sim: Simulation) -> None:
        never_overcommitted(sim)
        gangs_whole(sim)

    summary = run_checked(Simulation(scenario, seed=seed), check)
    check_summary(summary)


# -- the same scenarios written as YAML and loaded -------------------------------------------
def node_yaml(name: str, gpus: int, cpu: int, mem: int) -> str:
    return (
        f"apiVersion: v1\nkind: Node\nmetadata:\n  name: {name}\nstatus:\n"
        f'  capacity: {{cpu: "{cpu}", memory: {mem}Gi, pods: "110", nvidia.com/gpu: "{gpus}"}}\n'
    )


def pod_yaml(name: str, gpus: int, cpu: int, mem: int, at: float, dur: float | None) -> str:
    notes = f"    gpufleet.io/submit-at: {int(at)}s\n"
    if dur is not None:
        notes += f"    gpufleet.io/duration: {int(dur)}s\n"
    limits = f"\n        limits: {{nvidia.com/gpu: {gpus}}}" if gpus else ""
    return (
        f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  annotations:\n{notes}"
        "spec:\n  restartPolicy: Never\n  containers:\n  - name: c\n    image: busybox\n"
        f'    resources:\n        requests: {{cpu: "{cpu}", memory: {mem}Gi}}{limits}\n'
    )


def simulation_yaml(duration: str | None) -> str:
    spec = "  sampleInterval: 3h\n" + (f"  duration: {duration}\n" if duration else "")
    return f"apiVersion: gpufleet.io/v1alpha1\nkind: Simulation\nmetadata:\n  name: s\nspec:\n{spec}"


_TMP = Path(tempfile.mkdtemp(prefix="gpufleet-props-"))
atexit.register(shutil.rmtree, _TMP, ignore_errors=True)


def write_yaml(docs: list[str]) -> Path:
    fd, name = tempfile.mkstemp(suffix=".yaml", dir=_TMP)
    path = Path(name)
    with open(fd, "w") as fh:
        fh.write("---\n".join(docs))
    return path


yaml_scenarios = st.tuples(
    st.lists(node_shapes, min_size=1, max_size=4), st.lists(pod_shapes, min_size=1, max_size=8)
)


def simulate_file(path: Path, seed: int) -> dict[str, Any]:
    sim = Simulation(load_scenario([path]), seed=seed)
    sim.run()
    return build_summary(sim)


@SETTINGS
@given(yaml_scenarios, st.integers(0, 2**16), st.sampled_from([None, "2h"]))
def test_same_input_and_seed_give_the_same_summary(
    shapes: tuple[list[Any], list[Any]], seed: int, duration: str | None
) -> None:
    nodes, pods = shapes
    docs = [node_yaml(f"node-{i}", *s) for i, s in enumerate(nodes)]
    docs += [pod_yaml(f"pod-{i}", *s) for i, s in enumerate(pods)]
    docs.append(simulation_yaml(duration))
    path = write_yaml(docs)
    first = simulate_file(path, seed)
    second = simulate_file(path, seed)
    assert summary_text(first) == summary_text(second)
    check_summary(first)
    # a fresh load of the same text gives the same again (its warnings name the other file)
    again = write_yaml(docs)
    fresh = simulate_file(again, seed)
    assert [w.replace(str(again), str(path)) for w in fresh["warnings"]] == first["warnings"]
    assert summary_text({**fresh, "warnings": []}) == summary_text({**first, "warnings": []})


def test_ties_may_differ_across_seeds_but_each_seed_is_reproducible() -> None:
    """Eight identical 1-GPU pods over eight identical nodes: placement rests on random ties."""
    docs = [node_yaml(f"node-{i}", 8, 96, 768) for i in range(8)]
    docs += [pod_yaml(f"pod-{i}", 1, 1, 1, 0, 600) for i in range(8)]
    docs.append(simulation_yaml(None))
    path = write_yaml(docs)
    placements = set()
    for seed in range(6):
        a, b = simulate_file(path, seed), simulate_file(path, seed)
        assert summary_text(a) == summary_text(b)
        check_summary(a)
        assert a["totals"]["pods_succeeded"] == 8
        placements.add(tuple(p["node"] for p in a["pods"]))
    assert len(placements) >= 1  # seeds may differ; nothing requires that they do
