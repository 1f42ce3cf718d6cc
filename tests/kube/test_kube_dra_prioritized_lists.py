"""DRA prioritized lists (``firstAvailable``, DRAPrioritizedList: beta and on by default in Kubernetes
1.34) read from ResourceClaimTemplates of ``resource.k8s.io/v1``, ``v1beta2`` and ``v1beta1``, and the
API server's refusals of bad ones (k8s.io/kubernetes v1.34.10 pkg/apis/resource/validation:
``validateDeviceRequest``, ``validateDeviceSubRequest``, ``validateRequestNameRef``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from kube_manifests import load, problems

from gpufleet.model.dra import DeviceConstraint, DeviceRequest

CLASS_SELECTOR = 'device.driver == "gpu.nvidia.com"'
TEMPLATE = """
apiVersion: resource.k8s.io/{version}
kind: ResourceClaimTemplate
metadata: {{namespace: ml, name: gpus}}
spec:
  spec:
    devices:
      requests:
      - name: gpus
        firstAvailable:
{subrequests}
      constraints:
      - {{requests: [{constrained}], matchAttribute: gpu.nvidia.com/productName}}
"""
EIGHT_H100 = "        - {name: eight-h100, deviceClassName: h100.nvidia.com, count: 8}"
TWO_L4 = (
    "        - {name: two-l4, deviceClassName: l4.nvidia.com, count: 2, selectors: "
    f"[{{cel: {{expression: '{CLASS_SELECTOR}'}}}}]}}"
)
ANY_GPU = "        - {name: any, deviceClassName: gpu.nvidia.com, allocationMode: All}"
WHERE = "scenario.yaml: document 1 (ResourceClaimTemplate/ml/gpus): spec.spec.devices"


def template(
    *subrequests: str, version: str = "v1", constrained: str = "gpus/two-l4", extra: str = ""
) -> str:
    """A template whose request ``gpus`` lists ``subrequests``; ``extra``: lines of the request after
    its list."""
    lines = "\n".join(subrequests) + (f"\n{extra}" if extra else "")
    return TEMPLATE.format(version=version, subrequests=lines, constrained=constrained)


EXPECTED = DeviceRequest.prioritized(
    "gpus",
    DeviceRequest("eight-h100", "h100.nvidia.com", (), "ExactCount", 8),
    DeviceRequest("two-l4", "l4.nvidia.com", (CLASS_SELECTOR,), "ExactCount", 2),
    DeviceRequest("any", "gpu.nvidia.com", (), "All", 0),
)


@pytest.mark.parametrize("version", ["v1", "v1beta2", "v1beta1"])
def test_a_template_with_first_available_reads_its_subrequests_in_order(tmp_path: Path, version: str) -> None:
    """The subrequests keep their order, ``ExactCount`` and count 1 defaulted as for ``exactly``; a
    ``v1beta1`` request keeps ``firstAvailable`` where it is (``Convert_v1beta1_DeviceRequest_To_...``)."""
    text = template(EIGHT_H100, TWO_L4, ANY_GPU, version=version)
    claims = load(tmp_path, text).dra.templates
    assert claims["ml/gpus"].requests == (EXPECTED,)
    assert claims["ml/gpus"].constraints == (
        DeviceConstraint(("gpus/two-l4",), "gpu.nvidia.com/productName"),
    )


def test_a_constraint_may_name_the_whole_prioritized_request(tmp_path: Path) -> None:
    text = template(EIGHT_H100, TWO_L4, constrained="gpus")
    (constraint,) = load(tmp_path, text).dra.templates["ml/gpus"].constraints
    assert constraint.requests == ("gpus",)


def test_both_exactly_and_first_available_are_refused(tmp_path: Path) -> None:
    text = template(EIGHT_H100, extra="        exactly: {deviceClassName: gpu.nvidia.com}")
    assert problems(tmp_path, text) == [
        f"{WHERE}.requests[0]: Invalid value: null: exactly one of `exactly` or `firstAvailable` is "
        "required, but multiple fields are set",
        f'{WHERE}.constraints[0].requests[0]: Invalid value: "gpus/two-l4": must be the name of a '
        "request in the claim or the name of a request and a subrequest separated by '/'",
    ]


def test_more_than_eight_subrequests_are_refused(tmp_path: Path) -> None:
    nine = [f"        - {{name: s{i}, deviceClassName: gpu.nvidia.com}}" for i in range(9)]
    lines = problems(tmp_path, template(*nine, TWO_L4.replace("two-l4", "s9")))
    assert lines == [
        f"{WHERE}.requests[0].firstAvailable: Too many: 10: must have at most 8 items",
        f'{WHERE}.constraints[0].requests[0]: Invalid value: "gpus/two-l4": must be the name of a '
        "request in the claim or the name of a request and a subrequest separated by '/'",
    ]


def test_duplicate_subrequest_names_are_refused(tmp_path: Path) -> None:
    lines = problems(tmp_path, template(TWO_L4, TWO_L4))
    assert lines == [f'{WHERE}.requests[0].firstAvailable[1].name: Duplicate value: "two-l4"']


def test_a_subrequest_is_checked_as_an_exact_request_is(tmp_path: Path) -> None:
    """``validateDeviceSubRequest``: a class, a supported mode, a positive count; consumable
    capacity is not modelled here as in ``exactly``."""
    bad = "        - {name: bad, allocationMode: Some, capacity: {requests: {memory: 1Gi}}}"
    lines = problems(tmp_path, template(TWO_L4, bad))
    assert lines == [
        f"{WHERE}.requests[0].firstAvailable[1].deviceClassName: Required value",
        f"{WHERE}.requests[0].firstAvailable[1].capacity: Forbidden: consumable capacity requests "
        "is not modelled",
        f'{WHERE}.requests[0].firstAvailable[1].allocationMode: Unsupported value: "Some": supported '
        'values: "ExactCount", "All"',
    ]


@pytest.mark.parametrize("unknown", ["gpus/one-a100", "gpu", "gpus/two-l4/x"])
def test_a_constraint_naming_an_unknown_request_or_subrequest_is_refused(
    tmp_path: Path, unknown: str
) -> None:
    lines = problems(tmp_path, template(EIGHT_H100, TWO_L4, constrained=unknown))
    assert lines == [
        f'{WHERE}.constraints[0].requests[0]: Invalid value: "{unknown}": must be the name of a request '
        "in the claim or the name of a request and a subrequest separated by '/'"
    ]
