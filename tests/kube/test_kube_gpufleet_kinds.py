"""gpufleet.io/v1alpha1 Simulation and NodePool."""

from __future__ import annotations

from pathlib import Path

from kube_manifests import load, problems, warnings
from typer.testing import CliRunner

from gpufleet.autoscaling.expanders import EXPANDERS
from gpufleet.cli import app
from gpufleet.model.simulation import AutoscalerSettings, SimulationSettings, Stock


def simulation(spec: str) -> str:
    return f"apiVersion: gpufleet.io/v1alpha1\nkind: Simulation\nmetadata: {{name: s}}\nspec: {spec}\n"


def pool(spec: str, name: str = "gpu") -> str:
    return f"apiVersion: gpufleet.io/v1alpha1\nkind: NodePool\nmetadata: {{name: {name}}}\nspec: {spec}\n"


TEMPLATE = "template: {status: {capacity: {cpu: '8', nvidia.com/gpu: '1'}}}"


def test_simulation_defaults(tmp_path: Path) -> None:
    assert load(tmp_path, simulation("{}")).simulation == SimulationSettings(None, 0, 10.0)
    bare = "apiVersion: gpufleet.io/v1alpha1\nkind: Simulation\n"
    assert load(tmp_path, bare).simulation == SimulationSettings()


def test_simulation_errors(tmp_path: Path) -> None:
    text = (
        simulation("{duration: forever, seed: -1, sampleInterval: 0s, colour: blue}")
        + "---\n"
        + simulation("{}")
    )
    label = "scenario.yaml: document 1 (Simulation/s)"
    assert problems(tmp_path, text) == [
        f"{label}: spec.duration: invalid duration 'forever' (use Go syntax such as '90s', '20m', '2h')",
        f"{label}: spec.seed: Invalid value: -1: must be greater than or equal to 0",
        f'{label}: spec.sampleInterval: Invalid value: "0s": must be greater than 0',
        f"{label}: spec.colour: Additional properties are not allowed ('colour' was unexpected)",
        "scenario.yaml: document 2 (Simulation/s): at most one Simulation may be given; the first is "
        "scenario.yaml: document 1",
    ]


def test_storage_registry_and_autoscaler_settings(tmp_path: Path) -> None:
    good = simulation(
        "{storage: {bandwidth: 10GB/s}, registry: {bandwidth: 500Mi/s}, autoscaler: {scanInterval: 30s, "
        "expander: 'least-waste,random', scaleDownUtilizationThreshold: 0.3, "
        "scaleDownGpuUtilizationThreshold: 0.7, ignoreDaemonsetsUtilization: true, "
        "maxNodeGroupBackoffDuration: 10m, nodeGroupBackoffResetTimeout: 1h, maxNodesPerScaleup: 50}}"
    )
    settings = load(tmp_path, good).simulation
    assert (settings.storage_bandwidth, settings.registry_bandwidth) == (10e9, 500 * 2**20)
    assert settings.autoscaler == AutoscalerSettings(
        scan_interval_s=30.0,
        expander="least-waste,random",
        scale_down_utilization_threshold=0.3,
        scale_down_gpu_utilization_threshold=0.7,
        ignore_daemonsets_utilization=True,
        max_backoff_s=600.0,
        backoff_reset_s=3600.0,
        max_nodes_per_scale_up=50,
    )
    assert warnings(tmp_path, good) == []
    assert load(tmp_path, simulation("{}")).simulation.autoscaler == AutoscalerSettings()


def test_storage_and_autoscaler_errors(tmp_path: Path) -> None:
    bad = simulation("{storage: {bandwidth: 10GB}, autoscaler: {expander: cheapest, maxNodesTotal: '5'}}")
    label = "scenario.yaml: document 1 (Simulation/s)"
    supported = ", ".join(f'"{name}"' for name in EXPANDERS)
    assert problems(tmp_path, bad) == [
        f"{label}: spec.storage.bandwidth: a bandwidth is a size per second such as '10GB/s', not '10GB'",
        f'{label}: spec.autoscaler.expander: Unsupported value: "cheapest": supported values: {supported}',
        f'{label}: spec.autoscaler.maxNodesTotal: Invalid value: "5": must be an integer',
    ]


