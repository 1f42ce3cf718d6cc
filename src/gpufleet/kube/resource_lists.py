"""Resource lists (``requests``, ``limits``, ``capacity``, ...) read through ``gpufleet.model.resources``.

Parsing is cached by content: a snapshot repeats the same few lists thousands of times.
"""

from __future__ import annotations

from functools import lru_cache

from gpufleet.kube.objects import mapping
from gpufleet.kube.problems import Reporter
from gpufleet.model.resources import ResourceProblem, Resources, parse_resource_list

_Key = tuple[tuple[str, object], ...]


def read(raw: object, report: Reporter, path: str) -> Resources:
    """``raw`` in canonical units; what the API server would reject goes to ``report``."""
    values = mapping(raw)
    try:
        parsed, problems = _parse(tuple(values.items()), path)
    except TypeError:  # an unhashable value: a list or an object where a quantity belongs
        parsed, problems = _parse.__wrapped__(tuple(values.items()), path)
    for problem in problems:
        report.error(problem.path, problem.message)
    return dict(parsed)


@lru_cache(maxsize=4096)
def _parse(items: _Key, path: str) -> tuple[Resources, tuple[ResourceProblem, ...]]:
    parsed, problems = parse_resource_list(dict(items), path)
    return parsed, tuple(problems)
