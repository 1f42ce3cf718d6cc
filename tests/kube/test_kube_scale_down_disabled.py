"""cluster-autoscaler's node annotation ``cluster-autoscaler.kubernetes.io/scale-down-disabled``
(``eligibility.HasNoScaleDownAnnotation``: the value ``"true"`` only) is read, not dropped."""

from __future__ import annotations

from pathlib import Path

import pytest
from kube_manifests import NODE, load


@pytest.mark.parametrize(("value", "disabled"), [('"true"', True), ('"false"', False), ('"yes"', False)])
def test_scale_down_disabled_annotation_marks_the_node(tmp_path: Path, value: str, disabled: bool) -> None:
    text = NODE.replace(
        "  name: gpu-0\n",
        f"  name: gpu-0\n  annotations: {{cluster-autoscaler.kubernetes.io/scale-down-disabled: {value}}}\n",
    )
    (node,) = load(tmp_path, text).nodes
    assert node.scale_down_disabled is disabled
