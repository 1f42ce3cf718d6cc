"""``python -m tests.fuzz.run [--surface NAME ...] [--seconds N] [--out DIR]``: coverage-guided fuzzing.

Runs atheris (libFuzzer for Python) on each input surface of ``fuzz_surfaces`` for ``--seconds``, in a
child process per surface, starting from the surface's seeds (examples and ``tests/fuzz/corpus``), with
gpufleet's modules instrumented. libFuzzer bounds each input (``-timeout``: a hang is a finding) and the
process's memory (``-rss_limit_mb``: a blow-up is a finding); an exception other than the reader's own
one-line error is a crash, saved under ``OUT/SURFACE/crash-*``: copy it into
``tests/fuzz/corpus/SURFACE/`` with the fix, so the corpus replay keeps it fixed. Prints, per surface,
the inputs tried (libFuzzer's ``#N``), the coverage reached (``cov``: code edges, ``ft``: features),
the corpus size and the findings; exits 1 when a surface found something.
"""

from __future__ import annotations

import argparse
import glob
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
#: libFuzzer's status lines: ``#4096	pulse  cov: 2843 ft: 9031 corp: 310/98Kb ...``.
_STATUS = re.compile(r"^#(\d+)\s+\w+\s+cov: (\d+) ft: (\d+) corp: (\d+)/")
_FINDING = re.compile(r"^==\d+== ERROR: libFuzzer: (.*)$|^=== Uncaught Python exception: ===$")
_ARTIFACT = re.compile(r"Test unit written to (\S+)")
#: Seconds one input may take, and the memory the process may use, before libFuzzer reports it.
INPUT_TIMEOUT_S = 10
RSS_LIMIT_MB = 2048
MAX_LEN = 16384


@dataclass
class Result:
    surface: str
    execs: int = 0
    cov: int = 0
    ft: int = 0
    corpus: int = 0
    findings: int = 0
    artifacts: tuple[str, ...] = ()

    def line(self) -> str:
        found = f"{self.findings} finding(s): {', '.join(self.artifacts)}" if self.findings else "no findings"
        return (
            f"{self.surface:<17} {self.execs:>9,} inputs  cov {self.cov:>6,}  ft {self.ft:>7,}  "
            f"corpus {self.corpus:>5,}  {found}"
        )


def parse(surface: str, output: str) -> Result:
    """The figures of one libFuzzer run's output."""
    result = Result(surface)
    artifacts: list[str] = []
    for line in output.splitlines():
        if status := _STATUS.match(line):
            result.execs, result.cov, result.ft, result.corpus = (int(g) for g in status.groups())
        elif _FINDING.match(line):
            result.findings += 1
        elif artifact := _ARTIFACT.search(line):
            artifacts.append(artifact.group(1))
    result.artifacts = tuple(artifacts)
    return result


def _seed(surface: str, folder: Path) -> None:
    from fuzz_surfaces import SURFACES

    folder.mkdir(parents=True, exist_ok=True)
    for pattern in SURFACES[surface].seeds:
        for name in sorted(glob.glob(str(ROOT / pattern), recursive=True)):
            source = Path(name)
            if source.is_file() and source.stat().st_size <= MAX_LEN:
                shutil.copy(source, folder / f"{source.parent.name}-{source.name}")


def fuzz(surface: str, seconds: int, out: Path) -> Result:
    """One surface fuzzed for ``seconds`` in a child process; its libFuzzer output in ``OUT/SURFACE.log``."""
    work = out / surface
    shutil.rmtree(work, ignore_errors=True)
    seeds, corpus, scratch = work / "seeds", work / "corpus", work / "scratch"
    _seed(surface, seeds)
    corpus.mkdir(parents=True)
    scratch.mkdir()
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        surface,
        str(scratch),
        str(corpus),
        str(seeds),
        f"-max_total_time={seconds}",
        f"-timeout={INPUT_TIMEOUT_S}",
        f"-rss_limit_mb={RSS_LIMIT_MB}",
        f"-max_len={MAX_LEN}",
        f"-artifact_prefix={work}/",
        "-print_final_stats=1",
    ]
    done = subprocess.run(command, capture_output=True, text=True, errors="replace", check=False)
    (out / f"{surface}.log").write_text(done.stdout + done.stderr)
    return parse(surface, done.stderr)


def _child(surface_name: str, scratch: Path, libfuzzer_args: list[str]) -> None:
    import atheris

    sys.path.insert(0, str(HERE))
    with atheris.instrument_imports(include=["gpufleet"]):
        from fuzz_surfaces import SURFACES, check_bytes
    surface = SURFACES[surface_name]

    def one_input(data: bytes) -> None:
        check_bytes(surface, data, scratch)

    atheris.Setup([sys.argv[0], *libfuzzer_args], one_input)
    atheris.Fuzz()


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--child"]:
        _child(args[1], Path(args[2]), args[3:])
        return 0
    sys.path.insert(0, str(HERE))
    from fuzz_surfaces import SURFACES

    parser = argparse.ArgumentParser(prog="python -m tests.fuzz.run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--surface", action="append", choices=sorted(SURFACES), help="default: every one")
    parser.add_argument("--seconds", type=int, default=60, help="per surface (default 60)")
    parser.add_argument("--out", type=Path, default=ROOT / "out" / "fuzz")
    options = parser.parse_args(args)
    options.out.mkdir(parents=True, exist_ok=True)
    results = []
    for surface in options.surface or list(SURFACES):
        result = fuzz(surface, options.seconds, options.out)
        print(result.line(), flush=True)
        results.append(result)
    total = sum(r.execs for r in results)
    print(f"{total:,} inputs in all, {sum(r.findings for r in results)} finding(s); logs in {options.out}")
    return 1 if any(r.findings for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
