"""``gpufleet describe pod`` shows a terminated container's state as ``kubectl describe pod`` does
(``k8s.io/kubectl`` v0.34.10 ``pkg/describe/describe.go``: ``describeContainerState``, ``describeStatus``):
``State:`` / ``Last State:`` ``Terminated`` with its Reason, Message, Exit Code, Started and Finished, for a
simulated pod (``summary.json``'s ``pods[].terminated`` and ``last_terminated``) and for a kubectl dump's
``status.containerStatuses``."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from gpufleet.cli import app

runner = CliRunner()
OOM = Path(__file__).resolve().parents[2] / "examples" / "gpu-sharing" / "time-slicing-oom.yaml"


def describe(*args: str) -> list[str]:
    result = runner.invoke(app, ["describe", "pod", *args])
    assert result.exit_code == 0, result.output
    return result.output.splitlines()


def block(lines: list[str], label: str) -> list[str]:
    """The line ``    <label>: ...`` and the deeper lines under it."""
    start = next(i for i, line in enumerate(lines) if line.startswith(f"    {label}:"))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith("      ")), len(lines))
    return lines[start:end]


def test_an_oom_killed_pod_shows_its_container_terminated_with_exit_code_137() -> None:
    lines = describe("infer-b", str(OOM))
    assert "  server:" in lines
    state = block(lines, "State")
    assert state[:3] == [
        "    State:          Terminated",
        "      Reason:       OOMKilled",
        "      Exit Code:    137",
    ]
    assert state[3:] == ["      Finished:     t=1m (simulated)"]  # (the record keeps no start of a crash)
    assert not any(line.startswith("    Last State:") for line in lines)


def test_a_container_restarted_after_cuda_out_of_memory_shows_its_last_state(tmp_path: Path) -> None:
    path = tmp_path / "oom.yaml"
    path.write_text(OOM.read_text().replace("restartPolicy: Never", "restartPolicy: OnFailure"))
    lines = describe("infer-b", str(path))
    assert block(lines, "Last State") == [
        "    Last State:     Terminated",
        "      Reason:       OOMKilled",
        "      Exit Code:    137",
    ]
    assert not any(line.startswith("    State:") for line in lines)


def test_a_kubectl_dump_pods_terminated_state_and_last_state_are_shown(tmp_path: Path) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "train-0", "namespace": "ml"},
        "spec": {"nodeName": "gpu-0", "containers": [{"name": "main", "image": "trainer"}]},
        "status": {
            "phase": "Failed",
            "containerStatuses": [
                {
                    "name": "main",
                    "ready": False,
                    "restartCount": 1,
                    "image": "trainer",
                    "imageID": "",
                    "state": {
                        "terminated": {
                            "exitCode": 42,
                            "reason": "Error",
                            "startedAt": "2025-01-01T00:00:00Z",
                            "finishedAt": "2025-01-01T00:10:00Z",
                        }
                    },
                    "lastState": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}},
                }
            ],
        },
    }
    path = tmp_path / "dump.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [pod]}))
    lines = describe("ml/train-0", str(path))
    assert block(lines, "State") == [
        "    State:          Terminated",
        "      Reason:       Error",
        "      Exit Code:    42",
        "      Started:      2025-01-01T00:00:00Z",
        "      Finished:     2025-01-01T00:10:00Z",
    ]
    assert block(lines, "Last State") == [
        "    Last State:     Terminated",
        "      Reason:       OOMKilled",
        "      Exit Code:    137",
    ]
