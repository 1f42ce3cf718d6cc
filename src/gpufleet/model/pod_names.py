"""Finding a pod by the name a user types, as kubectl finds it: ``NS/NAME``, or ``NAME`` in the
namespace given (``-n``), else in ``default``, else the only pod of that name in any namespace.

kubectl itself looks only in the context's namespace; gpufleet reads files that hold every
namespace, so a name found in exactly one other namespace is that pod, and a name found in several
(none of them ``default``) is refused with the candidates, never guessed.
"""

from __future__ import annotations

from collections.abc import Iterable

DEFAULT_NAMESPACE = "default"


class PodNameError(LookupError):
    """No pod, or several, answer to the name; ``str()`` says which, in one line."""

    def __str__(self) -> str:
        return str(self.args[0])


def find_pod_key(name: str, keys: Iterable[str], namespace: str | None = None, what: str = "pod") -> str:
    """The ``namespace/name`` key among ``keys`` that ``name`` means (see the module's rule);
    ``PodNameError`` when there is none or more than one. ``what`` names the pods searched in the
    message (``pending pod``)."""
    known = list(dict.fromkeys(keys))
    if "/" in name:
        wanted = name.partition("/")[0]
        if namespace is not None and wanted != namespace:
            raise PodNameError(f"{name}: the namespace differs from --namespace {namespace}")
        if name in known:
            return name
        raise PodNameError(f"no {what} {name}")
    if namespace is not None:
        key = f"{namespace}/{name}"
        if key in known:
            return key
        raise PodNameError(f"no {what} {name} in namespace {namespace}")
    if f"{DEFAULT_NAMESPACE}/{name}" in known:
        return f"{DEFAULT_NAMESPACE}/{name}"
    candidates = sorted(key for key in known if key.partition("/")[2] == name)
    if len(candidates) == 1:
        return candidates[0]
    if candidates:
        raise PodNameError(
            f"{name}: {len(candidates)} {what}s have this name, give one as NS/NAME: {', '.join(candidates)}"
        )
    raise PodNameError(f"no {what} named {name} in any namespace")
