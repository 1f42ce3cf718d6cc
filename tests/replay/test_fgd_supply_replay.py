"""FGDSupply (``plugins.fgd_supply``) as a policy of the FGD paper's replay protocol (docs/fgd-protocol.md):
selectable as ``--policy FGDSupply``, and on the default trace it leaves fewer GPUs unallocated than FGD."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from gpufleet.cli import app
from gpufleet.replay.fgd_protocol import POLICIES, replay
from shared_files import TRACES, needs_traces


def test_replay_cli_runs_fgdsupply(tmp_path: Path) -> None:
    """Two T4 GPUs with 8 cpu; a CPU-only 6-cpu pod and two 1-GPU 1-cpu pods: all three fit."""
    (tmp_path / "nodes.csv").write_text("sn,cpu_milli,memory_mib,gpu,model\nn1,8000,262144,2,T4\n")
    (tmp_path / "pods.csv").write_text(
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np1,6000,1024,0,0\np2,1000,1024,1,1000\np3,1000,1024,1,1000\n"
    )
    args = ["replay", "--nodes", str(tmp_path / "nodes.csv"), "--pods", str(tmp_path / "pods.csv")]
    result = CliRunner().invoke(app, [*args, "--policy", "FGDSupply", "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    data = json.loads((tmp_path / "o" / "replay.json").read_text())
    assert data["policy"] == "FGDSupply" and data["unallocated_gpu_pct_at_100"] == 0.0
    assert "FGDSupply" in POLICIES


@needs_traces
def test_default_trace_fgdsupply_leaves_fewer_gpus_unallocated_than_fgd() -> None:
    """Seed 42: FGD about 4.8 %, FGDSupply about 4.1 % (README's table: the mean over seeds 42..51)."""
    from gpufleet.traces.openb import read_nodes, read_pods

    nodes = read_nodes(TRACES / "openb_node_list_gpu_node.csv")
    pods = [p.pod for p in read_pods(TRACES / "openb_pod_list_default.csv")]
    fgd, supply = (
        replay(nodes, pods, policy, 42).unallocated_gpu_pct_at_100 for policy in ("FGD", "FGDSupply")
    )
    assert fgd is not None and supply is not None
    assert supply < fgd - 0.3
