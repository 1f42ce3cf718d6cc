"""A KEDA ``prometheus`` trigger in the simulator: its PromQL query is evaluated over the simulated
series (seed 003's inference Deployment and traffic, its HPA replaced by a ScaledObject)."""

from __future__ import annotations

from pathlib import Path

from conftest import simulated

SEED_003 = Path(__file__).resolve().parents[2] / "examples" / "seed-003" / "hpa-cold-nodes.yaml"


def with_scaled_object(tmp_path: Path, query: str, spec: str = "") -> Path:
    docs = SEED_003.read_text().split("\n---\n")
    [hpa] = [d for d in docs if "kind: HorizontalPodAutoscaler" in d]
    scaled_object = f"""apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {{name: ai-inference}}
spec:
  scaleTargetRef: {{name: ai-inference}}
  minReplicaCount: 2
  maxReplicaCount: 20
{spec}  triggers:
  - type: prometheus
    metadata:
      serverAddress: http://prometheus:9090
      threshold: "10"
      query: '{query}'
"""
    path = tmp_path / "scenario.yaml"
    path.write_text("\n---\n".join(scaled_object if d is hpa else d for d in docs))
    return path


def test_a_request_rate_query_scales_the_deployment_to_the_traffic(tmp_path: Path) -> None:
    # 100 rps from 40 min at a threshold of 10 per replica (AverageValue): 10 replicas.
    query = 'sum(rate(http_requests_total{namespace="default", deployment="ai-inference"}[2m]))'
    summary = simulated([with_scaled_object(tmp_path, query)], duration_s=3600)
    replicas = summary["timeline"]["replicas"]["Deployment/default/ai-inference"]
    assert min(replicas) >= 2
    assert max(replicas) == 10


def test_a_query_selecting_another_deployment_reads_nothing_and_stays_at_the_minimum(tmp_path: Path) -> None:
    query = 'sum(rate(http_requests_total{deployment="other"}[2m]))'
    summary = simulated([with_scaled_object(tmp_path, query)], duration_s=3600)
    replicas = summary["timeline"]["replicas"]["Deployment/default/ai-inference"]
    assert max(replicas) == 2


PER_POD = 'rate(http_requests_total{deployment="ai-inference"}[2m])'  # one series a pod: the scaler fails


def test_a_failing_trigger_reports_the_fallback_replicas_to_the_hpa_past_its_threshold(
    tmp_path: Path,
) -> None:
    """``spec.fallback`` (KEDA's ``GetMetricsWithFallback``): the query returns one series a pod, so the
    prometheus scaler fails at every read; past 3 failures the metrics adapter reports the value that makes
    the HPA propose 6 replicas (``doFallback``, behavior ``static``), and the Deployment is scaled to 6."""
    fallback = "  fallback: {failureThreshold: 3, replicas: 6}\n"
    summary = simulated([with_scaled_object(tmp_path, PER_POD, fallback)], duration_s=1800)
    replicas = summary["timeline"]["replicas"]["Deployment/default/ai-inference"]
    assert (replicas[0], max(replicas), replicas[-1]) == (2, 6, 6)


def test_a_failing_trigger_without_fallback_leaves_the_replicas_alone(tmp_path: Path) -> None:
    summary = simulated([with_scaled_object(tmp_path, PER_POD)], duration_s=1800)
    replicas = summary["timeline"]["replicas"]["Deployment/default/ai-inference"]
    assert max(replicas) == 2
