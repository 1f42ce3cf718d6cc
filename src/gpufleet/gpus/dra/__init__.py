"""Dynamic Resource Allocation (``resource.k8s.io/v1``) for gpufleet's scheduler.

``cel``: DRA device selectors with Kubernetes' CEL extensions (``quantity``, ``semver``), needs the
``cel-python`` package. ``allocator``: structured-parameters allocation of a pod's claims on a node,
after ``staging/src/k8s.io/dynamic-resource-allocation/structured``. Neither is imported here, so
importing this package does not need ``cel-python``.
"""
