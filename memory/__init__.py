"""The domain, mostly synchronous. Layers, bottom up (each imports only from those below it):

- `errors`, `outcomes`, `faults`: the shared vocabulary (exceptions, reason codes, named fault sites);
- `format`: the on-disk formats, pure;
- `durable`: atomic writes, appends, the txlog, transactions and recovery;
- `store` (sessions) and `workspace` (memory/): files through the durable layer;
- `policy`: records, the DAG view and the planner, pure;
- `write`: the one write core (archive → distil → install → mark), distillers, the write pass.
"""
