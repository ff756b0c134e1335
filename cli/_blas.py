"""A command that searches memory and exits starts no BLAS threads.

numpy's OpenBLAS starts a thread per core when numpy loads (and they spin a while before sleeping), but
recall never calls BLAS (its products are `einsum`s, one thread: see `RecallIndex.coarse`). A fresh process
that answers one query paid for them in CPU time beside its own (measured: CPU time above wall time).
Set before numpy loads, and only where the user has not chosen a count."""

from __future__ import annotations

import os
import sys

__all__ = ["one_blas_thread"]

_VARIABLE = "OPENBLAS_NUM_THREADS"


def one_blas_thread() -> None:
    """One BLAS thread for this process (and what it starts), unless numpy is loaded or the user chose."""
    if "numpy" not in sys.modules:
        os.environ.setdefault(_VARIABLE, "1")
