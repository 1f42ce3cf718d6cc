"""A controller's pod stamped from its template (``Pod.stamped``): the template's fields under the
controller's name, owner and namespace, with labels and annotations of its own."""

from __future__ import annotations

from dataclasses import replace

from gpufleet.model.gpu_share import GpuShare
from gpufleet.model.pod import OwnerRef, Pod


def _template() -> Pod:
    return Pod(
        "tmpl",
        "team-a",
        labels={"app": "serve"},
        annotations={"gpufleet.io/duration": "1h"},
        requests={"cpu": 2000, "nvidia.com/gpu": 1},
        priority=7,
        gpu_share=GpuShare(1, compute_milli=500),
    )


def test_a_stamped_pod_is_the_template_with_the_controllers_name_owner_and_labels() -> None:
    """What ``dataclasses.replace`` gives, field for field (the copy's own labels merged over the
    template's), in the template's namespace unless given another."""
    template, owner = _template(), OwnerRef("Job", "train")
    pod = template.stamped("train-0", owner, {"index": "0"})
    expected = replace(
        template,
        name="train-0",
        owner=owner,
        labels={"app": "serve", "index": "0"},
        annotations={"gpufleet.io/duration": "1h"},
    )
    assert pod == expected and pod.key == "team-a/train-0"
    assert template.stamped("x", owner, namespace="team-b").key == "team-b/x"


def test_a_stamped_pods_labels_and_annotations_are_its_own() -> None:
    """Changing a stamped pod's labels or annotations (a controller's stamp, a status) leaves the
    template and its other pods as they were."""
    template = _template()
    first, second = template.stamped("a", OwnerRef("Job", "j")), template.stamped("b", OwnerRef("Job", "j"))
    first.labels["index"] = "0"
    first.annotations["note"] = "x"
    assert template.labels == second.labels == {"app": "serve"}
    assert template.annotations == second.annotations == {"gpufleet.io/duration": "1h"}
    assert template.name == "tmpl" and template.owner is None
