"""``autoscaling.x-k8s.io/v1`` ProvisioningRequest and the ``v1`` PodTemplates it names: read, validated
as the CRD's schema (cluster-autoscaler 1.34.5 ``apis/provisioningrequest/autoscaling.x-k8s.io/v1/types.go``),
its pod sets resolved in its namespace."""

from __future__ import annotations

from pathlib import Path

from kube_manifests import load, problems, warnings

from gpufleet.model.provisioning_request import BEST_EFFORT_ATOMIC
from gpufleet.model.resources import GPU

TEMPLATE = """
apiVersion: v1
kind: PodTemplate
metadata: {name: trainer, namespace: ml}
template:
  spec:
    containers:
    - name: trainer
      image: trainer:1
      resources: {limits: {nvidia.com/gpu: 8}}
"""


def provreq(spec: str) -> str:
    return f"""
apiVersion: autoscaling.x-k8s.io/v1
kind: ProvisioningRequest
metadata: {{name: llm, namespace: ml}}
spec:
{spec}
"""


GOOD = provreq("""
  provisioningClassName: best-effort-atomic-scale-up.autoscaling.x-k8s.io
  parameters: {noRetry: "true"}
  podSets:
  - podTemplateRef: {name: trainer}
    count: 4
""")


def test_provisioning_request_with_its_pod_template(tmp_path: Path) -> None:
    scenario = load(tmp_path, TEMPLATE + "---" + GOOD)
    [request] = scenario.provisioning_requests
    assert (request.key, request.class_name, dict(request.parameters)) == (
        "ml/llm", BEST_EFFORT_ATOMIC, {"noRetry": "true"},
    )  # fmt: skip
    [pod_set] = request.pod_sets
    assert (pod_set.template, pod_set.count, pod_set.pod.requests[GPU]) == ("trainer", 4, 8)


def test_pod_template_missing_in_the_namespace(tmp_path: Path) -> None:
    found = problems(tmp_path, GOOD)
    assert any(
        'spec.podSets[0].podTemplateRef.name: Not found: PodTemplate "trainer" not found in namespace "ml"'
        in p
        for p in found
    ), found


def test_provisioning_request_schema(tmp_path: Path) -> None:
    bad = provreq("""
  provisioningClassName: Not_A_Name
  podSets:
  - podTemplateRef: {name: trainer}
    count: 0
""")
    found = "\n".join(problems(tmp_path, TEMPLATE + "---" + bad))
    assert 'spec.provisioningClassName: Invalid value: "Not_A_Name"' in found
    assert "spec.podSets[0].count: Invalid value: 0: should be greater than or equal to 1" in found


def test_provisioning_request_needs_pod_sets(tmp_path: Path) -> None:
    found = "\n".join(problems(tmp_path, provreq("  provisioningClassName: x\n  podSets: []")))
    assert "spec.podSets: Invalid value" in found


def test_v1beta1_is_a_warning(tmp_path: Path) -> None:
    text = GOOD.replace("autoscaling.x-k8s.io/v1\n", "autoscaling.x-k8s.io/v1beta1\n")
    assert any(
        "autoscaling.x-k8s.io/v1beta1/ProvisioningRequest is not modelled" in w
        for w in warnings(tmp_path, text)
    )
