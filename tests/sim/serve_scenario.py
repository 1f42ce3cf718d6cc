"""The scenario the node lifecycle tests fail nodes under: pools of 8-GPU H100 nodes with the labels a test
gives, and a one-replica serving Deployment of 8 GPUs pinned to nodes labelled ``role: serve``."""

from __future__ import annotations


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


def serve(duration: str) -> str:
    """A Simulation of ``duration`` and the serving Deployment (8 GPUs, on a ``role: serve`` node)."""
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
    spec:
      nodeSelector: {{role: serve}}
      containers:
      - name: c
        image: x
        resources:
          limits: {{nvidia.com/gpu: 8}}
"""
