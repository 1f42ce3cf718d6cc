"""gpufleet's cluster-autoscaler held against the real one (1.34.5, its ``kwok`` cloud provider, on
the test control plane): the same node groups and pending pods, the same expander and scale-down
settings, and the same decision (which groups grow by how many nodes, each pod's
``NotTriggerScaleUp`` message, which nodes scale-down removes); see ``e2e/fidelity/autoscaler_*``.

The Go module proxy refuses ``k8s.io/autoscaler/cluster-autoscaler``, so ``make test`` cannot build
it: these tests run where a binary was given (``GPUFLEET_CLUSTER_AUTOSCALER``, or the cache path
``e2e.components.cluster_autoscaler`` names) and are skipped with that reason elsewhere.
"""

from __future__ import annotations

import pytest
from e2e.components import CLUSTER_AUTOSCALER_REFUSED, cluster_autoscaler
from e2e.fidelity.autoscaler_cases import autoscaler_cases
from e2e.fidelity.run import Fidelity

CASES = autoscaler_cases()


def test_there_are_at_least_twenty_cases_of_every_kind() -> None:
    kinds = {c.kind for c in CASES}
    assert len(CASES) >= 20 and kinds == {"scale-up", "no-scale-up", "scale-down"}


@pytest.mark.parametrize("name", [c.name for c in CASES])
def test_gpufleet_decides_as_cluster_autoscaler_does(fidelity: Fidelity, name: str) -> None:
    if cluster_autoscaler() is None:
        pytest.skip(f"no cluster-autoscaler binary: {CLUSTER_AUTOSCALER_REFUSED}")
    assert fidelity.autoscaler is not None
    result = next(r for r in fidelity.autoscaler if r.name == name)
    assert not result.error, result.error
    assert result.agrees, result.why
