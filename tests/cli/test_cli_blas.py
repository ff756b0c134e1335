"""A command that searches memory and exits starts one BLAS thread (recall never calls BLAS), unless the
user chose a count or numpy is loaded already (too late to choose)."""

from __future__ import annotations

import os
import sys

import pytest

from dagmem.cli._blas import one_blas_thread


def test_one_blas_thread_where_the_user_chose_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    monkeypatch.delitem(sys.modules, "numpy")  # as a fresh process has it before the search
    one_blas_thread()
    assert os.environ["OPENBLAS_NUM_THREADS"] == "1"


def test_the_users_count_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "4")
    monkeypatch.delitem(sys.modules, "numpy")
    one_blas_thread()
    assert os.environ["OPENBLAS_NUM_THREADS"] == "4"


def test_nothing_is_set_once_numpy_is_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy  # noqa: F401

    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    one_blas_thread()
    assert "OPENBLAS_NUM_THREADS" not in os.environ
