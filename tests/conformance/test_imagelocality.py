"""Upstream's ``pkg/scheduler/framework/plugins/imagelocality/image_locality_test.go`` (Kubernetes
v1.34.10), case by case, against gpufleet's ImageLocality score. Nodes carry upstream's
``v1.NodeStatus.Images`` as read from a Node's ``status.images`` (``kube.nodes``); pods their
containers' images, normalised (``normalizedImageName``); the score of every node is asked at
once, over all nodes of the snapshot (the spread's ``totalNumNodes``).
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import pytest

from gpufleet.cluster.state import ClusterState
from gpufleet.kube.nodes import node
from gpufleet.kube.objects import Meta
from gpufleet.kube.problems import Location, Problems, Reporter
from gpufleet.model.images import normalized_image_name
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.scheduling.plugins.image_locality import MB, ImageLocality

Images = list[tuple[list[str], int]]  # each image's names and size in MiB


def image_node(name: str, images: Images) -> Node:
    status: dict[str, Any] = {
        "capacity": {"pods": "110"},
        "images": [{"names": names, "sizeBytes": size * MB} for names, size in images],
    }
    problems = Problems()
    read = node(Meta(name, ""), {"status": status}, Reporter(problems, Location("nodes.yaml", 0, 1)))
    assert not problems.errors and not problems.warnings
    return read


def image_pod(containers: list[str], init: tuple[str, ...] = ()) -> Pod:
    return Pod("p", images=tuple(normalized_image_name(i) for i in [*init, *containers]))


NODE_403002000: Images = [
    (["gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"], 40),
    (["gcr.io/300:latest", "gcr.io/300:v1"], 300),
    (["gcr.io/2000:latest"], 2000),
]
NODE_25010: Images = [(["gcr.io/250:latest"], 250), (["gcr.io/10:latest", "gcr.io/10:v1"], 10)]
NODE_60040900: Images = [
    (["gcr.io/600:latest"], 600),
    (["gcr.io/40:latest"], 40),
    (["gcr.io/900:latest"], 900),
]
NODE_300600900: Images = [
    (["gcr.io/300:latest"], 300),
    (["gcr.io/600:latest"], 600),
    (["gcr.io/900:latest"], 900),
]
NODE_400030: Images = [(["gcr.io/4000:latest"], 4000), (["gcr.io/30:latest"], 30)]
NODE_203040: Images = [(["gcr.io/20:latest"], 20), (["gcr.io/30:latest"], 30), (["gcr.io/40:latest"], 40)]
NO_IMAGES: Images = []

TEST_40250 = image_pod(["gcr.io/40", "gcr.io/250"])
TEST_40300 = image_pod(["gcr.io/40", "gcr.io/300"])
TEST_MIN_MAX = image_pod(["gcr.io/10", "gcr.io/4000"])
TEST_300600900 = image_pod(["gcr.io/300", "gcr.io/600", "gcr.io/900"])
TEST_3040 = image_pod(["gcr.io/30", "gcr.io/40"])
TEST_30_INIT_300 = image_pod(["gcr.io/30"], init=("gcr.io/300",))

CASES: list[tuple[str, Pod, list[Images], list[int]]] = [
    (
        "two images spread on two nodes, prefer the larger image one",
        TEST_40250,
        [NODE_403002000, NODE_25010],
        [0, 5],
    ),
    ("two images on one node, prefer this node", TEST_40300, [NODE_403002000, NODE_25010], [7, 0]),
    ("if exceed limit, use limit", TEST_MIN_MAX, [NODE_400030, NODE_25010], [100, 0]),
    (
        "if exceed limit, use limit (with node which has no images present)",
        TEST_MIN_MAX,
        [NODE_400030, NODE_25010, NO_IMAGES],
        [66, 0, 0],
    ),
    (
        "pod with multiple large images, node2 is preferred",
        TEST_300600900,
        [NODE_60040900, NODE_300600900, NO_IMAGES],
        [32, 36, 0],
    ),
    ("pod with multiple small images", TEST_3040, [NODE_203040, NODE_400030], [1, 0]),
    (
        "include InitContainers: two images spread on two nodes, prefer the larger image one",
        TEST_30_INIT_300,
        [NODE_403002000, NODE_203040],
        [6, 0],
    ),
]


@pytest.mark.parametrize(
    ("pod", "nodes", "want"), [pytest.param(*c[1:], id=f"TestImageLocalityPriority/{c[0]}") for c in CASES]
)
def test_image_locality_priority(pod: Pod, nodes: list[Images], want: list[int]) -> None:
    state = ClusterState([image_node(f"node{k + 1}", images) for k, images in enumerate(nodes)])
    plugin = ImageLocality()
    assert plugin.applies(pod)
    raw = plugin.raw_column(pod, state, list(range(len(nodes))))
    assert plugin.normalize(np.array(raw, dtype=np.int64)).tolist() == want  # no NormalizeScore upstream


def fake_digest(content: str) -> str:
    """``getImageFakeDigest``."""
    return "sha256:" + hashlib.sha256(content.encode()).hexdigest()


DIGEST = fake_digest("root")


@pytest.mark.parametrize(
    ("image", "want"),
    [
        pytest.param("root", "root:latest", id="TestNormalizedImageName/add :latest postfix 1"),
        pytest.param(
            "gcr.io:5000/root", "gcr.io:5000/root:latest", id="TestNormalizedImageName/add :latest postfix 2"
        ),
        pytest.param("root:tag", "root:tag", id="TestNormalizedImageName/keep it as is 1"),
        pytest.param("root@" + DIGEST, "root@" + DIGEST, id="TestNormalizedImageName/keep it as is 2"),
    ],
)
def test_normalized_image_name(image: str, want: str) -> None:
    assert normalized_image_name(image) == want
