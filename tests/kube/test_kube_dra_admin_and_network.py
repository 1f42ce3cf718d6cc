"""Reading DRA admin access (``adminAccess``, DRAAdminAccess: beta, on in 1.34) and network-attached
devices (a ResourceSlice's ``nodeSelector``) from manifests: what the API server accepts is read, what
it refuses is an error naming the file, document and field."""

from __future__ import annotations

from pathlib import Path

from kube_manifests import load, problems, warnings

from gpufleet.kube.dra import ADMIN_NAMESPACE_LABEL, dra_object, resource_slice_manifest
from gpufleet.kube.problems import Location, Problems, Reporter
from gpufleet.model.pod import Requirement

ADMIN_NAMESPACE = f"""
apiVersion: v1
kind: Namespace
metadata:
  name: monitoring
  labels: {{{ADMIN_NAMESPACE_LABEL}: "true"}}
---
apiVersion: v1
kind: Namespace
metadata: {{name: ml}}
"""


REQUESTS = """
    requests:
    - name: plain
      exactly: {deviceClassName: gpu.nvidia.com}
    - name: watch
      exactly: {deviceClassName: gpu.nvidia.com, allocationMode: All, adminAccess: true}"""


def admin_claim(namespace: str) -> str:
    return f"""---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: watch-gpus, namespace: {namespace}}}
spec:
  devices:{REQUESTS}
"""


def admin_template(namespace: str) -> str:
    requests = REQUESTS.replace("\n", "\n  ")
    return f"""---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {{name: watch-gpus, namespace: {namespace}}}
spec:
  spec:
    devices:{requests}
"""


def resource_slice_text(access: str, name: str = "s1") -> str:
    """A ResourceSlice of one device with ``access`` (its node selection) in its spec."""
    return f"""---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {{name: {name}}}
spec:
  driver: fabric.example.com
  pool: {{name: {name}, generation: 1, resourceSliceCount: 1}}
  {access}
  devices: [{{name: nic-0}}]
"""


FORBIDDEN = (
    "Forbidden: admin access to devices requires the `resource.kubernetes.io/admin-access: true` label on "
    "the containing namespace"
)


def test_admin_access_in_a_namespace_labelled_for_it_is_read(tmp_path: Path) -> None:
    scenario = load(tmp_path, ADMIN_NAMESPACE + admin_claim("monitoring"))
    claim = scenario.dra.claims["monitoring/watch-gpus"]
    assert [r.admin_access for r in claim.requests] == [False, True]


def test_admin_access_in_a_namespace_without_the_label_is_refused_as_the_api_server_does(
    tmp_path: Path,
) -> None:
    text = ADMIN_NAMESPACE + admin_claim("ml") + admin_template("elsewhere")
    assert problems(tmp_path, text) == [
        "scenario.yaml: document 3 (ResourceClaim/ml/watch-gpus): "
        f"spec.devices.requests[1].exactly.adminAccess: {FORBIDDEN}",
        "scenario.yaml: document 4 (ResourceClaimTemplate/elsewhere/watch-gpus): "
        f"spec.spec.devices.requests[1].exactly.adminAccess: {FORBIDDEN}",
    ]


def test_admin_access_without_namespace_documents_is_taken_as_granted_with_a_warning(tmp_path: Path) -> None:
    assert warnings(tmp_path, admin_claim("ml")) == [
        "scenario.yaml: document 1 (ResourceClaim/ml/watch-gpus): "
        "spec.devices.requests[1].exactly.adminAccess: no v1 Namespace document gives the namespaces' "
        "labels: the `resource.kubernetes.io/admin-access: "
        "true` label admin access requires is taken as set"
    ]


