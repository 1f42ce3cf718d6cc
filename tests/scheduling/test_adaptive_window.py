"""The fast paths of a scheduling cycle give kube-scheduler's answer: ``selectHost``'s seeded draws are
``Generator.integers``', and a window of ``numFeasibleNodesToFind`` nodes found by bisection in the
cache's top-scoring nodes picks what scoring the window picks (``schedule_one.go``)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import gpu_node, gpu_pod
from gpufleet.cluster.state import ClusterState
from gpufleet.model.gpu_share import GpuShare
from gpufleet.model.pod import Pod
from gpufleet.model.scheduler_config import ProfileConfig, SchedulerConfig
from gpufleet.scheduling.events import EVERYTHING
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.host_draws import HostDraws
from gpufleet.scheduling.plugins.fgd_policies import DRAWS_BLOCK
from gpufleet.scheduling.scheduler import Best, Outcome, Scheduler, num_feasible_nodes_to_find
from gpufleet.scheduling.shape_cache import ShapeCache


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32), st.lists(st.integers(1, 2**32), min_size=1, max_size=300))
def test_host_draws_are_the_generators_integers(seed: int, ranges: list[int]) -> None:
    numpy_rng, draws = np.random.default_rng(seed), HostDraws(np.random.default_rng(seed))
    assert [draws.integers(n) for n in ranges] == [int(numpy_rng.integers(n)) for n in ranges]


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 2**32),
    st.lists(st.tuples(st.booleans(), st.integers(0, 1200)), min_size=1, max_size=40),
    st.sampled_from([1, 3, 256, DRAWS_BLOCK]),
)
def test_host_draws_words_and_integers_interleaved_are_the_generators(
    seed: int, calls: list[tuple[bool, int]], block: int
) -> None:
    """``words(n)`` is ``integers(0, 2**32, size=n, dtype=np.uint32)``, in one stream with ``integers``
    (an odd count leaves half a raw word for the next call, as NumPy's generator keeps it), whatever
    was fetched ahead (Random's ``DRAWS_BLOCK`` too); the words given stay as they were."""
    numpy_rng, draws = np.random.default_rng(seed), HostDraws(np.random.default_rng(seed), block)
    given: list[tuple[npt.NDArray[np.uint32], list[int]]] = []
    for as_words, n in calls:
        if as_words:
            got = draws.words(n)
            assert got.dtype == np.uint32
            assert got.tolist() == numpy_rng.integers(0, 2**32, size=n, dtype=np.uint32).tolist()
            given.append((got, got.tolist()))
        else:
            assert draws.integers(n + 1) == int(numpy_rng.integers(n + 1))
    assert all(got.tolist() == words for got, words in given)


def test_host_draws_refuse_a_range_numpy_would_draw_differently() -> None:
    draws = HostDraws(np.random.default_rng(0))
    for n in (0, 2**32 + 1):
        try:
            draws.integers(n)
        except ValueError as exc:
            assert str(n) in str(exc)
        else:
            raise AssertionError(f"{n} drawn")


class ScoresEveryWindow(Scheduler):
    """The reference: every window scored, never the bisection in the top nodes."""

    def _window_top(
        self, name: str, cache: ShapeCache, top: list[int], want: int, n: int, choose: bool = False
    ) -> Best:
        return self._window_scored(name, cache, want)


def _run(
    cls: type[Scheduler], gpus: list[int], waves: list[list[tuple[int, int]]], pct: int | None
) -> list[str]:
    state = ClusterState([gpu_node(f"n{i:04d}", g) for i, g in enumerate(gpus)])
    profile = ProfileConfig("default-scheduler", percentage_of_nodes_to_score=pct)
    scheduler = cls(SchedulerConfig("default-scheduler", profiles=[profile]), state, GangView(state), seed=7)
    seen: list[Outcome] = []
    for w, wave in enumerate(waves):
        for j, (kind, size) in enumerate(wave):
            name = f"w{w}-{j}"
            pod = gpu_pod(name, size) if kind else Pod(name, gpu_share=GpuShare(compute_milli=250 * size))
            scheduler.add(pod, float(w))
        seen += scheduler.run(float(w))
        for key in sorted(state.assignments)[:: 3 + w]:  # some pods end: nodes score higher again
            state.unassign(key)
        scheduler.cluster_event(EVERYTHING, float(w))
    return [f"{o.pod.key} {o.kind} {o.node} {o.message}" for o in seen]


@settings(max_examples=8, deadline=None)
@given(
    st.lists(st.sampled_from([1, 2, 4, 8, 8]), min_size=120, max_size=260),
    st.lists(
        st.lists(st.tuples(st.integers(0, 1), st.sampled_from([1, 2, 4, 8])), min_size=20, max_size=250),
        min_size=1,
        max_size=3,
    ),
    st.sampled_from([None, 10, 40, 70]),
)
def test_the_window_by_bisection_picks_what_scoring_the_window_picks(
    gpus: list[int], waves: list[list[tuple[int, int]]], pct: int | None
) -> None:
    assert num_feasible_nodes_to_find(pct, len(gpus)) < len(gpus)  # the window is smaller than the cluster
    assert _run(Scheduler, gpus, waves, pct) == _run(ScoresEveryWindow, gpus, waves, pct)


def test_the_adaptive_window_moves_on_from_where_the_last_cycle_stopped() -> None:
    """300 empty nodes: the adaptive window is 144 nodes (48%); every node scores the same, so each pod
    goes to a node of the window that starts after the last one looked at (``nextStartNodeIndex``)."""
    state = ClusterState([gpu_node(f"n{i:03d}") for i in range(300)])
    scheduler = Scheduler(SchedulerConfig("default-scheduler"), state, GangView(state), seed=1)
    windows = []
    for j in range(4):
        scheduler.add(gpu_pod(f"p{j}", 1), 0.0)
        start = scheduler.next_start.get("default-scheduler", 0)
        (outcome,) = scheduler.run(0.0)
        windows.append((start, state.index[str(outcome.node)]))
    assert [start for start, _ in windows] == [0, 144, 288, 132]
    for start, node in windows:
        assert (node - start) % 300 < 144


def test_a_window_drawn_from_binds_one_of_the_ties_that_decide_reports() -> None:
    """A cycle that binds draws among the window's top nodes itself (no view of them is built); ``decide``
    reports them all, moves no window, and the pod then goes to one of them."""
    state = ClusterState([gpu_node(f"n{i:03d}") for i in range(300)])
    scheduler = Scheduler(SchedulerConfig("default-scheduler"), state, GangView(state), seed=3)
    for j in range(5):
        pod = gpu_pod(f"p{j}", 1)
        ties = scheduler.decide(pod).nodes
        scheduler.add(pod, 0.0)
        (outcome,) = scheduler.run(0.0)
        assert len(ties) > 1 and outcome.node in ties