def test_the_simulation_reads_the_resource_limit_flags(tmp_path: Path) -> None:
    """``coresTotal``, ``memoryTotal`` (``<min>:<max>``, GiB) and ``gpuTotal`` (``<type>:<min>:<max>``) as
    cluster-autoscaler's ``--cores-total``, ``--memory-total`` and ``--gpu-total``; their maxima are kept."""
    text = simulation(
        "{autoscaler: {coresTotal: '0:1000', memoryTotal: '0:4096', "
        "gpuTotal: ['NVIDIA-H100-80GB-HBM3:0:64']}}"
    )
    assert load(tmp_path, text).simulation.autoscaler == AutoscalerSettings(
        max_cores_total=1000, max_memory_total=4096 * 2**30, gpu_total=(("NVIDIA-H100-80GB-HBM3", 64),)
    )


def test_a_resource_limit_minimum_above_zero_is_a_warning_that_scale_down_is_not_bounded(
    tmp_path: Path,
) -> None:
    """The minima bound scale-down (``ResourceLimiter.GetMin``), which gpufleet does not model: said, not
    dropped in silence; the maxima are kept."""
    label = "scenario.yaml: document 1 (Simulation/s): spec.autoscaler"
    text = simulation("{autoscaler: {coresTotal: '8:1000', memoryTotal: '0:64', gpuTotal: ['h100:2:16']}}")
    settings = load(tmp_path, text).simulation.autoscaler
    assert (settings.max_cores_total, settings.gpu_total) == (1000, (("h100", 16),))
    unbounded = "bounds scale-down, which gpufleet does not model: only the maximum is kept"
    assert warnings(tmp_path, text) == [
        f"{label}.coresTotal: the minimum 8 {unbounded}",
        f"{label}.gpuTotal[0]: the minimum 2 of h100 {unbounded}",
    ]


def test_a_cores_or_memory_total_is_min_colon_max_in_parse_min_max_flags_words(tmp_path: Path) -> None:
    """``parseMinMaxFlag`` and ``validateMinMaxFlag`` (cluster-autoscaler's flags.go)."""
    label = "scenario.yaml: document 1 (Simulation/s): spec.autoscaler.coresTotal"
    for flag, error in [
        ("64", "wrong nodes configuration: 64"),
        ("a:64", "failed to set min size: a, expected integer"),
        ("0:lots", "failed to set max size: lots, expected integer"),
        ("-1:64", "min size must be greater or equal to  0"),
        ("65:64", "max size must be greater or equal to min size"),
    ]:
        assert problems(tmp_path, simulation(f"{{autoscaler: {{coresTotal: '{flag}'}}}}")) == [
            f"{label}: {error}"
        ]


def test_the_simulation_reads_the_balancing_flags(tmp_path: Path) -> None:
    """``balanceSimilarNodeGroups`` and ``balancingIgnoreLabel`` (each label) as the flags."""
    text = simulation(
        "{autoscaler: {balanceSimilarNodeGroups: true, balancingIgnoreLabel: [example.com/ready]}}"
    )
    assert load(tmp_path, text).simulation.autoscaler == AutoscalerSettings(
        balance_similar_node_groups=True, balancing_ignore_labels=("example.com/ready",)
    )


def test_a_gpu_limit_is_type_min_max_with_min_not_above_max(tmp_path: Path) -> None:
    """``parseSingleGpuLimit``'s errors, the first one found."""
    label = "scenario.yaml: document 1 (Simulation/s): spec.autoscaler.gpuTotal"
    for limit, error in [
        ("h100:0", "incorrect gpu limit specification: h100:0"),
        ("h100:x:4", "incorrect gpu limit - min is not integer: h100:x:4"),
        ("h100:0:-4", "incorrect gpu limit - max is less than 0; h100:0:-4"),
        ("h100:5:4", "incorrect gpu limit - min is greater than max; h100:5:4"),
    ]:
        assert problems(tmp_path, simulation(f"{{autoscaler: {{gpuTotal: ['{limit}']}}}}")) == [
            f"{label}: {error}"
        ]


