"""The live side: gpufleet reading a real cluster through the Kubernetes API (and Prometheus).

Only reads: lists with pagination, watches, discovery. The commands built on it (``snapshot``,
``explain --kubeconfig``, ``startup``, ``history``) write what they read as the same files and
summaries the simulator reads and writes.
"""
