"""``python -m gpufleet``: the command line, as the ``gpufleet`` script runs it."""

from gpufleet.cli import main

main()