def test_node_pool_template_becomes_a_node_and_no_nodes_are_stamped(tmp_path: Path) -> None:
    text = pool(
        "{replicas: 3, template: {metadata: {labels: {pool: gpu}}, "
        "spec: {taints: [{key: g, effect: NoSchedule}]}, "
        "status: {capacity: {cpu: '8', nvidia.com/gpu: '1'}}}}"
    )
    scenario = load(tmp_path, text)
    (gpu,) = scenario.node_pools
    assert (gpu.name, gpu.replicas) == ("gpu", 3)
    assert gpu.template.name == "gpu"
    assert gpu.template.labels == {"pool": "gpu"}  # each stamped node gets its own hostname
    assert gpu.template.allocatable == {"cpu": 8000, "nvidia.com/gpu": 1, "pods": 110}
    assert scenario.nodes == []


def test_node_pool_autoscaling_fields(tmp_path: Path) -> None:
    text = pool(
        f"{{{TEMPLATE}, min: 1, max: 4, warm: 1, pricePerHour: 98.3,"
        " provisioning: {capacityWait: {median: 2m, p95: 10m}, boot: 90s, driver: {min: 3m, max: 5m}, "
        "join: 20s, devicePlugin: 30s},"
        " stock: {stockoutProbability: 0.1, available: [{at: 1h, count: 4}]}}"
    )
    (gpu,) = load(tmp_path, text).node_pools
    assert (gpu.min, gpu.max, gpu.warm, gpu.price_per_hour) == (1, 4, 1, 98.3)
    assert gpu.autoscaled
    # Stages keep their order and their specs as written; the simulator parses them.
    assert gpu.provisioning == (
        ("capacityWait", {"median": "2m", "p95": "10m"}),
        ("boot", "90s"),
        ("driver", {"min": "3m", "max": "5m"}),
        ("join", "20s"),
        ("devicePlugin", "30s"),
    )
    assert gpu.stock == Stock(0.1, ((3600.0, 4),))
    assert warnings(tmp_path, text) == []


def test_node_pool_defaults(tmp_path: Path) -> None:
    (gpu,) = load(tmp_path, pool(f"{{{TEMPLATE}}}")).node_pools
    assert (gpu.replicas, gpu.min, gpu.max, gpu.warm, gpu.price_per_hour) == (0, 0, None, 0, 0.0)
    assert (gpu.provisioning, gpu.stock, gpu.autoscaled) == ((), Stock(), False)


def test_node_pool_errors(tmp_path: Path) -> None:
    text = pool(
        "{replicas: 5, max: 2, min: 3, provisioning: {devicePlugin: 30s, boot: 1m, reboot: 5s},"
        " template: {status: {capacity: {}}, spec: {taint: []}}}"
    )
    label = "scenario.yaml: document 1 (NodePool/gpu)"
    assert problems(tmp_path, text) == [
        f"{label}: spec.provisioning: devicePlugin (GPUs allocatable) must be the last stage",
        f"{label}: spec.min: Invalid value: 3: must be less than or equal to max (2)",
        f"{label}: spec.replicas: Invalid value: 5: must be less than or equal to max (2)",
        f"{label}: spec.template.spec.taint: Additional properties are not allowed ('taint' was unexpected)",
        f"{label}: spec.template.status.capacity: a node needs capacity (cpu, memory, pods, ...)",
    ]


