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
import json
from typing import Any

import yaml

from e2e.controlplane import STAGES
from gpufleet.model.quantity import parse_duration, parse_quantity

PULL_AFTER = "gpufleet.io/pull-after"
IMAGE_SIZE = "gpufleet.io/image-size"
_UNITS = ((3600.0, "h"), (60.0, "m"))


def go_duration(seconds: float) -> str:
    """``time.Duration.String()`` to the nanosecond: ``0s``, ``500ms``, ``2.5s``, ``1m30s``, ``1h0m0s``."""
    ns = round(seconds * 1e9)
    if ns == 0:
        return "0s"
    if ns < 1_000_000_000:
        for scale, unit in ((1_000_000, "ms"), (1_000, "µs"), (1, "ns")):
            if ns >= scale:
                return f"{_decimal(ns, scale)}{unit}"
    out, rest = "", ns
    for scale_s, unit in _UNITS:
        scale = int(scale_s * 1e9)
        if rest >= scale or out:
            out += f"{rest // scale}{unit}"
            rest %= scale
    return f"{out}{_decimal(rest, 1_000_000_000)}s"


def _decimal(ns: int, scale: int) -> str:
    whole, frac = divmod(ns, scale)
    digits = str(frac).rjust(len(str(scale)) - 1, "0").rstrip("0")
    return f"{whole}.{digits}" if digits else str(whole)


def pulling_message(image: str) -> str:
    return f"Pulling image {json.dumps(image)}"


def pulled_message(image: str, pull_s: float, size_bytes: int) -> str:
    took = go_duration(pull_s)
    return (
        f"Successfully pulled image {json.dumps(image)} in {took} ({took} including waiting). "
        f"Image size: {size_bytes} bytes."
    )


def image_pull_stages(image: str, pull_after: str, image_size: str) -> list[dict[str, Any]]:
    """The two image Stages for pods whose first container runs ``image`` annotated
    ``gpufleet.io/pull-after: <pull_after>`` and ``gpufleet.io/image-size: <image_size>``."""
    generic = {d["metadata"]["name"]: d for d in yaml.safe_load_all(STAGES.read_text())}
    size = int(parse_quantity(image_size))
    messages = {
        "pod-image-pulling": pulling_message(image),
        "pod-image-pulled": pulled_message(image, parse_duration(pull_after), size),
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
