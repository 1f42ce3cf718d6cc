"""Scheduler plugins, one per module, each mirroring the upstream plugin of the same name."""
