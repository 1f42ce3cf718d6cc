"""The annotation reference in the repo (docs/annotations.md) names every gpufleet.io annotation the
loader reads, so that none is known only to the code."""

from __future__ import annotations

from pathlib import Path

from gpufleet.kube import pod_annotations

DOC = Path(__file__).resolve().parents[2] / "docs" / "annotations.md"


def test_every_annotation_the_loader_reads_is_in_the_reference() -> None:
    text = DOC.read_text()
    keys = pod_annotations.READ_KEYS | pod_annotations.KWOK_STAGE_KEYS | {pod_annotations.GPU_DEVICES}
    missing = sorted(key for key in keys if f"`{key}`" not in text)
    assert not missing, f"docs/annotations.md lacks {missing}"
