"""Containment benchmarks: what each way of confining a path costs, and whether it holds."""
