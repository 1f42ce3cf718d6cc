"""The cluster as decision code sees it: the per-node columns (``state``), the snapshot over them
with fork, revert and commit (``snapshot``), the views drivers answer (``device_view``,
``disruption_view``) and the port through which the control loops act (``port``)."""