def test_a_subrequest_has_no_admin_access_field(tmp_path: Path) -> None:
    body = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c"},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "r",
                        "firstAvailable": [{"name": "s", "deviceClassName": "g", "adminAccess": True}],
                    }
                ]
            }
        },
    }
    found = Problems()
    assert dra_object(body, Reporter(found, Location("test.yaml", 0, 1))) is None
    assert Problems.lines(found.errors) == [
        "test.yaml: document 1: spec.devices.requests[0].firstAvailable[0].adminAccess: Forbidden: "
        "a subrequest has no adminAccess field (DeviceSubRequest)"
    ]


def test_claim_status_reads_admin_results_and_a_network_allocation(tmp_path: Path) -> None:
    text = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c}
spec:
  devices:
    requests:
    - name: r
      exactly: {deviceClassName: gpu.nvidia.com}
status:
  allocation:
    devices:
      results:
      - {request: r, driver: d, pool: p, device: x, adminAccess: true}
    nodeSelector:
      nodeSelectorTerms:
      - matchExpressions: [{key: rack, operator: In, values: [r1]}]
"""
    allocation = load(tmp_path, text).dra.claims["default/c"].allocation
    assert allocation is not None and allocation.node_name is None
    assert [r.admin_access for r in allocation.results] == [True] and allocation.in_use == ()
    assert allocation.node_selector[0].expressions == (Requirement("rack", "In", ("r1",)),)


def test_a_slice_with_a_node_selector_is_read_and_written_back(tmp_path: Path) -> None:
    selector = "{nodeSelectorTerms: [{matchExpressions: [{key: rack, operator: In, values: [r1]}]}]}"
    (resource_slice,) = load(tmp_path, resource_slice_text(f"nodeSelector: {selector}")).dra.slices
    assert resource_slice.node_name is None and not resource_slice.all_nodes
    assert resource_slice.node_selector[0].expressions == (Requirement("rack", "In", ("r1",)),)
    found = Problems()
    manifest = resource_slice_manifest(resource_slice)
    assert manifest["spec"]["nodeSelector"] == {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "rack", "operator": "In", "values": ["r1"]}]}]
    }
    assert dra_object(manifest, Reporter(found, Location("test.yaml", 0, 1))) == resource_slice


def test_a_slice_node_selector_needs_exactly_one_valid_term(tmp_path: Path) -> None:
    two = (
        "nodeSelector: {nodeSelectorTerms: [{matchExpressions: [{key: rack, operator: In, values: [r1]}]}, "
        "{matchExpressions: [{key: rack, operator: Exists, values: [r2]}]}]}"
    )
    lines = problems(
        tmp_path,
        resource_slice_text(two) + resource_slice_text("nodeSelector: {nodeSelectorTerms: []}", "s2"),
    )
    assert lines == [
        "scenario.yaml: document 1 (ResourceSlice/s1): "
        "spec.nodeSelector.nodeSelectorTerms[1].matchExpressions[0].values: Forbidden: may not be "
        "specified when `operator` is 'Exists' or 'DoesNotExist'",
        "scenario.yaml: document 1 (ResourceSlice/s1): spec.nodeSelector.nodeSelectorTerms: Invalid value: "
        '[{"matchExpressions": [{"key": "rack", "operator": "In", "values": ["r1"]}]},...: '
        "must have exactly one node selector term",
        "scenario.yaml: document 2 (ResourceSlice/s2): spec.nodeSelector.nodeSelectorTerms: "
        "Required value: must have at least one node selector term",
        "scenario.yaml: document 2 (ResourceSlice/s2): spec.nodeSelector.nodeSelectorTerms: "
        "Invalid value: []: must have exactly one node selector term",
    ]


def test_per_device_node_selection_needs_partitionable_devices(tmp_path: Path) -> None:
    assert problems(tmp_path, resource_slice_text("perDeviceNodeSelection: true")) == [
        "scenario.yaml: document 1 (ResourceSlice/s1): spec.perDeviceNodeSelection: Forbidden: "
        "perDeviceNodeSelection needs DRAPartitionableDevices (alpha, off in 1.34); not modelled"
    ]
