"""gpufleet: GPU-aware Kubernetes scheduling, autoscaling and cluster simulation.

Layers, lowest first: ``model`` (pure data) -> ``scheduling`` (decisions) ->
``sim`` and ``kube`` (drivers and sources) -> ``report`` -> ``cli``.
"""

__version__ = "0.1.0"

#: The Kubernetes release whose kube-scheduler behaviour (defaults, plugin order, messages)
#: gpufleet reproduces. See README "Upstream version".
KUBERNETES_VERSION = "1.34.0"
