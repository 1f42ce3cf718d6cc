"""A node's kubelet pulls one image at a time, in arrival order, and skips images it has."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpufleet.lifecycle.image_pull import ImagePuller

GB = 10**9
ONE_GB_S = GB


def test_a_missing_image_takes_its_size_over_the_bandwidth() -> None:
    puller = ImagePuller(ONE_GB_S)
    assert puller.request(5.0, "cuda:12", 10 * GB) == 15.0


def test_an_image_already_on_the_node_needs_no_pull() -> None:
    puller = ImagePuller(ONE_GB_S, images=["cuda:12"])
    assert puller.request(5.0, "cuda:12", 10 * GB) == 5.0
    assert puller.request(5.0, "vllm:0.6", 4 * GB) == 9.0  # and does not hold up other pulls


def test_pulls_of_different_images_queue_one_after_another() -> None:
    puller = ImagePuller(ONE_GB_S)
    assert puller.request(0.0, "trainer", 10 * GB) == 10.0
    assert puller.request(2.0, "server", 5 * GB) == 15.0
    assert puller.request(3.0, "notebook", 1 * GB) == 16.0


def test_a_second_pod_waits_for_the_pull_already_under_way() -> None:
    puller = ImagePuller(ONE_GB_S)
    assert puller.request(0.0, "trainer", 10 * GB) == 10.0
    assert puller.request(4.0, "trainer", 10 * GB) == 10.0
    assert puller.request(4.0, "server", 5 * GB) == 15.0  # the bandwidth went to one pull only


def test_the_image_is_on_the_node_once_its_pull_completes() -> None:
    puller = ImagePuller(ONE_GB_S, images=["pause"])
    puller.request(0.0, "trainer", 10 * GB)
    assert puller.images(9.5) == {"pause"}
    assert puller.images(10.0) == {"pause", "trainer"}
    assert puller.request(12.0, "trainer", 10 * GB) == 12.0


def test_an_idle_puller_starts_at_the_request() -> None:
    puller = ImagePuller(ONE_GB_S)
    puller.request(0.0, "trainer", 10 * GB)
    assert puller.request(100.0, "server", 5 * GB) == 105.0


def test_misuse_is_refused() -> None:
    puller = ImagePuller(ONE_GB_S)
    puller.request(10.0, "trainer", GB)
    with pytest.raises(ValueError, match="time went backwards"):
        puller.request(9.0, "server", GB)
    with pytest.raises(ValueError, match="image size must be a non-negative"):
        puller.request(10.0, "server", -1)
    with pytest.raises(ValueError, match="bandwidth must be a positive"):
        ImagePuller(float("nan"))


REQUESTS = st.lists(
    st.tuples(
        st.floats(0, 100, allow_nan=False), st.sampled_from("abcdefg"), st.floats(0, 50 * GB, allow_nan=False)
    ),
    max_size=40,
)


@settings(max_examples=200, deadline=None)
@given(requests=REQUESTS, bandwidth=st.floats(1e6, 1e10, allow_nan=False))
def test_pulls_never_overlap_and_each_image_is_pulled_once(
    requests: list[tuple[float, str, float]], bandwidth: float
) -> None:
    puller = ImagePuller(bandwidth)
    pulled: dict[str, tuple[float, float]] = {}  # image -> (start, ready) of its one pull
    busy_until = 0.0
    for now, image, size in sorted(requests, key=lambda r: r[0]):
        ready = puller.request(now, image, size)
        if image not in pulled:
            start = max(now, busy_until)
            assert ready == start + size / bandwidth
            pulled[image] = (start, ready)
            busy_until = ready
        elif pulled[image][1] <= now:
            assert ready == now
        else:
            assert ready == pulled[image][1]
        assert puller.images(now) == {name for name, (_, done) in pulled.items() if done <= now}
