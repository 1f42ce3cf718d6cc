"""The kubelet's container restarts and the pod phase they leave.

Upstream: ``k8s.io/kubernetes`` v1.34.10 (feature gates at 1.34's defaults: ``ContainerRestartRules`` off):

- ``pkg/kubelet/container/helpers_test.go`` ``TestShouldContainerBeRestarted``: whether the kubelet starts
  a container again, by its last state and the pod's ``restartPolicy``;
- ``pkg/kubelet/kubelet_pods_test.go`` ``TestPodPhaseWithRestartAlways``, ``TestPodPhaseWithRestartNever``
  and ``TestPodPhaseWithRestartOnFailure``: ``getPhase``, the pod phase from its containers' states.

Both through the simulator (``sim.pod_lifecycle``): a bare pod ``default/p`` (1 GPU) whose one container
(gpufleet models a pod's first container) exits with ``gpufleet.io/exit-code`` after 60 s of work, read at
a chosen time. Upstream's two containers in the same state are that one container; a container exited
with ``exitCode`` -1 (``failedState``) is the annotation ``"-1"``. A container ``stoppedState`` (exit 0)
and one waiting with a last termination are, in the simulation, one waiting out its back-off after it
exited; ``waiting`` (no container status yet) is a pod bound to its node whose image is still being
pulled.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import NODE_N0, pods_by_name, simulated, write

ONE_CONTAINER = "gpufleet models a pod's first container only: no pod of two containers in different states"
NO_TERMINAL_POD = (
    "podIsTerminal: the kubelet terminating a pod (deleted, evicted); gpufleet ends such a pod Failed with "
    "its deletion's reason (sim.pod_lifecycle.terminated), never through getPhase"
)
NO_CONTAINER_STATE = (
    "gpufleet keeps no container status of its own: a container never started, in state Unknown or Created, "
    "is not one it can be asked about"
)
NO_DELETED_POD = (
    "a deleted pod's container ends with it after its grace period (sim.pod_lifecycle.evict): no restart is "
    "asked of it"
)
NO_INIT_CONTAINERS = (
    "init containers and sidecars have no state of their own in gpufleet (their requests only)"
)

IMAGE_PULLING = "gpufleet.io/image-size: 100GB"


def phase_and_restarts(
    tmp_path: Path, policy: str, code: int, at_s: float, extra: str = ""
) -> tuple[str, int]:
    """The pod's phase and ``restartCount`` at ``at_s``: its container, under ``restartPolicy`` ``policy``,
    exits ``code`` after 60 s of work (restarted at once at 60 s where it is, then after a 10 s back-off
    at 120 s: waiting from 120 s to 130 s)."""
    annotations = f'gpufleet.io/duration: 60s, gpufleet.io/exit-code: "{code}"{", " + extra if extra else ""}'
    text = f"""
---
apiVersion: v1
kind: Pod
metadata: {{name: p, annotations: {{{annotations}}}}}
spec:
  restartPolicy: {policy}
  containers: [{{name: main, image: trainer, resources: {{limits: {{nvidia.com/gpu: "1"}}}}}}]
