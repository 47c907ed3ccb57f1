"""``safefs-bench``: the containment contest and the machinery the benchmarks and tests share.

The contestants (:mod:`safefs_bench.strategies`), the directory-swap race
(:mod:`safefs_bench.race`), the benchmark trees, machine facts, the report and its pictures, and
an MCP client helper that starts ``safefs-mcp`` or the official server
(:mod:`safefs_bench.mcp_client`). A distribution of its own (``safefs_bench/pyproject.toml``), so
none of it ships in the safefs wheel.
"""
