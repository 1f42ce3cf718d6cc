"""DRA ``resource.k8s.io/v1beta1`` and ``v1beta2`` manifests read as the API server converts them to
``v1`` (k8s.io/kubernetes v1.34.10 pkg/apis/resource/v1beta1/conversion.go), and ``constraints``
(``matchAttribute``) read as ``validateDeviceConstraint`` checks them."""

from __future__ import annotations

from pathlib import Path

from kube_manifests import load, problems

from gpufleet.model.dra import DeviceConstraint, DeviceRequest, VersionValue

V1BETA1_TEMPLATE = """
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaimTemplate
metadata: {namespace: gpu-test1, name: single-gpu}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        deviceClassName: gpu.nvidia.com
        count: 2
        selectors: [{cel: {expression: 'device.driver == "gpu.nvidia.com"'}}]
"""
V1_TEMPLATE = """
apiVersion: resource.k8s.io/{version}
kind: ResourceClaimTemplate
metadata: {{namespace: gpu-test1, name: single-gpu}}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
          count: 2
          selectors: [{{cel: {{expression: 'device.driver == "gpu.nvidia.com"'}}}}]
"""
V1BETA1_SLICE = """
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata: {name: node-a-gpu}
spec:
  driver: gpu.nvidia.com
  pool: {name: node-a, generation: 1, resourceSliceCount: 1}
  nodeName: node-a
  devices:
  - name: gpu-0
    basic:
      attributes:
        driverVersion: {version: 550.54.15}
        productName: {string: NVIDIA H100 80GB HBM3}
      capacity:
        memory: {value: 80Gi}
"""
CONSTRAINED = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: migs}}
spec:
  devices:
    requests:
    - {{name: a, exactly: {{deviceClassName: mig.nvidia.com}}}}
    - {{name: b, exactly: {{deviceClassName: mig.nvidia.com}}}}
    constraints:
    - {constraint}
"""

EXPECTED_REQUEST = DeviceRequest(
    "gpu", "gpu.nvidia.com", ('device.driver == "gpu.nvidia.com"',), "ExactCount", 2
)


def test_a_v1beta1_request_moves_its_fields_under_exactly(tmp_path: Path) -> None:
    # Convert_v1beta1_DeviceRequest_To_resource_DeviceRequest
    templates = load(tmp_path, V1BETA1_TEMPLATE).dra.templates
    assert templates["gpu-test1/single-gpu"].requests == (EXPECTED_REQUEST,)


def test_a_v1beta1_request_with_only_a_class_gets_the_defaults(tmp_path: Path) -> None:
    # SetDefaults_DeviceRequest: allocationMode ExactCount, count 1
    text = V1BETA1_TEMPLATE.replace("        count: 2\n", "").replace(
        "        selectors: [{cel: {expression: 'device.driver == \"gpu.nvidia.com\"'}}]\n", ""
    )
    (request,) = load(tmp_path, text).dra.templates["gpu-test1/single-gpu"].requests
    assert request == DeviceRequest("gpu", "gpu.nvidia.com", (), "ExactCount", 1)


def test_a_v1beta2_template_reads_as_v1(tmp_path: Path) -> None:
    for version in ("v1beta2", "v1"):
        templates = load(tmp_path, V1_TEMPLATE.format(version=version)).dra.templates
        assert templates["gpu-test1/single-gpu"].requests == (EXPECTED_REQUEST,)


def test_a_v1beta1_device_moves_its_basic_fields_up(tmp_path: Path) -> None:
    # Convert_v1beta1_Device_To_resource_Device
    (resource_slice,) = load(tmp_path, V1BETA1_SLICE).dra.slices
    (device,) = resource_slice.devices
    assert device.attributes == {
        "driverVersion": VersionValue("550.54.15"),
        "productName": "NVIDIA H100 80GB HBM3",
    }
    assert device.capacity == {"memory": 80 * 2**30}
    assert resource_slice.node_name == "node-a"


def test_a_dra_version_kubernetes_no_longer_serves_is_refused(tmp_path: Path) -> None:
    text = V1BETA1_TEMPLATE.replace("v1beta1", "v1alpha2")
    assert problems(tmp_path, text) == [
        "scenario.yaml: document 1 (ResourceClaimTemplate/gpu-test1/single-gpu): apiVersion: kind "
        "ResourceClaimTemplate is not served in resource.k8s.io/v1alpha2 (with Kubernetes 1.34: "
        "resource.k8s.io/v1, resource.k8s.io/v1beta1, resource.k8s.io/v1beta2)"
    ]


def test_a_match_attribute_constraint_is_read(tmp_path: Path) -> None:
    text = CONSTRAINED.format(constraint="{requests: [a, b], matchAttribute: gpu.nvidia.com/parentUUID}")
    claim = load(tmp_path, text).dra.claims["default/migs"]
    assert claim.constraints == (DeviceConstraint(("a", "b"), "gpu.nvidia.com/parentUUID"),)


def test_constraint_errors_are_the_api_servers(tmp_path: Path) -> None:
    # validateDeviceConstraint, validateRequestNameRef, validateFullyQualifiedName
    text = CONSTRAINED.format(constraint="{requests: [a, c, a], matchAttribute: parentUUID}")
    assert problems(tmp_path, text) == [
        "scenario.yaml: document 1 (ResourceClaim/default/migs): spec.devices.constraints[0].requests[1]: "
        'Invalid value: "c": must be the name of a request in the claim or the name of a request and a '
        "subrequest separated by '/'",
        "scenario.yaml: document 1 (ResourceClaim/default/migs): spec.devices.constraints[0].requests[2]: "
        'Duplicate value: "a"',
        "scenario.yaml: document 1 (ResourceClaim/default/migs): spec.devices.constraints[0].matchAttribute: "
        'Invalid value: "parentUUID": must include a domain',
    ]
