"""The kubelet's image events, word for word, as kwok Stages rendered for one image.

kwok v0.7 writes a Stage's event message literally (``StageEvent.message``), so the generic
``pod-image-pulling`` and ``pod-image-pulled`` Stages of ``e2e/kwok/stages.yaml`` can only say
"Pulling image" and "Successfully pulled image". For an image a test uses, ``image_pull_stages``
copies those two Stages with the kubelet's own messages (k8s.io/kubernetes v1.34.10
``pkg/kubelet/images/image_manager.go``: ``Pulling image %q`` and ``Successfully pulled image %q in
%v (%v including waiting). Image size: %v bytes.``, the durations in Go's ``time.Duration`` form),
selected by the pod's first container image and its ``gpufleet.io/pull-after`` and
``gpufleet.io/image-size`` annotations, and gives them weight 1: where both match, kwok plays the
heavier one (``lifecycle.Match``). ``ControlPlane.restart_kwok`` loads them.
"""

from __future__ import annotations

import copy
from typing import Any

import yaml

from e2e.controlplane import STAGES
from gpufleet.model.kubelet_events import pulled_message, pulling_message
from gpufleet.model.quantity import parse_duration, parse_quantity

PULL_AFTER = "gpufleet.io/pull-after"
IMAGE_SIZE = "gpufleet.io/image-size"


def image_pull_stages(image: str, pull_after: str, image_size: str) -> list[dict[str, Any]]:
    """The two image Stages for pods whose first container runs ``image`` annotated
    ``gpufleet.io/pull-after: <pull_after>`` and ``gpufleet.io/image-size: <image_size>``."""
    generic = {d["metadata"]["name"]: d for d in yaml.safe_load_all(STAGES.read_text())}
    size, took = int(parse_quantity(image_size)), parse_duration(pull_after)
    messages = {
        "pod-image-pulling": pulling_message(image),
        "pod-image-pulled": pulled_message(image, took, took, size),
    }
    key = f"{image}-{pull_after}-{size}".replace("/", "-").replace(":", "-").replace(".", "-").lower()
    stages = []
    for name, message in messages.items():
        stage = copy.deepcopy(generic[name])
        stage["metadata"]["name"] = f"{name}-{key}"[:253]
        spec = stage["spec"]
        spec["weight"] = 1
        spec["next"]["event"]["message"] = message
        spec["selector"]["matchExpressions"] += [
            {"key": ".spec.containers.[0].image", "operator": "In", "values": [image]},
            {"key": f'.metadata.annotations["{PULL_AFTER}"]', "operator": "In", "values": [pull_after]},
            {"key": f'.metadata.annotations["{IMAGE_SIZE}"]', "operator": "In", "values": [image_size]},
        ]
        stages.append(stage)
    return stages