def test_node_pool_needs_a_spec_and_node_names_must_not_collide_with_its_nodes(tmp_path: Path) -> None:
    assert problems(tmp_path, "apiVersion: gpufleet.io/v1alpha1\nkind: NodePool\nmetadata: {name: p}\n") == [
        "scenario.yaml: document 1 (NodePool/p): spec: Required value"
    ]
    node = "apiVersion: v1\nkind: Node\nmetadata: {name: gpu-1}\nstatus: {capacity: {cpu: '1'}}\n"
    assert problems(tmp_path, pool(f"{{{TEMPLATE}}}") + "---\n" + node) == [
        'scenario.yaml: document 2 (Node/gpu-1): metadata.name: Duplicate value: "gpu-1": NodePool gpu '
        "names its nodes gpu-<n>"
    ]


def test_a_pool_template_taint_or_toleration_field_of_the_wrong_type_is_one_line(tmp_path: Path) -> None:
    """A NodePool's template is read outside the Kubernetes schema: a taint key that is not a string
    is reported (found by the robustness property test), not a traceback."""
    spec = (
        "{replicas: 1, template: {spec: {taints: [{key: [x], effect: NoSchedule}]}, "
        "status: {capacity: {cpu: '8', memory: 8Gi}}}}"
    )
    assert problems(tmp_path, pool(spec)) == [
        "scenario.yaml: document 1 (NodePool/gpu): spec.template.spec.taints[0].key: "
        'Invalid value: ["x"]: must be a string'
    ]


def test_scale_down_unready_settings_and_their_errors(tmp_path: Path) -> None:
    """``--scale-down-unready-enabled`` (default true) and ``--scale-down-unready-time`` (default 20m,
    ``config.DefaultScaleDownUnreadyTime``) as ``scaleDownUnreadyEnabled`` and ``scaleDownUnreadyTime``;
    a value of the wrong kind is a field error."""
    defaults = AutoscalerSettings()
    assert (defaults.scale_down_unready_enabled, defaults.scale_down_unready_time_s) == (True, 1200.0)
    good = simulation("{autoscaler: {scaleDownUnreadyEnabled: false, scaleDownUnreadyTime: 30m}}")
    assert load(tmp_path, good).simulation.autoscaler == AutoscalerSettings(
        scale_down_unready_enabled=False, scale_down_unready_time_s=1800.0
    )
    assert warnings(tmp_path, good) == []
    bad = simulation("{autoscaler: {scaleDownUnreadyEnabled: maybe, scaleDownUnreadyTime: soon}}")
    label = "scenario.yaml: document 1 (Simulation/s)"
    assert problems(tmp_path, bad) == [
        f'{label}: spec.autoscaler.scaleDownUnreadyEnabled: Invalid value: "maybe": must be a boolean',
        f"{label}: spec.autoscaler.scaleDownUnreadyTime: invalid duration 'soon' (use Go syntax such as "
        "'90s', '20m', '2h')",
    ]


def test_the_simulation_reads_the_unready_limits_of_autoscaling(tmp_path: Path) -> None:
    """``--ok-total-unready-count`` (3) and ``--max-total-unready-percentage`` (45) as
    ``okTotalUnreadyCount`` and ``maxTotalUnreadyPercentage`` (``IsClusterHealthy``, ``IsNodeGroupHealthy``);
    a negative count is a field error."""
    defaults = AutoscalerSettings()
    assert (defaults.ok_total_unready_count, defaults.max_total_unready_percentage) == (3, 45.0)
    good = simulation("{autoscaler: {okTotalUnreadyCount: 0, maxTotalUnreadyPercentage: 20}}")
    assert load(tmp_path, good).simulation.autoscaler == AutoscalerSettings(
        ok_total_unready_count=0, max_total_unready_percentage=20.0
    )
    assert warnings(tmp_path, good) == []
    assert len(problems(tmp_path, simulation("{autoscaler: {okTotalUnreadyCount: -1}}"))) == 1


