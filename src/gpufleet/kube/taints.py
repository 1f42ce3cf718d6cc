"""Node taints and pod tolerations, validated as ``pkg/apis/core/validation`` does.

``validateNodeTaints``: every taint has an effect (``NoSchedule``, ``PreferNoSchedule``,
``NoExecute``) and taints are unique by key and effect. ``validateTolerations``: the
operator is ``Equal`` (or empty) or ``Exists``; an empty key needs ``Exists``; ``Exists``
takes no value; ``tolerationSeconds`` needs ``NoExecute``; an empty effect matches all.
"""

from __future__ import annotations

from gpufleet.kube.objects import items
from gpufleet.kube.problems import Reporter, invalid, required, unsupported
from gpufleet.model.node import TAINT_EFFECTS, Taint, Toleration

_OPERATORS = ("Equal", "Exists")
_EMPTY_KEY_NEEDS_EXISTS = (
    'operator must be Exists when `key` is empty, which means "match all values and all keys"'
)


def _strings(item: dict[str, object], fields: tuple[str, ...], report: Reporter, where: str) -> bool:
    """Whether every one of ``fields`` that is set is a string (a template outside the Kubernetes
    schema may hold anything); the others are reported."""
    wrong = [f for f in fields if item.get(f) is not None and not isinstance(item.get(f), str)]
    for f in wrong:
        report.error(f"{where}.{f}", invalid(item.get(f), "must be a string"))
    return not wrong


def _check_effect(effect: str, allow_empty: bool, report: Reporter, path: str) -> bool:
    if not effect:
        if not allow_empty:
            report.error(path, required())
        return allow_empty
    if effect not in TAINT_EFFECTS:
        report.error(path, unsupported(effect, TAINT_EFFECTS))
        return False
    return True


def taints(raw: object, report: Reporter, path: str) -> tuple[Taint, ...]:
    """Taints of ``raw`` (a node's ``spec.taints``); invalid ones are reported and left out."""
    out: list[Taint] = []
    seen: set[tuple[str, str]] = set()
    for i, item in enumerate(items(raw)):
        where = f"{path}[{i}]"
        if not _strings(item, ("key", "value", "effect"), report, where):
            continue
        key, value, effect = item.get("key") or "", item.get("value") or "", item.get("effect") or ""
        if not key:
            report.error(f"{where}.key", required())
            continue
        if not _check_effect(effect, False, report, f"{where}.effect"):
            continue
        if (key, effect) in seen:
            report.error(where, invalid(dict(item), "taints must be unique by key and effect pair"))
            continue
        seen.add((key, effect))
        out.append(Taint(key, value, effect))
    return tuple(out)


def tolerations(raw: object, report: Reporter, path: str) -> tuple[Toleration, ...]:
    """Tolerations of ``raw`` (a pod's ``spec.tolerations``); invalid ones are reported and left out."""
    out: list[Toleration] = []
    for i, item in enumerate(items(raw)):
        where = f"{path}[{i}]"
        if not _strings(item, ("key", "value", "operator", "effect"), report, where):
            continue
        seconds = item.get("tolerationSeconds")
        if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, int)):
            report.error(f"{where}.tolerationSeconds", invalid(seconds, "must be an integer"))
            continue
        key, value = item.get("key") or "", item.get("value") or ""
        operator, effect = item.get("operator") or "Equal", item.get("effect") or ""
        errors = []
        if not key and operator != "Exists":
            errors.append(
                (
                    f"{where}.operator",
                    invalid(operator, _EMPTY_KEY_NEEDS_EXISTS),
                )
            )
        if seconds is not None and effect != "NoExecute":
            errors.append(
                (
                    f"{where}.effect",
                    invalid(effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"),
                )
            )
        if operator not in _OPERATORS:
            errors.append((f"{where}.operator", unsupported(operator, _OPERATORS)))
        elif operator == "Exists" and value:
            errors.append(
                (f"{where}.operator", invalid(dict(item), "value must be empty when `operator` is 'Exists'"))
            )
        for field, message in errors:
            report.error(field, message)
        if _check_effect(effect, True, report, f"{where}.effect") and not errors:
            out.append(Toleration(key, operator, value, effect, seconds))
    return tuple(out)
