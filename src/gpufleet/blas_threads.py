"""One OpenBLAS thread for the command line, set before NumPy loads.

gpufleet calls no BLAS routine (no matrix products, no linear algebra), but NumPy's bundled OpenBLAS
starts a thread per core when NumPy is imported, and each spins briefly before it sleeps: about
0.05 CPU seconds of every ``gpufleet`` process on two cores, paid for nothing (``docs/performance.md``,
"FGD replay"). ``cli`` imports this module before anything that imports NumPy. A value the user set
is kept; results do not depend on it (no BLAS call), only the start-up cost does.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
