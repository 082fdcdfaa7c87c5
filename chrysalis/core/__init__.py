"""The pure core: clocks, CRDT merge rules, graph ids, validity, checks and events as
plain functions over plain values.

No I/O: no storage, network, files or processes (an import contract in pyproject.toml).
"""
