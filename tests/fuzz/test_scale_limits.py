"""A scenario that asks for more nodes, pods, samples or runs than the simulator's limits
(``kube.scale_budget``, ``experiments.runs.MAX_RUNS``) is refused as it is loaded, in one line naming
its document and field, before anything is built: no hang, no memory blow-up. Within the limits it
loads."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpufleet.experiments.commands import load_any_grid
from gpufleet.experiments.grid import GridError
from gpufleet.experiments.whatif import load_sides
from gpufleet.kube import ScenarioError, load_scenario
from gpufleet.kube.scale_budget import (
    MAX_NODES,
    MAX_PODS,
    MAX_SAMPLES,
    MAX_WORK_ITEMS,
    MAX_WORKLOAD_PODS,
    MAX_WORKLOAD_RUNS,
)
from gpufleet.model.scenario import Scenario

ROOT = Path(__file__).resolve().parents[2]
FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
LIMIT = "exceeds the simulator's limit of"
CONTAINER = "containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]"

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {{name: web}}
spec:
  replicas: {n}
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec: {{{container}}}
"""
JOB = """apiVersion: batch/v1
kind: Job
metadata: {{name: train}}
spec:
  parallelism: {parallelism}
  completions: {completions}
  template:
    metadata: {{annotations: {{gpufleet.io/duration: 1h}}}}
    spec: {{restartPolicy: Never, {container}}}
"""
POOL = """apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {{name: h100}}
spec:
  replicas: {replicas}
  warm: {warm}
  template:
    status: {{capacity: {{cpu: "96", memory: 1Ti, pods: "110", nvidia.com/gpu: "8"}}}}
"""
LWS = """apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {{name: vllm}}
spec:
  replicas: {replicas}
  leaderWorkerTemplate:
    size: {size}
    workerTemplate:
      spec: {{{container}}}
"""
JOBSET = """apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {{name: pretrain}}
spec:
  replicatedJobs:
  - name: trainer
    replicas: {replicas}
    template:
      spec:
        parallelism: {parallelism}
        completions: {parallelism}
        template:
          metadata: {{annotations: {{gpufleet.io/duration: 1h}}}}
          spec: {{restartPolicy: Never, {container}}}
"""
HPA = """apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {{name: web}}
spec:
  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}
  minReplicas: 1
  maxReplicas: {n}
  metrics:
  - type: Resource
    resource: {{name: cpu, target: {{type: Utilization, averageUtilization: 50}}}}
"""
FEED = """apiVersion: gpufleet.io/v1alpha1
kind: QueueFeed
metadata: {{name: jobs}}
spec:
  list: train:jobs
  items: [{{at: 0s, count: {count}, work: 1m}}]
  rate: {{perHour: {per_hour}, work: 1m}}
"""
SIMULATION = """apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {{name: s}}
spec: {spec}
"""


def fill(template: str, **values: object) -> str:
    return template.format(container=CONTAINER, **values)


def _load(tmp_path: Path, *texts: str) -> Scenario:
    path = tmp_path / "scenario.yaml"
    path.write_text("---\n".join(texts))
    return load_scenario([path])


def _refusal(tmp_path: Path, *texts: str) -> list[str]:
    with pytest.raises(ScenarioError) as caught:
        _load(tmp_path, *texts)
    return caught.value.problems


def test_a_deployment_of_two_billion_replicas_is_refused_naming_the_field(tmp_path: Path) -> None:
    assert _refusal(tmp_path, fill(DEPLOYMENT, n=2**31 - 1)) == [
        f"{tmp_path / 'scenario.yaml'}: document 1 (Deployment/default/web): spec.replicas: "
        "2,147,483,647 pods at once exceeds the simulator's limit of 100,000 pods per workload "
        "(docs/fuzzing.md, Limits)"
    ]


def test_a_node_pool_of_a_billion_nodes_is_refused_without_listing_them(tmp_path: Path) -> None:
    (line,) = _refusal(tmp_path, fill(POOL, replicas=10**9, warm=0))
    assert line.endswith(
        "(NodePool/h100): spec.replicas: 1,000,000,000 nodes at the start bring the scenario to "
        "1,000,000,000, which exceeds the simulator's limit of 100,000 nodes (docs/fuzzing.md, Limits)"
    )


@pytest.mark.parametrize(
    ("text", "field"),
    [
        (fill(DEPLOYMENT, n=MAX_WORKLOAD_PODS + 1), "spec.replicas"),
        (fill(JOB, parallelism=MAX_WORKLOAD_PODS + 1, completions=MAX_WORKLOAD_PODS + 1), "spec.parallelism"),
        (fill(JOB, parallelism=1, completions=MAX_WORKLOAD_RUNS + 1), "spec.completions"),
        (fill(POOL, replicas=MAX_NODES, warm=1), "spec.replicas"),
        (fill(LWS, replicas=1000, size=101), "spec.replicas"),
        (fill(JOBSET, replicas=1001, parallelism=100), "spec.replicatedJobs"),
        (fill(DEPLOYMENT, n=1) + "---\n" + fill(HPA, n=MAX_WORKLOAD_PODS + 1), "spec.maxReplicas"),
        (fill(SIMULATION, spec="{duration: 2562047h}"), "spec.duration"),
        (fill(FEED, count=MAX_WORK_ITEMS + 1, per_hour=1), "spec"),
        (
            fill(FEED, count=0, per_hour=MAX_WORK_ITEMS) + "---\n" + fill(SIMULATION, spec="{duration: 2h}"),
            "spec",
        ),
        (fill(SIMULATION, spec="{sampleInterval: 1ms}"), "spec.sampleInterval"),
    ],
    ids=[
        "replicas",
        "parallelism",
        "completions",
        "pool",
        "lws",
        "jobset",
        "hpa",
        "duration",
        "feed-items",
        "feed-rate",
        "samples",
    ],
)
def test_one_past_a_limit_is_refused_at_its_field(tmp_path: Path, text: str, field: str) -> None:
    (line,) = _refusal(tmp_path, text)
    assert f": {field}: " in line and LIMIT in line


