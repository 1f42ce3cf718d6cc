"""``python -m bench [--quick] [--in-process] [--profile]``: print scheduler figures.

Exits 1 when a pod or gang was left unbound (an outcome, not a time, is wrong).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from bench.cli_start import describe_cli_start
from bench.day import QUICK, describe_sizes, run_sizes
from bench.devices import describe_devices
from bench.live import describe_live, run_live
from bench.month import WEEK_DAYS, describe_month, run_month, run_month_isolated
from bench.replay import describe_grid_slice, describe_replays
from bench.scheduler_live import complete as all_bound
from bench.scheduler_live import describe_scheduler_live, run_scheduler_live
from bench.scheduling import (
    adaptive_cost,
    cases,
    complete,
    describe,
    device_level_cost,
    run_case,
    run_isolated,
    size_cost,
    spreading_cost,
    table,
)
from bench.summary_write import day_summary, describe_summary_write, measure


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="200 nodes, 10 gangs: a CI smoke run")
    parser.add_argument("--in-process", action="store_true", help="run every case in this process")
    parser.add_argument("--profile", action="store_true", help="print cProfile's top functions per case")
    parser.add_argument(
        "--month-days",
        type=float,
        default=WEEK_DAYS,
        help=f"days of the 1,000-node month bench (default {WEEK_DAYS:g}, a few minutes; 30: the month)",
    )
    args = parser.parse_args(argv)
    results = []
    for case in cases(args.quick):
        result = run_case(case, args.profile) if args.in_process else run_isolated(case, args.profile)
        print(describe(result), flush=True)
        if result.profile:
            print(result.profile, flush=True)
        results.append(result)
    print()
    print(table(results))
    print()
    print("\n".join(device_level_cost(results)))
    print("\n".join(spreading_cost(results)))
    print("\n".join(adaptive_cost(results)))
    for line in size_cost(results):  # (none in --quick: one size)
        print(line)
    print(describe_cli_start(2 if args.quick else 5), flush=True)
    print(describe_devices(200, 1_600) if args.quick else describe_devices(5_000, 40_000), flush=True)
    for line in describe_sizes(run_sizes((1,), QUICK) if args.quick else run_sizes()):
        print(line, flush=True)
    print(describe_summary_write(measure(day_summary(*QUICK) if args.quick else day_summary())))
    month = run_month(0.05, 1.0) if args.quick else run_month_isolated(days=args.month_days)  # own peak RSS
    print(describe_month(month), flush=True)
    bound = True
    if not args.quick:
        for line in describe_replays():
            print(line, flush=True)
        print(describe_grid_slice(), flush=True)
        print(describe_live(run_live()), flush=True)
        scheduler_live = run_scheduler_live()
        print(describe_scheduler_live(scheduler_live), flush=True)
        bound = all_bound(scheduler_live)
    return 0 if all(complete(r) for r in results) and bound else 1


if __name__ == "__main__":
    raise SystemExit(main())
