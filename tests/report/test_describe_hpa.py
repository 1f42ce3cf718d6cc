"""``gpufleet describe hpa``: kubectl's ``describe hpa`` layout (``k8s.io/kubectl`` v0.34.10
``pkg/describe/describe.go`` ``describeHorizontalPodAutoscalerV2``) for a simulated HPA, a saved summary.json
and an HPA of a kubectl dump, with the status, conditions and events Kubernetes 1.34's HPA controller leaves
(``pkg/controller/podautoscaler/horizontal.go``: ``setCondition``, ``SuccessfulRescale`` "New size: N; reason:
R"), then gpufleet's part: the replica history and where the HPA is held."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from conftest import write
from gpufleet.cli import app
from gpufleet.report._format import MISSING
from gpufleet.report.describe_hpa import held_sentences

runner = CliRunner()
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

# cpu-hpa's API (examples/serving/cpu-hpa.yaml) behind an autoscaling/v2 HPA capped at 3 replicas: at 10m the
# traffic doubles, the CPU metric asks ceil(2.0 x 2) = 4 replicas, maxReplicas allows 3.
SCENARIO = """
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {name: cpu}
spec:
  replicas: 1
  template:
    status:
      capacity: {cpu: "16", memory: 64Gi, pods: "110"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: web}
spec:
  replicas: 2
  selector:
    matchLabels: {app: api}
  template:
    metadata:
      labels: {app: api}
    spec:
      containers:
      - name: api
        image: api:v1
        resources:
          requests: {cpu: "1", memory: 1Gi}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: api, namespace: web, labels: {team: serving}}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: api}
  minReplicas: 2
  maxReplicas: 3
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}
  behavior:
    scaleUp:
      policies:
      - {type: Pods, value: 4, periodSeconds: 60}
---
apiVersion: gpufleet.io/v1alpha1
kind: Traffic
metadata: {name: api-requests, namespace: web}
spec:
  target: api
  perReplicaRps: 150
  cpuPerRequest: 10m
  idleMemory: 200Mi
  rps:
  - {at: 0s, value: 0}
  - {at: 1m, value: 100}
  - {at: 10m, value: 200}
---
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {name: describe-hpa}
spec: {duration: 20m, sampleInterval: 60s}
"""

RESCALE_REASON = "cpu resource utilization (percentage of request) above target"

DUMP = """
apiVersion: v1
kind: List
items:
- apiVersion: autoscaling/v2
  kind: HorizontalPodAutoscaler
  metadata: {name: llm, namespace: serve, creationTimestamp: "2026-12-01T09:00:00Z"}
  spec:
    scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: llm}
    minReplicas: 1
    maxReplicas: 4
    metrics:
    - type: Pods
      pods: {metric: {name: queue_length}, target: {type: AverageValue, averageValue: "10"}}
    - type: External
      external: {metric: {name: s0-redis-jobs}, target: {type: AverageValue, averageValue: "5"}}
  status:
    currentReplicas: 4
    desiredReplicas: 4
    lastScaleTime: "2026-12-01T10:00:00Z"
    currentMetrics:
    - type: Pods
      pods: {metric: {name: queue_length}, current: {averageValue: 12500m}}
    - type: ""
    conditions:
    - {type: AbleToScale, status: "True", reason: ReadyForNewScale,
       message: recommended size matches current size, lastTransitionTime: "2026-12-01T09:00:00Z"}
    - {type: ScalingActive, status: "True", reason: ValidMetricFound,
       message: "the HPA was able to successfully calculate a replica count from pods metric queue_length",
       lastTransitionTime: "2026-12-01T09:00:00Z"}
    - {type: ScalingLimited, status: "True", reason: TooManyReplicas,
       message: the desired replica count is more than the maximum replica count,
       lastTransitionTime: "2026-12-01T10:00:00Z"}
- apiVersion: v1
  kind: Pod
  metadata: {name: llm-abc, namespace: serve}
  spec: {containers: [{name: c, image: llm}]}
  status: {phase: Running}
