"""Replays of public GPU cluster traces: the FGD paper's protocol (``fgd_protocol``)."""
