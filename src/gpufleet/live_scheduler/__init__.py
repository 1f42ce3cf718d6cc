"""gpufleet as a real scheduler: the engine's scheduling cycle driven by the live cluster's objects,
its decisions made real through the API (bindings, events, conditions, preemptions)."""
