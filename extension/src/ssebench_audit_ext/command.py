"""The `ssebench audit` subcommand: hands its arguments to the ssebench-audit binary.

ssebench loads this class through the `ssebench.commands` entry point and drives it through its
structural `Command` protocol (`name`, `help`, `configure`, `run`). Everything after
`ssebench audit` goes to ssebench-audit unchanged; when it does not start with one of
ssebench-audit's subcommands, `audit` is put in front, so `ssebench audit --project x` audits.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence

__all__ = ["AuditCommand", "BIN_ENV", "BINARY", "SUBCOMMANDS", "DEFAULT_SUBCOMMAND", "tool_argv", "find_binary"]

BIN_ENV = "SSEBENCH_AUDIT_BIN"
BINARY = "ssebench-audit"
DEFAULT_SUBCOMMAND = "audit"
# ssebench-audit's user-facing subcommands (cobra's own `help` included): the first argument
# passes through as it is when it is one of these.
SUBCOMMANDS = frozenset({"audit", "gate", "bench", "cleanup", "probe-image", "demo", "version", "help"})

_ARGV_DEST = "argv"


def tool_argv(argv: Sequence[str] | None) -> list[str]:
    """The arguments for ssebench-audit, from those given after `ssebench audit`.

    A leading `--` is dropped; the default subcommand is put in front unless the first argument
    is one of ssebench-audit's subcommands.
    """
    args = list(argv or ())
    if args and args[0] == "--":
        args = args[1:]
    if not args or args[0] not in SUBCOMMANDS:
        args.insert(0, DEFAULT_SUBCOMMAND)
    return args


def find_binary() -> tuple[str | None, str]:
    """Return (path, "") of the ssebench-audit executable, or (None, why) when there is none."""
    configured = os.environ.get(BIN_ENV, "")
    if configured:
        path = shutil.which(configured)
        if path is None:
            return None, f"ssebench audit: {BIN_ENV}={configured} is not an executable file"
        return path, ""
    path = shutil.which(BINARY)
    if path is None:
        return None, f"ssebench audit: {BINARY} not found on PATH (set {BIN_ENV})"
    return path, ""


def _exit_status(returncode: int) -> int:
    """A child's status as a shell reports it: killed by signal N is 128+N (SIGINT: 130)."""
    return 128 - returncode if returncode < 0 else returncode


class AuditCommand:
    """`ssebench audit [SUBCOMMAND] [FLAGS...]`: run ssebench-audit on this host's deployment."""

    name = "audit"
    help = "Audit this host's ssebench deployment for agent isolation (runs ssebench-audit)"

    def configure(self, parser: argparse.ArgumentParser) -> None:
        """Give `parser` one positional that takes every remaining argument.

        ssebench calls this once on a scratch parser and once on its own subparser; calling it
        again on the same parser changes nothing.
        """
        # ssebench parses with parse_args(), and argparse leaves an unknown option such as
        # `--project` out of a REMAINDER positional that comes first (bpo-17050), then fails on
        # it. With no prefix characters, every argument, `-h` included, is a plain string for
        # this subparser, so all of them reach ssebench-audit, whose help is the one to show.
        parser.prefix_chars = ""
        parser.usage = "ssebench audit [SUBCOMMAND] [FLAGS...]"
        if any(a.dest == _ARGV_DEST and not a.option_strings for a in getattr(parser, "_actions", ())):
            return
        parser.add_argument(
            _ARGV_DEST,
            nargs=argparse.REMAINDER,
            metavar="ARGS",
            help=f"passed to {BINARY}: a subcommand ({', '.join(sorted(SUBCOMMANDS - {'help'}))}; "
            f"default {DEFAULT_SUBCOMMAND}) and its flags",
        )

    def run(self, args: argparse.Namespace) -> int:
        """Run ssebench-audit with the arguments and return its exit status unchanged."""
        binary, why = find_binary()
        if binary is None:
            print(why, file=sys.stderr)
            return 2
        command = [binary, *tool_argv(getattr(args, _ARGV_DEST, None))]
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            # stdin, stdout, stderr and the environment are inherited.
            child = subprocess.Popen(command)
        except OSError as e:
            print(f"ssebench audit: cannot run {binary}: {e.strerror or e}", file=sys.stderr)
            return 2
        while True:
            try:
                return _exit_status(child.wait())
            except KeyboardInterrupt:
                # Ctrl-C reached the whole foreground process group, the child included: let it
                # wind down (it removes its probes) and report how it ended.
                continue
