"""The deterministic simulator, its independent oracle, fault injection, benchmarks and reports."""
