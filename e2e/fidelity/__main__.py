"""``python -m e2e.fidelity --out DIR`` (``make fidelity``): every fidelity case on a fresh control
plane, and the report (``DIR/fidelity.md``, ``DIR/fidelity.json``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from e2e.components import BuildError, build
from e2e.controlplane import ControlPlane, ControlPlaneError
from e2e.fidelity import report
from e2e.fidelity.fixtures import fixture_cases
from e2e.fidelity.real import RealCluster
from e2e.fidelity.run import CaseResult, run_cases
from e2e.fidelity.sources import DEFAULT_GENERATED, example_cases, generated_cases, seed_004_cases


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m e2e.fidelity", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("out/fidelity"))
    parser.add_argument("--generated", type=int, default=DEFAULT_GENERATED, help="how many generated cases")
    parser.add_argument("--first-seed", type=int, default=1)
    args = parser.parse_args(argv)
    cases = [
        *seed_004_cases(),
        *example_cases(),
        *fixture_cases(),
        *generated_cases(args.generated, args.first_seed),
    ]
    try:
        cp = ControlPlane(build()).start()
    except (BuildError, ControlPlaneError) as exc:
        print(f"control plane: {exc}", file=sys.stderr)
        return 2
    try:

        def progress(n: int, result: CaseResult) -> None:
            state = (
                (result.excluded and "excluded")
                or (result.error and "error")
                or f"{result.agreeing}/{len(result.pods)}"
            )
            print(f"[{n}/{len(cases)}] {result.name}: {state}", file=sys.stderr, flush=True)

        results, seconds = run_cases(RealCluster(cp), cases, progress)
        summary = report.write(results, args.out, seconds, cp.started_s)
    finally:
        cp.remove()
    t = summary["kube_scheduler"]
    print(
        f"kube-scheduler: {t['pods_agreeing']}/{t['pods_compared']} pods agree over "
        f"{t['cases_modelled']} modelled cases ({t['not_modelled_pods_agreeing']}/"
        f"{t['not_modelled_pods_compared']} where gpufleet does not model a feature); "
        f"{t['cases_excluded']} excluded, {t['cases_failed']} failed; report: {args.out / 'fidelity.md'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