"""
    p = pods_by_name(simulated(write(tmp_path, NODE_N0, text), duration_s=at_s))["p"]
    return p["phase"], p["restarts"]


# TestShouldContainerBeRestarted: container -> (its exit code, when it is read: running at 30 s, exited at
# 60 s and read at 90 s) or None where gpufleet cannot be asked, then whether it is restarted under Never,
# OnFailure and Always; the deleted pod's rows: never
POLICIES = ("Never", "OnFailure", "Always")
SHOULD_RESTART: dict[str, tuple[tuple[int, float] | None, tuple[bool, bool, bool]]] = {
    "no-history": (None, (True, True, True)),
    "alive": ((0, 30.0), (False, False, False)),
    "succeed": ((0, 90.0), (False, False, True)),
    "failed": ((3, 90.0), (False, True, True)),  # its latest status: exit code 3 (the first in the list, 1)
    "unknown": (None, (True, True, True)),
}


def _restart_rows() -> list[object]:
    rows: list[object] = []
    for container, (state, expected) in SHOULD_RESTART.items():
        code, at_s = state or (0, 0.0)
        marks = [] if state is not None else [pytest.mark.skip(reason=NO_CONTAINER_STATE)]
        for policy, restarted in zip(POLICIES, expected, strict=True):
            name = f"TestShouldContainerBeRestarted/{container}/{policy}"
            rows.append(pytest.param(policy, code, at_s, restarted, id=name, marks=marks))
    return rows


@pytest.mark.parametrize(("policy", "code", "at_s", "restarted"), _restart_rows())
def test_should_container_be_restarted(
    tmp_path: Path, policy: str, code: int, at_s: float, restarted: bool
) -> None:
    """Whether the container was started again by ``at_s`` (the one that exited at 60 s: at once, its
    first back-off being 0)."""
    assert phase_and_restarts(tmp_path, policy, code, at_s)[1] == (1 if restarted else 0)


@pytest.mark.parametrize(
    "container",
    [
        pytest.param(
            c,
            id=f"TestShouldContainerBeRestarted/deleted pod/{c}",
            marks=pytest.mark.skip(reason=NO_DELETED_POD),
        )
        for c in SHOULD_RESTART
    ],
)
def test_should_container_be_restarted_of_a_deleted_pod(container: str) -> None:
    raise AssertionError("skipped")


# getPhase: test -> (restartPolicy, exit code, time read, annotations, want phase); None: skipped with reason
ALWAYS, NEVER, ON_FAILURE = (
    "TestPodPhaseWithRestartAlways",
    "TestPodPhaseWithRestartNever",
    "TestPodPhaseWithRestartOnFailure",
)
PHASE_ROWS: dict[str, tuple[str, int, float, str, str] | str] = {
    f"{ALWAYS}/waiting": ("Always", 0, 1.0, IMAGE_PULLING, "Pending"),
    f"{ALWAYS}/all running": ("Always", 0, 30.0, "", "Running"),
    f"{ALWAYS}/all stopped with restart always": ("Always", 0, 125.0, "", "Running"),
    f"{ALWAYS}/all succeeded with restart always, but the pod is terminal": NO_TERMINAL_POD,
    f"{ALWAYS}/all stopped with restart always, but the pod is terminal": NO_TERMINAL_POD,
    f"{ALWAYS}/mixed state #1 with restart always": ONE_CONTAINER,
    f"{ALWAYS}/mixed state #2 with restart always": ONE_CONTAINER,
    f"{ALWAYS}/mixed state #3 with restart always": ONE_CONTAINER,
    f"{ALWAYS}/backoff crashloop container with restart always": ("Always", 0, 125.0, "", "Running"),
    f"{NEVER}/waiting": ("Never", 0, 1.0, IMAGE_PULLING, "Pending"),
    f"{NEVER}/all running with restart never": ("Never", 0, 30.0, "", "Running"),
    f"{NEVER}/all succeeded with restart never": ("Never", 0, 90.0, "", "Succeeded"),
    f"{NEVER}/all failed with restart never": ("Never", -1, 90.0, "", "Failed"),
    f"{NEVER}/mixed state #1 with restart never": ONE_CONTAINER,
    f"{NEVER}/mixed state #2 with restart never": ONE_CONTAINER,
    f"{NEVER}/mixed state #3 with restart never": ONE_CONTAINER,
    f"{ON_FAILURE}/waiting": ("OnFailure", 0, 1.0, IMAGE_PULLING, "Pending"),
    f"{ON_FAILURE}/all running with restart onfailure": ("OnFailure", 0, 30.0, "", "Running"),
    f"{ON_FAILURE}/all succeeded with restart onfailure": ("OnFailure", 0, 90.0, "", "Succeeded"),
    f"{ON_FAILURE}/all failed with restart never": ("OnFailure", -1, 90.0, "", "Running"),
    f"{ON_FAILURE}/mixed state #1 with restart onfailure": ONE_CONTAINER,
    f"{ON_FAILURE}/mixed state #2 with restart onfailure": ONE_CONTAINER,
    f"{ON_FAILURE}/mixed state #3 with restart onfailure": ONE_CONTAINER,
    # upstream's last termination is exit 0; OnFailure restarts only a failed container: here exit 1
    f"{ON_FAILURE}/backoff crashloop container with restart onfailure": (
        "OnFailure",
        1,
        125.0,
        "",
        "Running",
    ),
}
OTHER_PHASE_TESTS = (
    "TestPodPhaseWithRestartAlwaysInitContainers",
    "TestPodPhaseWithRestartAlwaysRestartableInitContainers",
    "TestPodPhaseWithRestartAlwaysAndPodHasRun",
    "TestPodPhaseWithRestartNeverInitContainers",
    "TestPodPhaseWithRestartNeverRestartableInitContainers",
)


def _phase_rows() -> list[object]:
    rows: list[object] = []
    for name, row in PHASE_ROWS.items():
        if isinstance(row, str):
            rows.append(pytest.param("", 0, 0.0, "", "", id=name, marks=pytest.mark.skip(reason=row)))
        else:
            rows.append(pytest.param(*row, id=name))
    skip = pytest.mark.skip(reason=NO_INIT_CONTAINERS)
    rows += [pytest.param("", 0, 0.0, "", "", id=name, marks=skip) for name in OTHER_PHASE_TESTS]
    return rows


@pytest.mark.parametrize(("policy", "code", "at_s", "extra", "phase"), _phase_rows())
def test_get_phase(tmp_path: Path, policy: str, code: int, at_s: float, extra: str, phase: str) -> None:
    assert phase_and_restarts(tmp_path, policy, code, at_s, extra)[0] == phase