- apiVersion: v1
  kind: Event
  metadata: {name: llm.1, namespace: serve}
  involvedObject: {kind: HorizontalPodAutoscaler, name: llm, namespace: serve}
  reason: SuccessfulRescale
  type: Normal
  message: "New size: 4; reason: pods metric queue_length above target"
  source: {component: horizontal-pod-autoscaler}
  count: 3
  firstTimestamp: "2026-12-01T09:30:00Z"
  lastTimestamp: "2026-12-01T10:00:00Z"
"""


def describe(*args: str) -> str:
    result = runner.invoke(app, ["describe", "hpa", *args])
    assert result.exit_code == 0, result.output
    return str(result.output)


def lines_of(output: str) -> list[str]:
    return [line.rstrip() for line in output.splitlines()]


def cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().split("  ") if c.strip()]


def field(output: str, label: str) -> str:
    line = next(line for line in output.splitlines() if line.startswith(f"{label}:"))
    return line.split(":", 1)[1].strip()


def test_a_simulated_hpa_shows_describe_hpas_fields_with_its_metric_and_behavior(tmp_path: Path) -> None:
    """``describeHorizontalPodAutoscalerV2``: Reference, the Resource Utilization metric as ``66% (667m) /
    50%`` (its current value as ``computeStatusForResourceMetricGeneric`` leaves it: the utilization and the
    raw average), Min/Max replicas, the defaulted Behavior (``printDirectionBehavior``) and ``Deployment
    pods: 3 current / 3 desired``."""
    output = describe("web/api", *map(str, write(tmp_path, SCENARIO)))
    lines = lines_of(output)
    assert field(output, "Labels") == "team=serving"
    assert field(output, "Reference") == "Deployment/api"
    assert field(output, "CreationTimestamp") == "<not modelled>"
    assert field(output, "Metrics") == "( current / target )"
    metric = next(line for line in lines if "resource cpu on pods" in line)
    assert cells(metric) == ["resource cpu on pods", "(as a percentage of request):", "66% (667m) / 50%"]
    assert field(output, "Min replicas") == "2"
    assert field(output, "Max replicas") == "3"
    behavior = lines[lines.index("Behavior:") : lines.index("Behavior:") + 9]
    assert behavior[1:5] == [
        "  Scale Up:",
        "    Stabilization Window: 0 seconds",
        "    Select Policy: Max",
        "    Policies:",
    ]
    assert cells(behavior[5]) == ["- Type: Pods", "Value: 4", "Period: 60 seconds"]
    assert behavior[6:8] == ["  Scale Down:", "    Select Policy: Max"]
    assert field(output, "Deployment pods") == "3 current / 3 desired"


def test_at_max_replicas_the_conditions_and_the_rescale_event_are_the_controllers(tmp_path: Path) -> None:
    """``reconcileAutoscaler``: the rescale to maxReplicas is ``SuccessfulRescale`` "New size: 3; reason: cpu
    resource utilization (percentage of request) above target"; afterwards the metric still asks 4, so
    ``convertDesiredReplicasWithBehaviorRate`` leaves ScalingLimited True TooManyReplicas, AbleToScale
    ReadyForNewScale and ScalingActive ValidMetricFound, with upstream's messages."""
    output = describe("api", *map(str, write(tmp_path, SCENARIO)))
    lines = lines_of(output)
    start = lines.index("Conditions:")
    assert [cells(line) for line in lines[start + 3 : start + 6]] == [
        ["AbleToScale", "True", "ReadyForNewScale", "recommended size matches current size"],
        [
            "ScalingActive",
            "True",
            "ValidMetricFound",
            "the HPA was able to successfully calculate a replica count from cpu resource utilization "
            "(percentage of request)",
        ],
        [
            "ScalingLimited",
            "True",
            "TooManyReplicas",
            "the desired replica count is more than the maximum replica count",
        ],
    ]
    rescale = next(line for line in lines if "SuccessfulRescale" in line)
    assert cells(rescale)[-2:] == ["horizontal-pod-autoscaler", f"New size: 3; reason: {RESCALE_REASON}"]
    assert "  It is at maxReplicas (3): its metrics want more replicas than that." in lines


