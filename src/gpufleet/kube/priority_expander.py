"""cluster-autoscaler's ``priority`` expander configuration (``expander/priority``).

The ConfigMap ``cluster-autoscaler-priority-expander`` holds ``data.priorities``: YAML mapping
an integer priority to a list of regular expressions over node-group names; a group takes the
highest priority whose expression matches its name (``regexp.MatchString``: anywhere in it).
In gpufleet the node groups are the NodePools.
"""

from __future__ import annotations

import re
from typing import Any

from gpufleet.kube.documents import YamlValueError, yaml_value
from gpufleet.kube.problems import Reporter

CONFIG_MAP_NAME = "cluster-autoscaler-priority-expander"
_INTEGER = re.compile(r"-?[0-9]{1,18}")  # a Go int


def is_priority_config(api_version: object, kind: object, body: dict[str, Any]) -> bool:
    meta = body.get("metadata") if isinstance(body.get("metadata"), dict) else {}
    return (
        api_version == "v1"
        and kind == "ConfigMap"
        and isinstance(meta, dict)
        and meta.get("name") == CONFIG_MAP_NAME
    )


def parse_priorities(body: dict[str, Any], report: Reporter) -> tuple[tuple[int, str], ...]:
    """(priority, expression) pairs; problems are reported at ``data.priorities``."""
    data = body.get("data") if isinstance(body.get("data"), dict) else {}
    text = data.get("priorities") if isinstance(data, dict) else None
    if not isinstance(text, str):
        report.error(
            "data.priorities", "Required value: a YAML map of priority to node-group name expressions"
        )
        return ()
    try:
        raw = yaml_value(text)
    except YamlValueError as exc:
        report.error("data.priorities", f"invalid YAML: {exc}")
        return ()
    if not isinstance(raw, dict):
        report.error("data.priorities", "must map integer priorities to lists of expressions")
        return ()
    out: list[tuple[int, str]] = []
    for key, expressions in raw.items():
        # Keys are read as Kubernetes reads YAML, as strings (``yaml_value``): an integer's digits.
        if not _INTEGER.fullmatch(key):
            report.error(f"data.priorities.{key}", "priorities must be integers")
            continue
        priority = int(key)
        for expression in expressions if isinstance(expressions, list) else [expressions]:
            try:
                re.compile(str(expression))
            except re.error as exc:
                report.error(f"data.priorities.{priority}", f"invalid expression {expression!r}: {exc}")
                continue
            out.append((priority, str(expression)))
    return tuple(out)
