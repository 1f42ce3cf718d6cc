"""Pure data: quantities, resources, nodes, pods, workloads and configuration.

Nothing here performs I/O or makes decisions; every other layer builds on these types.
"""
