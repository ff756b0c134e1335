"""The domain, mostly synchronous. Layers, bottom up (each imports only from those below it):

- `errors`, `outcomes`, `faults`, `settings`, `switch`: the shared vocabulary (exceptions, reason codes,
  named fault sites, the knobs' defaults and checks, the `DAGMEM_MEMORY` switch);
- `text`: what words say, pure (the kinds of sentence a working session holds: narration, the person's
  standing instructions, decisions, failures, causes, open threads; keywords), each language a table;
- `format`: the on-disk formats, pure (the topic-path rule among them);
- `trust`: where a memory came from and who may read it, pure (the hold rule of the core, the
  instruction tripwire, a reader's scope);
- `durable`: atomic writes, appends, the txlog, transactions and recovery;
- `store` (sessions) and `workspace` (memory/): files through the durable layer; `Workspace.install` is
  the one install (commit, index, then the `on_install` hook its opener gave);
- `policy`: records, the DAG view and the planner, pure;
- `currency`: what is `current`, `superseded` or `left`, from the DAG alone (alternatives, left branches,
  readers, spawn across sessions), pure; `shapes`: where its session shapes come from cheaply (a cache
  every install keeps current, rebuilt from the session files); `checkout`: git, the other axis work
  branches on (where a turn was said, read from a checkout's files; what is merged where, cached facts
  `git` computes off a prompt's path; whether a cited file still holds what was cited);
- `write`: the one write core (archive → distil → install → mark), distillers, the write pass;
- `recall`: the read side, a BM25 + vector index of topic blocks kept as a cache; its `RecallUpdater` is
  the install hook of a workspace opened for writing (the write core never imports it);
- `writing` (`open_for_writing`, the one door of a write outside a runtime: the workspace with recall's
  updater attached; the write pass through it, finishing a forget a crash left first), `listing` (what a
  home's sessions hold, read-only) and `adopt` (migrate and import what hosts already have): on top of
  the store and the write (and forget's journal: an import never brings a forgotten text back);
- `forget`: the one operation that removes evidence, from every copy a home keeps (node files, archive,
  topics, indexes, git history), and the hash scan that proves it (`dagmem verify --forgotten`); on the
  store, the workspace, the write core's claim rule and recall's rebuild;
- `audit`: the independent oracle `dagmem verify` runs, on the formats, the durable reads, the store and
  currency's pure rules alone (never the policy, recall or the write: it must not share the writer's
  mistakes).
"""