def test_gpufleets_part_lists_each_rescale_and_when_each_condition_last_changed(tmp_path: Path) -> None:
    """``setStatus``'s ``lastScaleTime`` is the rescale's time (10m: the first sync after the traffic
    doubles); ``setConditionInList`` moves a condition's ``lastTransitionTime`` only when its status changes:
    ScalingLimited turned True at 10m."""
    lines = lines_of(describe("api", *map(str, write(tmp_path, SCENARIO))))
    assert "  Last scale time:  t=10m (simulated)" in lines
    history = lines.index("  Replica history:")
    assert cells(lines[history + 2]) == ["t=10m", "2", "3", RESCALE_REASON]
    conditions = lines.index("  Conditions:")
    limited = next(cells(line) for line in lines[conditions:] if "ScalingLimited" in line)
    assert limited == ["ScalingLimited", "True", "t=10m (simulated)"]


def test_json_output_holds_the_record_and_the_summary_keeps_it(tmp_path: Path) -> None:
    """``-o json`` prints the record; ``simulate``'s summary.json keeps the HPA under ``hpas`` (schema
    checked by ``simulate``), and ``--summary`` describes it the same, without its labels."""
    paths = list(map(str, write(tmp_path, SCENARIO)))
    result = runner.invoke(app, ["describe", "hpa", "api", *paths, "-o", "json"])
    assert result.exit_code == 0, result.output
    record = json.loads(result.output)
    assert record["gpufleet"]["rescales"] == [{"at": 600.0, "from": 2, "to": 3, "reason": RESCALE_REASON}]
    assert (record["current_replicas"], record["desired_replicas"]) == (3, 3)
    out = tmp_path / "out"
    assert runner.invoke(app, ["simulate", *paths, "--out", str(out)]).exit_code == 0
    saved = json.loads((out / "summary.json").read_text())["hpas"]["web/api"]
    assert saved["rescales"] == [{"t_s": 600.0, "from": 2, "to": 3, "reason": RESCALE_REASON}]
    assert saved["metrics"][0]["current"] == {"average_value": "667m", "average_utilization": 66}
    from_summary = describe("api", "--summary", str(out / "summary.json"))
    assert field(from_summary, "Labels") == "<not in summary.json>"
    assert "New size: 3; reason: " + RESCALE_REASON in from_summary


def test_an_hpa_of_a_kubectl_dump_is_described_as_the_api_has_it(tmp_path: Path) -> None:
    """The dump's spec, status, conditions and Events: a Pods metric ``"queue_length" on pods:  12500m /
    10``, an External one without a current value ``<unknown>``, a repeated Event's Age ``(x3 over ...)``
    (``DescribeEvents``), and the replica history read from its SuccessfulRescale Event."""
    output = describe("llm", *map(str, write(tmp_path, DUMP)))
    lines = lines_of(output)
    assert field(output, "CreationTimestamp") == "2026-12-01T09:00:00Z"
    assert cells(next(line for line in lines if "queue_length" in line)) == [
        '"queue_length" on pods:',
        "12500m / 10",
    ]
    external = next(line for line in lines if "s0-redis-jobs" in line)
    assert cells(external) == ['"s0-redis-jobs" (target average value):', "<unknown> / 5"]
    assert field(output, "Deployment pods") == "4 current / 4 desired"
    rescale = next(line for line in lines if "SuccessfulRescale" in line)
    assert "(x3 over " in rescale
    history = lines.index("  Replica history:")
    assert cells(lines[history + 2]) == [
        "2026-12-01T10:00:00Z",
        MISSING,
        "4",
        "pods metric queue_length above target",
    ]
    assert "  It is at maxReplicas (4): its metrics want more replicas than that." in lines


def test_warnings_every_sync_show_as_kubectl_would_after_client_gos_spam_filter(tmp_path: Path) -> None:
    """Without traffic the API's pods report no CPU, so each 15 s sync of the hour records two Warnings.
    client-go's event correlator (``tools/record/events_cache.go``) writes 25 of them, then one per 5
    minutes, always the sync's first: FailedGetResourceMetric counts every occurrence (``eventObserve``),
    x241, last written at the end; FailedComputeMetricsReplicas is left as written at 2m45s, x12. Ages as
    kubectl writes them (``duration.HumanDuration``: 57m15s is ``57m``, an hour ``60m``)."""
    quiet = SCENARIO.split("apiVersion: gpufleet.io/v1alpha1\nkind: Traffic")[0] + (
        "apiVersion: gpufleet.io/v1alpha1\nkind: Simulation\nmetadata: {name: no-traffic}\n"
        "spec: {duration: 60m, sampleInterval: 60s}\n"
    )
    lines = lines_of(describe("api", *map(str, write(tmp_path, quiet))))
    rows = [cells(line)[:3] for line in lines[lines.index("Events (ages at the end of the run):") + 3 :][:2]]
    assert rows == [
        ["Warning", "FailedComputeMetricsReplicas", "57m (x12 over 60m)"],
        ["Warning", "FailedGetResourceMetric", "0s (x241 over 60m)"],
    ]


