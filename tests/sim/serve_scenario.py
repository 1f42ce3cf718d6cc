"""The scenario the node lifecycle tests fail nodes under: pools of 8-GPU H100 nodes with the labels a test
gives, and a one-replica serving Deployment of 8 GPUs (pinned to nodes labelled ``role: serve`` with
``ON_SERVE_NODES``)."""

from __future__ import annotations

#: the serving pods' spec line that keeps them on the nodes labelled ``role: serve``
ON_SERVE_NODES = "\n      nodeSelector: {role: serve}"


def labelled_pool(name: str, replicas: int, labels: str = "{}") -> str:
    """A NodePool of ``replicas`` 8-GPU nodes whose template carries ``labels`` (a YAML flow mapping)."""
    return f"""
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {{name: {name}}}
spec:
  replicas: {replicas}
  gpu: {{model: H100-80GB, count: 8}}
  template:
    metadata: {{labels: {labels}}}
    status:
      capacity: {{cpu: "96", memory: 768Gi, pods: "110"}}
"""


def serve(duration: str, pod_spec: str = "") -> str:
    """A Simulation of ``duration`` and the serving Deployment (8 GPUs), ``pod_spec`` more lines of its pods'
    spec (each a newline and six spaces first)."""
    return f"""
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {{name: s}}
spec: {{duration: {duration}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: serve}}
spec:
  replicas: 1
  selector:
    matchLabels: {{app: serve}}
  template:
    metadata:
      labels: {{app: serve}}
    spec:{pod_spec}
      containers:
      - name: c
        image: x
        resources:
          limits: {{nvidia.com/gpu: 8}}
"""
