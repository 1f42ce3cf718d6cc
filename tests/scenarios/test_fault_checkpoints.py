"""examples/faults: a training gang under faults loses less work, and keeps more goodput, the more often
it checkpoints (the README's sweep, one seed here)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import ROOT, simulated, write

EXAMPLE = ROOT / "examples" / "faults" / "training.yaml"


def test_more_frequent_checkpoints_keep_more_goodput(tmp_path: Path) -> None:
    text = EXAMPLE.read_text()
    assert "gpufleet.io/checkpoint-interval: 1h" in text
    goodput, lost = {}, {}
    for interval in ("10m", "6h"):
        scenario = text.replace("checkpoint-interval: 1h", f"checkpoint-interval: {interval}")
        folder = tmp_path / interval
        folder.mkdir()
        (path,) = write(folder, scenario)
        faults = simulated([path], seed=2)["faults"]["totals"]
        assert faults["faults"] >= 3  # the same faults drawn from the seed in both runs
        goodput[interval], lost[interval] = faults["goodput"], faults["work_lost_gpu_hours"]
    # (a gang waits, its GPUs allocated, while the control plane learns of a rank's node down: NotReady at
    # 50 s, a lost node's pods deleted by PodGC at 100 s, a rebooting one's by the taint eviction at 350 s)
    assert goodput["10m"] > 0.98 > 0.7 > goodput["6h"]
    assert lost["10m"] < lost["6h"] / 5