@pytest.mark.parametrize(
    "text",
    [
        fill(DEPLOYMENT, n=MAX_WORKLOAD_PODS),
        fill(JOB, parallelism=MAX_WORKLOAD_PODS, completions=MAX_WORKLOAD_RUNS),
        fill(POOL, replicas=MAX_NODES - 10, warm=10),
        fill(LWS, replicas=1000, size=100),
        fill(SIMULATION, spec=f"{{duration: {MAX_SAMPLES}s, sampleInterval: 1s}}"),
        fill(FEED, count=MAX_WORK_ITEMS // 2, per_hour=MAX_WORK_ITEMS // 2)
        + "---\n"
        + fill(SIMULATION, spec="{duration: 1h}"),
    ],
    ids=["replicas", "job", "pool", "lws", "samples", "feed"],
)
def test_at_a_limit_the_scenario_loads(tmp_path: Path, text: str) -> None:
    _load(tmp_path, text)


def test_the_pods_of_every_workload_together_are_bounded(tmp_path: Path) -> None:
    many = MAX_PODS // MAX_WORKLOAD_PODS + 1
    texts = [
        fill(DEPLOYMENT, n=MAX_WORKLOAD_PODS).replace("name: web", f"name: web-{i}") for i in range(many)
    ]
    (line,) = _refusal(tmp_path, *texts)
    where = f"document {many} (Deployment/default/web-{many - 1}): spec: "
    assert where + "100,000 pods at once bring the scenario to 1,100,000" in line
    assert LIMIT in line


@FAST
@given(
    st.sampled_from(
        ["deployment", "parallelism", "completions", "pool", "warm", "lws", "jobset", "hpa", "feed"]
    ),
    st.one_of(st.integers(MAX_WORKLOAD_RUNS + 1, 2**31 - 1), st.integers(2**31, 2**64)),
)
def test_every_count_field_of_a_huge_value_is_refused(tmp_path: Path, field: str, n: int) -> None:
    """Values above the limits, up to int32's (the API's) and beyond: a refusal, never a build."""
    text = {
        "deployment": fill(DEPLOYMENT, n=n),
        "parallelism": fill(JOB, parallelism=n, completions=1),
        "completions": fill(JOB, parallelism=1, completions=n),
        "pool": fill(POOL, replicas=n, warm=0),
        "warm": fill(POOL, replicas=0, warm=n),
        "lws": fill(LWS, replicas=2, size=n),
        "jobset": fill(JOBSET, replicas=n, parallelism=1),
        "hpa": fill(DEPLOYMENT, n=1) + "---\n" + fill(HPA, n=n),
        "feed": fill(FEED, count=n, per_hour=1),
    }[field]
    if field == "parallelism":  # a Job's pods at once are its parallelism up to its completions
        text = fill(JOB, parallelism=n, completions=n)
    problems = _refusal(tmp_path, text)
    assert all(len(line.splitlines()) == 1 for line in problems)


def test_a_change_adding_a_billion_nodes_is_refused(tmp_path: Path) -> None:
    change = tmp_path / "change.yaml"
    change.write_text(
        "apiVersion: gpufleet.io/v1alpha1\nkind: Change\nmetadata: {name: more}\n"
        "spec:\n  addNodes:\n  - {like: ip-10-0-1-17, count: 1000000000}\n"
    )
    with pytest.raises(ScenarioError) as caught:
        load_sides([ROOT / "examples" / "whatif" / "last-week"], [change], None)
    assert any(LIMIT in line and "nodes" in line for line in caught.value.problems)


@pytest.mark.parametrize(
    ("grid", "runs"),
    [
        (
            "traces: [" + ", ".join(f"t{i}.csv" for i in range(10)) + "]\npolicies: [FGD, BestFit]\n"
            "seeds: 1-10000\nnodes: n.csv\n",
            "200,000 runs (10 x 2 x 10,000)",
        ),
        (
            "scenario: s.yaml\nseeds: 1-10000\nparameters:\n"
            "  NodePool/p.spec.warm: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n",
            "110,000 runs (11 x 10,000)",
        ),
        (
            "scenario: s.yaml\nparameters:\n"
            + "".join(f"  NodePool/p{i}.spec.warm: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\n" for i in range(20)),
            "100,000,000,000,000,000,000 runs",
        ),
    ],
    ids=["trace-grid", "scenario-grid", "billions"],
)
def test_a_grid_of_more_runs_than_the_limit_is_refused_before_listing_them(
    tmp_path: Path, grid: str, runs: str | None
) -> None:
    for name in ("n.csv", "s.yaml", *(f"t{i}.csv" for i in range(10))):
        (tmp_path / name).write_text("")
    path = tmp_path / "grid.yaml"
    path.write_text(grid)
    with pytest.raises(GridError) as caught:
        load_any_grid(path)
    line = next(line for line in caught.value.problems if ": runs: " in line)
    assert "exceed the limit of 100,000 runs per grid" in line
    assert runs is None or runs in line
