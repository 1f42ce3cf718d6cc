"""Public GPU cluster traces as gpufleet's model: one module per trace format (``openb`` for the
Alibaba GPU trace of 2023), each registered in ``formats`` by name."""
