"""The deterministic simulator, its independent oracle, fault injection, benchmarks and reports.

`dagmem sim` (`command`): `workload` plans seeded session scripts, `content` renders their text, `runner`
drives them through the real runtime in virtual time (`determinism`), with a seeded fault plan (`faults`)
and a store that keeps count (`recording`); `oracle` judges the files; `gitgrowth` replays a sample into
real git; `report` prints, saves and plots. `verify`, `bench*` and `crashload` reuse the oracle.
"""
