"""The scheduling framework (kube-scheduler's extension points) and its plugins.

Pure decision code: it reads a cluster state and a clock value and returns decisions; it
never knows whether the simulator or a live cluster drives it.
"""
