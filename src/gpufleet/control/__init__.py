"""gpufleet's control loops: the controllers it runs (cluster-autoscaler, the HPA and KEDA, Kueue),
each on a ``Clock`` and through a ``ClusterPort``; the simulator drives them on its virtual clock
over its in-memory cluster, a live backend on the wall clock over the Kubernetes API."""
