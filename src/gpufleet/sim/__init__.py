"""The discrete-event simulator: a virtual clock driving the scheduling engine on an
in-memory cluster, with the controllers that create pods and the pods' life cycle."""
