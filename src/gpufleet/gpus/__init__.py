"""GPUs as devices, decided at Reserve: the device ledger and which units a pod gets (``devices``,
``ledger``), NVLink topology (``topology``) and Dynamic Resource Allocation (``dra``). The ledger of
fractional shares is the cluster's (``cluster.shares``)."""
