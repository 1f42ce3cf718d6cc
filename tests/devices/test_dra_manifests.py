"""resource.k8s.io/v1 manifests into the DRA model, and generated ResourceSlices."""

from __future__ import annotations

from typing import Any

import kubernetes_validate
import yaml

from gpufleet.gpus.dra.allocator import Allocation, allocate_on_node
from gpufleet.gpus.dra.claims import claims_for_pod
from gpufleet.kube.dra import (
    dra_object,
    pod_resource_claims,
    resource_slice_manifest,
)
from gpufleet.kube.problems import Location, Problems, Reporter
from gpufleet.model.dra import (
    ALL,
    DeviceClass,
    DeviceRequest,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
    VersionValue,
)
from gpufleet.model.dra_slices import slices_for_node

MANIFESTS = """
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.nvidia.com}
spec:
  selectors:
  - cel: {expression: device.driver == "gpu.nvidia.com"}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared-gpus, namespace: ml}
spec:
  devices:
    requests:
    - name: gpus
      exactly:
        deviceClassName: gpu.nvidia.com
        count: 2
        selectors:
        - cel:
            expression: >-
              device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3" &&
              device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: all-gpus, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: all
        exactly: {deviceClassName: gpu.nvidia.com, allocationMode: All}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-a-gpu.nvidia.com}
spec:
  driver: gpu.nvidia.com
  nodeName: node-a
  pool: {name: node-a, generation: 0, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    attributes:
      productName: {string: NVIDIA H100 80GB HBM3}
      index: {int: 0}
      driverVersion: {version: 550.54.15}
      resource.kubernetes.io/pcieRoot: {string: pci0000:00}
    capacity:
      memory: {value: 80Gi}
  - name: gpu-1
    attributes:
      productName: {string: NVIDIA H100 80GB HBM3}
      index: {int: 1}
    capacity:
      memory: {value: 80Gi}
"""


def reporter() -> tuple[Problems, Reporter]:
    problems = Problems()
    return problems, Reporter(problems, Location("test.yaml", 0, 1))


def load(text: str) -> tuple[list[Any], Problems]:
    problems, report = reporter()
    docs = list(yaml.safe_load_all(text))
    for doc in docs:
        kubernetes_validate.validate(doc, "1.34.0", strict=True)
    return [dra_object(doc, report) for doc in docs], problems


def test_manifests_convert_and_allocate() -> None:
    (gpu_class, shared, template, node_slice), problems = load(MANIFESTS)
    assert not problems.errors and not problems.warnings
    assert isinstance(gpu_class, DeviceClass) and gpu_class.selectors == (
        'device.driver == "gpu.nvidia.com"',
    )
    assert isinstance(shared, ResourceClaim) and shared.key == "ml/shared-gpus"
    assert shared.requests[0].count == 2 and shared.requests[0].device_class_name == "gpu.nvidia.com"
    assert isinstance(template, ResourceClaimTemplate)
    assert template.requests == (DeviceRequest("all", "gpu.nvidia.com", (), ALL, 0),)
    assert isinstance(node_slice, ResourceSlice) and node_slice.node_name == "node-a"
    assert node_slice.devices[0].attributes["driverVersion"] == VersionValue("550.54.15")
    assert node_slice.devices[0].capacity["memory"] == 80 * 2**30

    pod_spec = {
        "resourceClaims": [
            {"name": "shared", "resourceClaimName": "shared-gpus"},
        ]
    }
    _, report = reporter()
    pod_claims = pod_resource_claims(pod_spec, report)
    claims = claims_for_pod("ml", "trainer-0", pod_claims, {shared.key: shared}, {})
    assert claims == (shared,)
    result = allocate_on_node("node-a", list(claims), {gpu_class.name: gpu_class}, [node_slice])
    assert isinstance(result, Allocation)
    assert [d.device for d in result.devices] == ["gpu-0", "gpu-1"]


def test_pod_claims_from_templates_and_missing_claims() -> None:
    (_, _, template, _), _ = load(MANIFESTS)
    assert isinstance(template, ResourceClaimTemplate)
    _, report = reporter()
    pod_claims = pod_resource_claims(
        {"resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": "all-gpus"}]}, report
    )
    claims = claims_for_pod("ml", "p", pod_claims, {}, {"ml/all-gpus": template})
    assert isinstance(claims, tuple) and claims[0].key == "ml/p-gpus"
    missing = pod_resource_claims({"resourceClaims": [{"name": "x", "resourceClaimName": "nope"}]}, report)
    assert claims_for_pod("ml", "p", missing, {}, {}) == 'resourceclaim "nope" not found'


def test_malformed_cel_and_unmodelled_fields_are_errors() -> None:
    text = """
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: broken}
spec:
  selectors:
  - cel: {expression: 'device.driver == '}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c}
spec:
  devices:
    requests:
    - name: r
      exactly: {deviceClassName: gpu.nvidia.com, capacity: {requests: {memory: 1Gi}}}
    constraints:
    - {matchAttribute: resource.kubernetes.io/pcieRoot}
"""
    objects, problems = load(text)
    assert objects == [None, None]
    lines = Problems.lines(problems.errors)
    assert lines[0].startswith(
        'test.yaml: document 1: spec.selectors[0].cel.expression: Invalid value: "device.driver == ": '
        "compilation failed: CEL syntax error"
    )
    assert not any("constraints" in line for line in lines)  # matchAttribute is modelled
    assert any("spec.devices.requests[0].exactly.capacity: Forbidden" in line for line in lines)


def test_generated_slice_is_a_valid_v1_manifest_and_round_trips() -> None:
    generated = slices_for_node(
        "gpu-node-1", 8, "NVIDIA H100 80GB HBM3", 80 * 2**30, driver_version="550.54.15"
    )
    device = generated.devices[3]
    assert device.name == "gpu-3"
    assert device.attributes["index"] == 3
    assert device.attributes["architecture"] == "Hopper"
    assert device.attributes["cudaComputeCapability"] == VersionValue("9.0.0")
    assert str(device.attributes["uuid"]).startswith("GPU-")
    manifest = resource_slice_manifest(generated)
    kubernetes_validate.validate(manifest, "1.34.0", strict=True)
    assert manifest["spec"]["devices"][0]["capacity"] == {"memory": {"value": "80Gi"}}
    _, report = reporter()
    assert dra_object(manifest, report) == generated


def test_a_count_of_zero_is_a_count_not_given() -> None:
    """``count`` is an ``omitempty`` int64 (k8s.io/api resource/v1): 0 reads as not given, so
    ``SetDefaults_ExactDeviceRequest`` makes it 1 for ExactCount and ``validateDeviceAllocationMode``
    accepts it with All."""
    text = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: zero, namespace: ml}
spec:
  devices:
    requests:
    - name: one
      exactly: {deviceClassName: gpu.nvidia.com, count: 0}
    - name: every
      exactly: {deviceClassName: gpu.nvidia.com, allocationMode: All, count: 0}
"""
    (claim,), problems = load(text)
    assert not problems.errors
    assert isinstance(claim, ResourceClaim)
    assert [(r.name, r.allocation_mode, r.count) for r in claim.requests] == [
        ("one", "ExactCount", 1),
        ("every", ALL, 0),
    ]
