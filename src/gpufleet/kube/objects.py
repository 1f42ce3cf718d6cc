"""Object metadata as the API server defaults it: namespace ``default``, a required name.

Also the ``Kind/name`` (``Kind/namespace/name`` for namespaced kinds) label that problem
lines carry, and the controlling owner reference (``metav1.GetControllerOf``, else the first owner).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gpufleet.model.pod import OwnerRef

DEFAULT_NAMESPACE = "default"


@dataclass(frozen=True)
class Meta:
    name: str
    namespace: str = DEFAULT_NAMESPACE
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)


def mapping(value: object) -> dict[str, Any]:
    """``value`` if it is a mapping, else empty (a null field reads as absent, as in Go)."""
    return value if isinstance(value, dict) else {}


def meta(body: Mapping[str, Any], namespaced: bool) -> Meta:
    metadata = mapping(body.get("metadata"))
    name = metadata.get("name")
    namespace = (metadata.get("namespace") or DEFAULT_NAMESPACE) if namespaced else ""
    return Meta(
        name if isinstance(name, str) else "",
        namespace if isinstance(namespace, str) else DEFAULT_NAMESPACE,
        _strings(metadata.get("labels")),
        _strings(metadata.get("annotations")),
    )


def _strings(value: object) -> dict[str, str]:
    return {str(k): v for k, v in mapping(value).items() if isinstance(v, str)}


def label(kind: str, body: Mapping[str, Any], namespaced: bool | None) -> str:
    """``Pod/default/web-0``; ``namespaced=None`` (scope unknown): the namespace only if written."""
    metadata = mapping(body.get("metadata"))
    name = metadata.get("name")
    if not isinstance(name, str) or not name:
        return kind
    namespace = metadata.get("namespace")
    if namespaced:
        namespace = namespace or DEFAULT_NAMESPACE
    elif namespaced is False:
        namespace = None
    return f"{kind}/{namespace}/{name}" if isinstance(namespace, str) and namespace else f"{kind}/{name}"


def controller_of(body: Mapping[str, Any]) -> OwnerRef | None:
    """The owner with ``controller: true``, else the first owner."""
    owners = [o for o in mapping(body.get("metadata")).get("ownerReferences") or () if isinstance(o, dict)]
    chosen = next((o for o in owners if o.get("controller")), owners[0] if owners else None)
    if chosen is None:
        return None
    return OwnerRef(str(chosen.get("kind") or ""), str(chosen.get("name") or ""))


def items(value: object) -> list[dict[str, Any]]:
    """The mappings of a list field (null entries read as empty objects)."""
    return [mapping(item) for item in value] if isinstance(value, list) else []
