"""Conversion of Kubernetes objects into gpufleet's model: manifests and snapshots in, a ``Scenario`` out.

``load_scenario(paths)`` reads files and directories of YAML or JSON (multi-document
streams, kubectl ``kind: List``) and returns a ``gpufleet.model.scenario.Scenario``, or
raises ``ScenarioError`` listing every problem, one line each:
``FILE: document N (Kind/name): field.path: what is wrong``.
"""

from gpufleet.kube.documents import Document, read_documents
from gpufleet.kube.load import load_scenario
from gpufleet.kube.problems import Problems, ScenarioError

__all__ = ["Document", "Problems", "ScenarioError", "load_scenario", "read_documents"]
