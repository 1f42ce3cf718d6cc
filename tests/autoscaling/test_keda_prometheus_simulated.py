"""A KEDA ``prometheus`` trigger in the simulator: its PromQL query is evaluated over the simulated
series (seed 003's inference Deployment and traffic, its HPA replaced by a ScaledObject)."""

from __future__ import annotations

from pathlib import Path

from conftest import simulated

SEED_003 = Path(__file__).resolve().parents[2] / "examples" / "seed-003" / "hpa-cold-nodes.yaml"


def with_scaled_object(tmp_path: Path, query: str) -> Path:
    docs = SEED_003.read_text().split("\n---\n")
    [hpa] = [d for d in docs if "kind: HorizontalPodAutoscaler" in d]
    scaled_object = f"""apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {{name: ai-inference}}
spec:
  scaleTargetRef: {{name: ai-inference}}
  minReplicaCount: 2
  maxReplicaCount: 20
  triggers:
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
