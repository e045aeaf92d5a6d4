"""Course tooling built on the core package: plots, widgets, exercises, learner copies, ``reproduce`` and the CLI.

Imports go one way: ``pavlovlab.teach`` uses the core modules of ``pavlovlab`` (attention, memory, conditioning,
...), never the other way round (``tests/repo/test_layers.py`` checks it).
"""
