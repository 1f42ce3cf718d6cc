"""Workload and node autoscaling decisions: pure code, state and time in, decisions out."""
