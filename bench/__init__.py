"""Benchmarks: each measures its setups side by side in one run and prints ratios (`dagmem bench NAME`)."""