def test_the_simulation_reads_the_scale_down_parallelism_flags(tmp_path: Path) -> None:
    """``maxScaleDownParallelism`` and ``maxDrainParallelism`` as cluster-autoscaler's
    ``--max-scale-down-parallelism`` (10) and ``--max-drain-parallelism`` (1); 0 is a value (no deletion, or
    no drain, at all)."""
    text = simulation("{autoscaler: {maxScaleDownParallelism: 20, maxDrainParallelism: 0}}")
    assert load(tmp_path, text).simulation.autoscaler == AutoscalerSettings(
        max_scale_down_parallelism=20, max_drain_parallelism=0
    )
    defaults = AutoscalerSettings()
    assert (defaults.max_scale_down_parallelism, defaults.max_drain_parallelism) == (10, 1)


def test_the_scale_down_parallelism_flags_are_integers_not_below_zero(tmp_path: Path) -> None:
    label = "scenario.yaml: document 1 (Simulation/s): spec.autoscaler"
    text = simulation("{autoscaler: {maxScaleDownParallelism: -1, maxDrainParallelism: '2'}}")
    assert problems(tmp_path, text) == [
        f"{label}.maxScaleDownParallelism: Invalid value: -1: must be greater than or equal to 0",
        f'{label}.maxDrainParallelism: Invalid value: "2": must be an integer',
    ]
    assert problems(tmp_path, simulation("{autoscaler: {maxDrainParallelism: 1.5}}")) == [
        f"{label}.maxDrainParallelism: Invalid value: 1.5: must be an integer"
    ]


def test_zero_or_max_node_scaling_is_read_and_must_be_a_boolean_with_max(tmp_path: Path) -> None:
    """``zeroOrMaxNodeScaling`` (cluster-autoscaler's ``ZeroOrMaxNodeScaling``): false by default; not a
    boolean, or without ``max`` (a pool that does not autoscale), a field error."""
    (pool_default,) = load(tmp_path, pool(f"{{max: 2, {TEMPLATE}}}")).node_pools
    assert pool_default.zero_or_max_node_scaling is False
    (atomic,) = load(tmp_path, pool(f"{{max: 2, zeroOrMaxNodeScaling: true, {TEMPLATE}}}")).node_pools
    assert atomic.zero_or_max_node_scaling is True
    label = "scenario.yaml: document 1 (NodePool/gpu)"
    assert problems(tmp_path, pool(f"{{max: 2, zeroOrMaxNodeScaling: 'yes', {TEMPLATE}}}")) == [
        f'{label}: spec.zeroOrMaxNodeScaling: Invalid value: "yes": must be a boolean'
    ]
    assert problems(tmp_path, pool(f"{{zeroOrMaxNodeScaling: true, {TEMPLATE}}}")) == [
        f"{label}: spec.zeroOrMaxNodeScaling: Invalid value: true: a pool that scales from zero to its max "
        "size at once needs max"
    ]