def test_an_unknown_or_ambiguous_hpa_is_an_error_with_exit_status_2(tmp_path: Path) -> None:
    """As ``describe job``: ``model.pod_names.find_pod_key(..., what="HPA")``, one line, exit status 2."""
    paths = list(map(str, write(tmp_path, DUMP)))
    unknown = runner.invoke(app, ["describe", "hpa", "nope", *paths])
    assert unknown.exit_code == 2
    assert "no HPA named nope in any namespace" in unknown.output
    assert "Traceback" not in unknown.output
    other = runner.invoke(app, ["describe", "hpa", "llm", "-n", "other", *paths])
    assert other.exit_code == 2
    assert "no HPA llm in namespace other" in other.output


def test_held_sentences_say_where_the_hpa_is_held() -> None:
    """From the conditions ``horizontal.go`` sets: ScalingActive False (not scaling from its metrics),
    ScalingLimited True with TooFewReplicas or a rate limit, a stabilization window."""
    base = {"current_replicas": 2, "min_replicas": 2, "max_replicas": 5}
    stopped = {
        **base,
        "conditions": [
            {
                "type": "ScalingActive",
                "status": "False",
                "reason": "FailedGetPodsMetric",
                "message": "no metrics",
            },
            {"type": "ScalingLimited", "status": "True", "reason": "TooFewReplicas", "message": "x"},
        ],
    }
    assert held_sentences(stopped) == [
        "It is not scaling from its metrics (FailedGetPodsMetric): no metrics.",
        "It is at minReplicas (2): its metrics want fewer replicas than that.",
    ]
    rate = {
        **base,
        "conditions": [
            {
                "type": "AbleToScale",
                "status": "True",
                "reason": "ScaleDownStabilized",
                "message": "recent recommendations were higher than current one",
            },
            {"type": "ScalingLimited", "status": "True", "reason": "ScaleUpLimit", "message": "too fast"},
        ],
    }
    assert held_sentences(rate) == [
        "Its scale-up is rate limited (ScaleUpLimit): too fast.",
        "Its stabilization window holds it (ScaleDownStabilized): recent recommendations were higher than "
        "current one.",
    ]


def test_a_keda_scaled_objects_hpa_is_described_under_kedas_name() -> None:
    """The HPA KEDA writes for a ScaledObject, ``keda-hpa-<name>`` (``hpa_inputs``): its composite-metric's
    rescales ("external metric composite-metric({}) above target", then "All metrics below target") and, once
    KEDA has scaled the Deployment to zero, ScalingActive False ScalingDisabled "scaling is disabled since the
    replica count of the target is zero" (``reconcileAutoscaler``), 0 current / 0 desired."""
    result = runner.invoke(
        app,
        [
            "describe",
            "hpa",
            "keda-hpa-llm-server",
            str(EXAMPLES / "keda/formula-queue-and-rate.yaml"),
            "-o",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    record = json.loads(result.output)
    rescales = record["gpufleet"]["rescales"]
    assert rescales[0] == {
        "at": 2400.0,
        "from": 1,
        "to": 2,
        "reason": "external metric composite-metric({}) above target",
    }
    assert rescales[-1] == {"at": 4020.0, "from": 2, "to": 1, "reason": "All metrics below target"}
    active = next(c for c in record["conditions"] if c["type"] == "ScalingActive")
    assert (active["status"], active["reason"]) == ("False", "ScalingDisabled")
    assert (record["current_replicas"], record["desired_replicas"]) == (0, 0)
    assert "default/llm-server" in record["gpufleet"]["note"]
