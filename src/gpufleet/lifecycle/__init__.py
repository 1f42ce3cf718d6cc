"""Start-up models: the node start chain and the pod start chain (image pull, model load).

Pure decision-layer models over time values (no simulator, no I/O); the simulator and the
live backend drive them. ``distributions`` reads and samples random durations,
``node_start`` plans a GPU node's start stages, ``shared_bandwidth`` shares model storage
among concurrent reads, ``image_pull`` serialises a node's image pulls.
"""