def test_cli_validate_exits_2_on_a_zero_or_max_node_scaling_of_the_wrong_type(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(pool(f"{{max: 2, zeroOrMaxNodeScaling: 1, {TEMPLATE}}}"))
    result = CliRunner().invoke(app, ["validate", str(bad)])
    assert result.exit_code == 2
    assert f"{bad}: document 1 (NodePool/gpu): spec.zeroOrMaxNodeScaling: Invalid value: 1:" in result.output
    assert "Traceback" not in result.output


def test_the_simulation_reads_the_expendable_pods_priority_cutoff(tmp_path: Path) -> None:
    """``expendablePodsPriorityCutoff`` as cluster-autoscaler's ``--expendable-pods-priority-cutoff`` (-10; a
    Go ``int`` flag: any integer, negative too); a string, a fraction or a number past 64 bits is a field
    error."""
    assert AutoscalerSettings().expendable_pods_priority_cutoff == -10
    good = simulation("{autoscaler: {expendablePodsPriorityCutoff: -100}}")
    assert load(tmp_path, good).simulation.autoscaler == AutoscalerSettings(
        expendable_pods_priority_cutoff=-100
    )
    assert warnings(tmp_path, good) == []
    label = "scenario.yaml: document 1 (Simulation/s): spec.autoscaler.expendablePodsPriorityCutoff"
    assert problems(tmp_path, simulation("{autoscaler: {expendablePodsPriorityCutoff: '-5'}}")) == [
        f'{label}: Invalid value: "-5": must be an integer'
    ]
    assert problems(tmp_path, simulation("{autoscaler: {expendablePodsPriorityCutoff: 0.5}}")) == [
        f"{label}: Invalid value: 0.5: must be an integer"
    ]
    assert (
        len(problems(tmp_path, simulation(f"{{autoscaler: {{expendablePodsPriorityCutoff: {2**63}}}}}"))) == 1
    )


def test_the_simulation_reads_the_scale_down_tuning_flags(tmp_path: Path) -> None:
    """cluster-autoscaler's ``--scale-down-enabled`` (true), ``--scale-down-delay-after-delete`` (0),
    ``--scale-down-delay-after-failure`` (3m), ``--new-pod-scale-up-delay`` (0),
    ``--max-graceful-termination-sec`` (600, a Go ``int``: 0 or less cuts no grace period),
    ``--skip-nodes-with-system-pods`` and ``--skip-nodes-with-custom-controller-pods`` (true), camelCased."""
    defaults = AutoscalerSettings()
    assert (
        defaults.scale_down_enabled,
        defaults.scale_down_delay_after_delete_s,
        defaults.scale_down_delay_after_failure_s,
        defaults.new_pod_scale_up_delay_s,
        defaults.max_graceful_termination_s,
        defaults.skip_nodes_with_system_pods,
        defaults.skip_nodes_with_custom_controller_pods,
    ) == (True, 0.0, 180.0, 0.0, 600, True, True)
    good = simulation(
        "{autoscaler: {scaleDownEnabled: false, scaleDownDelayAfterDelete: 5m, "
        "scaleDownDelayAfterFailure: 1m, newPodScaleUpDelay: 30s, maxGracefulTerminationSec: -1, "
        "skipNodesWithSystemPods: false, skipNodesWithCustomControllerPods: false}}"
    )
    assert load(tmp_path, good).simulation.autoscaler == AutoscalerSettings(
        scale_down_enabled=False,
        scale_down_delay_after_delete_s=300.0,
        scale_down_delay_after_failure_s=60.0,
        new_pod_scale_up_delay_s=30.0,
        max_graceful_termination_s=-1,
        skip_nodes_with_system_pods=False,
        skip_nodes_with_custom_controller_pods=False,
    )
    assert warnings(tmp_path, good) == []


def test_the_scale_down_tuning_flags_of_the_wrong_type_are_field_errors(tmp_path: Path) -> None:
    label = "scenario.yaml: document 1 (Simulation/s): spec.autoscaler"
    text = simulation(
        "{autoscaler: {scaleDownEnabled: 'no', scaleDownDelayAfterDelete: soon, newPodScaleUpDelay: -5, "
        "maxGracefulTerminationSec: 1.5, skipNodesWithSystemPods: 1}}"
    )
    assert problems(tmp_path, text) == [
        f'{label}.scaleDownEnabled: Invalid value: "no": must be a boolean',
        f"{label}.scaleDownDelayAfterDelete: invalid duration 'soon' "
        "(use Go syntax such as '90s', '20m', '2h')",
        f"{label}.newPodScaleUpDelay: durations must not be negative: -5",
        f"{label}.maxGracefulTerminationSec: Invalid value: 1.5: must be an integer",
        f"{label}.skipNodesWithSystemPods: Invalid value: 1: must be a boolean",
    ]


def test_the_candidates_pool_flags_are_accepted_with_a_warning_that_they_change_nothing(
    tmp_path: Path,
) -> None:
    """``--scale-down-non-empty-candidates-count``, ``--scale-down-candidates-pool-ratio`` and
    ``--scale-down-candidates-pool-min-count`` reach cluster-autoscaler 1.34.5's ``AutoscalingOptions`` and no
    code reads them (the planner bounds its simulations with ``unneededNodesLimit``, modelled): accepted,
    each with a warning; of the wrong type, a field error."""
    text = simulation(
        "{autoscaler: {scaleDownNonEmptyCandidatesCount: 5, scaleDownCandidatesPoolRatio: 0.5, "
        "scaleDownCandidatesPoolMinCount: 10}}"
    )
    assert load(tmp_path, text).simulation.autoscaler == AutoscalerSettings()
    said = "cluster-autoscaler 1.34 reads this flag nowhere: it changes nothing"
    assert [w for w in warnings(tmp_path, text) if said in w] == [
        f"scenario.yaml: document 1 (Simulation/s): spec.autoscaler.{field}: {said}"
        for field in (
            "scaleDownNonEmptyCandidatesCount",
            "scaleDownCandidatesPoolRatio",
            "scaleDownCandidatesPoolMinCount",
        )
    ]
    bad = simulation("{autoscaler: {scaleDownNonEmptyCandidatesCount: '30'}}")
    assert problems(tmp_path, bad) == [
        "scenario.yaml: document 1 (Simulation/s): spec.autoscaler.scaleDownNonEmptyCandidatesCount: "
        'Invalid value: "30": must be an integer'
    ]


def test_the_simulation_reads_the_drain_priority_config_and_max_pod_eviction_time(tmp_path: Path) -> None:
    """cluster-autoscaler's ``--drain-priority-config`` (``priority:seconds`` pairs, ``,``-separated, as
    given: the evictor sorts them), ``--max-pod-eviction-time`` (2 minutes by default) and
    ``--node-deletion-batcher-interval`` (0), camelCased."""
    defaults = AutoscalerSettings()
    assert (
        defaults.drain_priority_config,
        defaults.max_pod_eviction_time_s,
        defaults.node_deletion_batcher_interval_s,
    ) == ((), 120.0, 0.0)
    text = simulation(
        "{autoscaler: {drainPriorityConfig: '10000:20,-5:100,0:60', maxPodEvictionTime: 30s, "
        "nodeDeletionBatcherInterval: 5s}}"
    )
    assert load(tmp_path, text).simulation.autoscaler == AutoscalerSettings(
        drain_priority_config=((10000, 20), (-5, 100), (0, 60)),
        max_pod_eviction_time_s=30.0,
        node_deletion_batcher_interval_s=5.0,
    )
    assert warnings(tmp_path, text) == []


def test_a_bad_drain_priority_config_is_a_field_error_with_upstreams_words(tmp_path: Path) -> None:
    """``parseShutdownGracePeriodsAndPriorities`` and ``createAutoscalingOptions``, where cluster-autoscaler
    exits: an item not ``a:b``, an integer ``strconv.Atoi`` refuses, an empty config (parsed to nothing), and
    the flag with ``--max-graceful-termination-sec`` given too (even at its default)."""
    label = "scenario.yaml: document 1 (Simulation/s): spec.autoscaler"
    cases = [
        ("'10000:20,1000'", "'1000' is not a priority and grace period couple separated by ':'"),
        ("'10000:20:5'", "'10000:20:5' is not a priority and grace period couple separated by ':'"),
        ("'x:20'", 'strconv.Atoi: parsing "x": invalid syntax'),
        ("'1:2.5'", 'strconv.Atoi: parsing "2.5": invalid syntax'),
        ("''", "Invalid configuration, parsing --drain-priority-config"),
    ]
    for value, said in cases:
        (problem,) = problems(tmp_path, simulation(f"{{autoscaler: {{drainPriorityConfig: {value}}}}}"))
        assert problem.startswith(f"{label}.drainPriorityConfig: ") and said in problem, problem
    both = simulation("{autoscaler: {drainPriorityConfig: '0:60', maxGracefulTerminationSec: 600}}")
    (problem,) = problems(tmp_path, both)
    assert problem.startswith(f"{label}: ") and "could not use drainPriorityConfig" in problem, problem
