"""`dagmem cluster status`: the homes a Ray cluster serves, where each lives and what each owes.

It connects to a running cluster (`--address`, default "auto": the one this machine started), never starts
one, and creates nothing: it only asks each home's actor. Without Ray installed it says how to install it."""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import logging
import sys
from typing import Any

import anyio

from ._errors import CommandError
from ._words import plural


def _not_sigterm(record: logging.LogRecord) -> bool:
    """Ray warns that it set no SIGTERM handler when it is started off the main thread, as `connect` starts
    it: this command's SIGTERM is Python's own (exit), so the warning says nothing a user can act on."""
    return "SIGTERM handler is not set" not in record.getMessage()


def command(args: argparse.Namespace) -> int:
    from ..cluster import ClusterError, connect, require_ray

    ray = require_ray()  # RayMissing (exit 2) names the pip command
    logging.getLogger("ray._private.worker").addFilter(_not_sigterm)

    async def describe() -> list[dict[str, Any]]:
        # The root is not used: status only asks the actors that exist, each of which knows its path.
        quiet = {} if args.verbose else {"logging_level": logging.WARNING}  # Ray's INFO: "Connecting to..."
        client = await connect(".", address=args.address, ray_options={"log_to_driver": False, **quiet})
        try:
            return await client.describe()
        finally:
            await client.close()
            if ray.is_initialized():
                ray.shutdown()  # a driver's connection, not the cluster

    try:
        with contextlib.redirect_stdout(sys.stderr):  # Ray's driver prints its cluster's errors on stdout
            homes = anyio.run(describe)
    except ClusterError as exc:
        raise CommandError(str(exc), exc.code) from None
    if args.json:
        print(json.dumps({"address": args.address, "homes": homes}))
        return 0
    if not homes:
        print("no homes are served")
        return 0
    print(f"{'home':<24} {'node':<14} {'pid':>7} {'owes':>6}  {'last outcome':<13} path")
    for home in homes:
        if "error" in home:
            print(f"{home['home_id']:<24} (no answer: {home['error']})")
            continue
        status = home.get("status") or {}
        failure = status.get("last_failure")
        outcome = status.get("last_outcome") or ("-" if home["serving"] else "(not open)")
        print(
            f"{home['home_id']:<24} {home['node_id'][:12]:<14} {home['pid']:>7} {home['pending_turns']:>6}  "
            f"{outcome:<13} {home['path']}"
        )
        if failure:
            at = dt.datetime.fromtimestamp(failure["at"], dt.UTC).isoformat(timespec="seconds")
            print(f"{'':<24} last failure {failure['reason_code']} at {at}")
    owed = sum(h.get("pending_turns", 0) for h in homes)
    print(f"{plural(len(homes), 'home')}, {plural(owed, 'turn')} owed")
    return 0
