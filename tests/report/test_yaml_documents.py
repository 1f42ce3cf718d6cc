"""``report.output.yaml_documents``: manifests written by libyaml's emitter (issue 18: a trace's 8,152
pods in a fifth of the CPU of PyYAML's own emitter), read back as the same documents, and as PyYAML
writes them on the manifests gpufleet writes."""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.model.resources import CPU, GPU, MEMORY
from gpufleet.report.output import yaml_documents
from gpufleet.traces.base import TracePod
from gpufleet.traces.manifests import node_manifest, pod_manifest, simulation_manifest

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text())
VALUES = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4)
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.dictionaries(st.text(), VALUES, max_size=5), max_size=3))
def test_any_documents_read_back_as_they_were(documents: list[dict[str, Any]]) -> None:
    assert list(yaml.safe_load_all(yaml_documents(documents))) == documents


def test_a_traces_manifests_are_the_text_pyyamls_own_emitter_writes() -> None:
    """``gpufleet trace import``'s files, byte for byte as ``yaml.safe_dump_all`` wrote them before."""
    node = Node(
        "gpu-ñ-0", labels={"nvidia.com/gpu.product": "Tesla-V100-SXM2-16GB"}, capacity={CPU: 96_000, GPU: 8}
    )
    pods = [
        TracePod(Pod("openb-pod-0001", requests={CPU: 4_000, MEMORY: 2**34, GPU: 1}), 12.5, 3_600.0),
        TracePod(Pod("openb-pod-0002", requests={CPU: 500}), 0.0, None),
    ]
    for documents in (
        [node_manifest(node)],
        [pod_manifest(p) for p in pods],
        [simulation_manifest(pods, "t")],
    ):
        assert yaml_documents(documents) == yaml.safe_dump_all(documents, sort_keys=False)
