"""GPU and network topology: which GPUs inside a node, and which nodes across a cluster, a job gets.

Pure decision code (no I/O, no clock), in four small modules:

* :mod:`.link_graph` -- one node's GPU link graph (NVSwitch, NVLink islands or pairs, PCIe
  switches, NUMA nodes, NICs), in the vocabulary of ``nvidia-smi topo -m``.
* :mod:`.device_choice` -- the best-connected free GPU set for a multi-GPU pod, and a 0..100 node
  score that prefers nodes where that set does not break up a larger free island.
* :mod:`.rings` -- cross-node edges of an NCCL ring and a documented communication model that
  stretches a training job's compute time when it is placed worse than ideal.
* :mod:`.domains` -- topology levels from node labels and gang placement that requires or prefers
  one domain at a level, as Kueue Topology Aware Scheduling and Volcano network topology do.
"""
