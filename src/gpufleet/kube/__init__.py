"""Conversion of Kubernetes objects into gpufleet's model: manifests and snapshots in, a ``Scenario`` out.

``load_scenario(paths)`` reads files and directories of YAML or JSON (multi-document
streams, kubectl ``kind: List``) and returns a ``gpufleet.model.scenario.Scenario``, or
raises ``ScenarioError`` listing every problem, one line each:
``FILE: document N (Kind/name): field.path: what is wrong``. The names below are imported when
first used (PEP 562): the loader and its schemas are the heaviest import of the package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpufleet.lazy_exports import lazy_getattr

if TYPE_CHECKING:
    from gpufleet.kube.documents import Document as Document
    from gpufleet.kube.documents import read_documents as read_documents
    from gpufleet.kube.load import load_scenario as load_scenario
    from gpufleet.kube.problems import Problems as Problems
    from gpufleet.kube.problems import ScenarioError as ScenarioError

#: each exported name and the module that holds it
_WHERE = {
    "Document": "documents",
    "Problems": "problems",
    "ScenarioError": "problems",
    "load_scenario": "load",
    "read_documents": "documents",
}

__all__ = sorted(_WHERE)

__getattr__ = lazy_getattr(__name__, _WHERE)
