"""ImageLocality (``pkg/scheduler/framework/plugins/imagelocality``), Kubernetes 1.34.10.

Score (no NormalizeScore, default weight 1): for each init and app container whose image
(``normalizedImageName``: ``:latest`` added to an untagged reference) is on the node, the image's
size on that node scaled by its spread, the share of all nodes that have it (``scaledImageScore``,
truncated to an integer); the sum is clamped to [23 MiB, 1000 MiB x containers] and mapped onto
0..100 (``calculatePriority``). A node's images are its ``status.images`` (for a NodePool, its
template's: baked into the machine image or pre-pulled) and those the simulated kubelet has pulled
there since; an image of unknown size counts 0 bytes.
"""

from __future__ import annotations

from collections import Counter

from gpufleet.cluster.state import ClusterState
from gpufleet.model.pod import Pod
from gpufleet.scheduling.framework import MAX_NODE_SCORE, StaticScore
from gpufleet.scheduling.registry import register

MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    """``calculatePriority``: the summed image scores mapped onto 0..100."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    clamped = min(max(sum_scores, MIN_THRESHOLD), max_threshold)
    return MAX_NODE_SCORE * (clamped - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


def scaled_image_score(size: int, num_nodes: int, total_nodes: int) -> int:
    """``scaledImageScore``: the size times the share of nodes that have the image (float64, truncated)."""
    return int(float(size) * (float(num_nodes) / float(total_nodes)))


@register
class ImageLocality(StaticScore):
    name = "ImageLocality"
    origin = "kube-scheduler"

    def applies(self, pod: Pod) -> bool:
        return bool(pod.images)

    def raw_column(self, pod: Pod, state: ClusterState, idx: list[int]) -> list[int]:
        active = state.active_indices().tolist()
        wanted = set(pod.images)
        spread: Counter[str] = Counter(name for i in active for name in wanted & state.nodes[i].images.keys())
        if not spread:
            return [0] * len(idx)
        out = []
        for i in idx:
            images = state.nodes[i].images
            present = [name for name in pod.images if name in images]
            total = sum(scaled_image_score(images[name], spread[name], len(active)) for name in present)
            out.append(calculate_priority(total, len(pod.images)))
        return out
