"""The kubelet's image messages as ``e2e.kubelet_images`` renders them for kwok's Stages: Go's
``time.Duration.String()`` and the formats of k8s.io/kubernetes v1.34.10
``pkg/kubelet/images/image_manager.go``, read back by the measurement's parser."""

from __future__ import annotations

import pytest
from e2e.kubelet_images import image_pull_stages

from gpufleet.live.startup_objects import read_pulled
from gpufleet.model.kubelet_events import pulled_message, pulling_message
from gpufleet.model.quantity import go_duration


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0s"),
        (0.5, "500ms"),
        (0.0015, "1.5ms"),
        (2, "2s"),
        (2.5, "2.5s"),
        (90, "1m30s"),
        (3600, "1h0m0s"),
        (3723.25, "1h2m3.25s"),
    ],
)
def test_go_duration_is_time_duration_string(seconds: float, text: str) -> None:
    assert go_duration(seconds) == text


def test_the_image_messages_are_the_kubelets_and_read_back_as_the_pull_took() -> None:
    image = "registry.example.com/llm-server:v1"
    assert pulling_message(image) == 'Pulling image "registry.example.com/llm-server:v1"'
    message = pulled_message(image, 92.5, 92.5, 10**10)
    assert message == (
        'Successfully pulled image "registry.example.com/llm-server:v1" in 1m32.5s (1m32.5s including '
        "waiting). Image size: 10000000000 bytes."
    )
    pulled = read_pulled(message)
    assert pulled is not None and (pulled.image, pulled.pull_s, pulled.size_bytes) == (image, 92.5, 10**10)


def test_the_rendered_stages_outweigh_the_generic_ones_for_that_image_only() -> None:
    """kwok plays the heaviest of the Stages that match (``lifecycle.Match``): weight 1 beats the
    generic stages' 0, and the selector names the image, the pull time and the size."""
    pulling, pulled = image_pull_stages("r.example/x:1", "90s", "2Gi")
    assert pulling["spec"]["weight"] == pulled["spec"]["weight"] == 1
    assert pulling["spec"]["next"]["event"] == {
        "type": "Normal",
        "reason": "Pulling",
        "message": 'Pulling image "r.example/x:1"',
    }
    assert pulled["spec"]["next"]["event"]["message"].startswith(
        'Successfully pulled image "r.example/x:1" in 1m30s '
    )
    selected = {
        (e["key"], tuple(e.get("values", ()))) for e in pulled["spec"]["selector"]["matchExpressions"]
    }
    assert (".spec.containers.[0].image", ("r.example/x:1",)) in selected
    assert ('.metadata.annotations["gpufleet.io/pull-after"]', ("90s",)) in selected
    assert ('.metadata.annotations["gpufleet.io/image-size"]', ("2Gi",)) in selected
