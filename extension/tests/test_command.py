"""Tests of the `ssebench audit` extension, run against the INSTALLED package (extension/test.sh).

Nothing here installs anything. The tests load the command the way ssebench does, through the
`ssebench.commands` entry-point group, and drive run() with a fake ssebench-audit (a python3
script that records what it was given). With SSEBENCH_AUDIT_REAL_BIN set, they also run the
real binary's `version`.
"""

import argparse
import contextlib
import io
import json
import os
import shutil
import signal
import stat
import sys
import tempfile
import textwrap
import unittest
from importlib.metadata import entry_points
from unittest import mock

GROUP = "ssebench.commands"
MISSING = "ssebench audit: ssebench-audit not found on PATH (set SSEBENCH_AUDIT_BIN)\n"
# ssebench refuses extension commands with these names (cli.BUILTIN_COMMANDS).
SSEBENCH_BUILTINS = ("run", "build-case", "dataset", "tasks", "proxy", "doctor", "init", "demo")

FAKE = textwrap.dedent(
    """\
    #!{python}
    import json, os, signal, sys, time
    with open(os.environ["SBA_FAKE_RECORD"], "w") as f:
        json.dump({{"argv": sys.argv[1:], "mark": os.environ.get("SBA_FAKE_MARK")}}, f)
    print("fake ssebench-audit on stdout", flush=True)
    mode = os.environ.get("SBA_FAKE_MODE", "")
    if mode == "sigint-self":
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)
    if mode == "ctrl-c":
        # What a terminal's Ctrl-C does: SIGINT to the parent and to this child. The parent
        # must keep waiting and report how the child ended.
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        time.sleep(0.3)
        os.kill(os.getppid(), signal.SIGINT)
        time.sleep(0.3)
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)
    sys.exit(int(os.environ.get("SBA_FAKE_EXIT", "0")))
    """
)


def audit_entry_point():
    found = [ep for ep in entry_points(group=GROUP) if ep.name == "audit"]
    if len(found) != 1:
        raise AssertionError(f"expected one 'audit' entry point in {GROUP}, found {len(found)}")
    return found[0]


def load_command():
    loaded = audit_entry_point().load()
    return loaded() if isinstance(loaded, type) else loaded


def ssebench_parser(command):
    """Configure `command` the way ssebench's build_parser does, and return its top-level parser."""
    command.configure(argparse.ArgumentParser())  # ssebench's scratch parser
    parser = argparse.ArgumentParser(prog="ssebench")
    parser.add_argument("--version", action="version", version="ssebench test")
    subparsers = parser.add_subparsers(dest="command")
    subparsers.add_parser("run").add_argument("--task")
    command.configure(subparsers.add_parser(command.name, help=command.help, description=command.help))
    return parser


@contextlib.contextmanager
def captured_stdout_fd():
    """Capture what is written to file descriptor 1, by this process and by its children."""
    sys.stdout.flush()
    saved = os.dup(1)
    with tempfile.TemporaryFile(mode="w+b") as out:
        os.dup2(out.fileno(), 1)
        text = io.StringIO()
        try:
            yield text
        finally:
            sys.stdout.flush()
            os.dup2(saved, 1)
            os.close(saved)
            out.seek(0)
            text.write(out.read().decode(errors="replace"))


class EntryPointTest(unittest.TestCase):
    def test_loads_a_class_instantiated_without_arguments(self):
        ep = audit_entry_point()
        self.assertEqual(ep.value, "ssebench_audit_ext.command:AuditCommand")
        self.assertIsNotNone(ep.dist)
        self.assertEqual(ep.dist.name.replace("_", "-").lower(), "ssebench-audit-ext")
        loaded = ep.load()
        self.assertIsInstance(loaded, type)
        command = loaded()
        self.assertEqual(command.name, ep.name)
        self.assertEqual(command.name, "audit")
        self.assertNotIn(command.name, SSEBENCH_BUILTINS)
        for attr in ("configure", "run"):
            self.assertTrue(callable(getattr(command, attr, None)), attr)

    def test_help_is_one_line(self):
        help_text = load_command().help
        self.assertIsInstance(help_text, str)
        self.assertTrue(help_text.strip())
        self.assertEqual(help_text, help_text.strip())
        self.assertNotIn("\n", help_text)

    def test_package_version(self):
        import ssebench_audit_ext

        self.assertEqual(ssebench_audit_ext.__version__, "0.1.0")


class ConfigureTest(unittest.TestCase):
    def test_twice_on_one_parser_and_once_on_a_fresh_one(self):
        command = load_command()
        parser = argparse.ArgumentParser()
        command.configure(parser)
        command.configure(parser)  # must not add a second positional, nor raise
        positionals = [a for a in parser._actions if not a.option_strings]
        self.assertEqual(len(positionals), 1)
        self.assertEqual(parser.parse_args(["gate", "--project", "x"]).argv, ["gate", "--project", "x"])

        fresh = argparse.ArgumentParser()
        command.configure(fresh)
        self.assertEqual(fresh.parse_args(["--project", "x"]).argv, ["--project", "x"])
        self.assertEqual(fresh.parse_args([]).argv, [])

    def test_under_an_ssebench_like_parser(self):
        command = load_command()
        parser = ssebench_parser(command)
        cases = {
            ("audit",): [],
            ("audit", "--project", "x"): ["--project", "x"],
            ("audit", "gate", "--project", "x"): ["gate", "--project", "x"],
            ("audit", "gate", "--attestation", "a.json"): ["gate", "--attestation", "a.json"],
            ("audit", "--format=json", "--only", "dns.external"): ["--format=json", "--only", "dns.external"],
            ("audit", "-h"): ["-h"],  # ssebench-audit's help, not argparse's
            ("audit", "--version"): ["--version"],
            ("audit", "bench", "--", "--timeout", "60"): ["bench", "--", "--timeout", "60"],
        }
        for argv, want in cases.items():
            with self.subTest(argv=argv):
                args = parser.parse_args(list(argv))
                self.assertEqual(args.command, "audit")
                self.assertEqual(args.argv, want)
        # The other subcommands keep their own parsing.
        self.assertEqual(parser.parse_args(["run", "--task", "t"]).task, "t")


class ToolArgvTest(unittest.TestCase):
    def test_default_subcommand(self):
        from ssebench_audit_ext.command import tool_argv

        cases = [
            ([], ["audit"]),
            (None, ["audit"]),
            (["--project", "x"], ["audit", "--project", "x"]),
            (["-h"], ["audit", "-h"]),
            ([""], ["audit", ""]),
            (["gate", "--project", "x"], ["gate", "--project", "x"]),
            (["--", "gate"], ["gate"]),
            (["--"], ["audit"]),
            (["nonsense"], ["audit", "nonsense"]),
        ]
        for sub in ("audit", "gate", "bench", "cleanup", "probe-image", "demo", "version"):
            cases.append(([sub, "--x"], [sub, "--x"]))
        for given, want in cases:
            with self.subTest(given=given):
                self.assertEqual(tool_argv(given), want)


class RunTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="sba-ext-test-")
        self.addCleanup(shutil.rmtree, self.dir, ignore_errors=True)
        self.fake = os.path.join(self.dir, "fake-ssebench-audit")
        with open(self.fake, "w") as f:
            f.write(FAKE.format(python=sys.executable))
        os.chmod(self.fake, stat.S_IRWXU)
        self.record = os.path.join(self.dir, "record.json")
        env = mock.patch.dict(
            os.environ,
            {"SSEBENCH_AUDIT_BIN": self.fake, "SBA_FAKE_RECORD": self.record, "SBA_FAKE_MARK": "inherited"},
        )
        env.start()
        self.addCleanup(env.stop)
        self.command = load_command()
        self.parser = ssebench_parser(self.command)

    def run_audit(self, *argv, **env):
        """`ssebench audit ARGV...`: returns (status, the fake's record, its stdout, our stderr)."""
        args = self.parser.parse_args(["audit", *argv])
        err = io.StringIO()
        with mock.patch.dict(os.environ, env), captured_stdout_fd() as out, contextlib.redirect_stderr(err):
            status = self.command.run(args)
        record = None
        if os.path.exists(self.record):
            with open(self.record) as f:
                record = json.load(f)
            os.remove(self.record)
        return status, record, out.getvalue(), err.getvalue()

    def test_exit_codes_and_arguments_pass_through(self):
        for code in (0, 1, 2, 3):
            with self.subTest(code=code):
                status, record, out, err = self.run_audit(
                    "gate", "--project", "x", "--attestation", "a.json", SBA_FAKE_EXIT=str(code)
                )
                self.assertEqual(status, code)
                self.assertEqual(record["argv"], ["gate", "--project", "x", "--attestation", "a.json"])
                self.assertEqual(record["mark"], "inherited")  # the environment is inherited
                self.assertIn("fake ssebench-audit on stdout", out)  # stdout is inherited, not captured
                self.assertEqual(err, "")

    def test_default_subcommand_is_prepended(self):
        status, record, _, _ = self.run_audit("--project", "x", "--format", "json")
        self.assertEqual(status, 0)
        self.assertEqual(record["argv"], ["audit", "--project", "x", "--format", "json"])
        _, record, _, _ = self.run_audit()
        self.assertEqual(record["argv"], ["audit"])
        _, record, _, _ = self.run_audit("version")
        self.assertEqual(record["argv"], ["version"])

    def test_binary_found_on_path(self):
        bindir = os.path.join(self.dir, "bin")
        os.mkdir(bindir)
        shutil.copy(self.fake, os.path.join(bindir, "ssebench-audit"))
        with mock.patch.dict(os.environ, {"PATH": bindir}):
            del os.environ["SSEBENCH_AUDIT_BIN"]
            status, record, _, _ = self.run_audit("cleanup", SBA_FAKE_EXIT="1")
        self.assertEqual(status, 1)
        self.assertEqual(record["argv"], ["cleanup"])

    def test_missing_binary(self):
        empty = os.path.join(self.dir, "empty")
        os.mkdir(empty)
        with mock.patch.dict(os.environ, {"PATH": empty}):
            del os.environ["SSEBENCH_AUDIT_BIN"]
            status, record, out, err = self.run_audit("--project", "x")
        self.assertEqual(status, 2)
        self.assertIsNone(record)
        self.assertEqual(err, MISSING)

    def test_bin_env_not_executable(self):
        status, record, _, err = self.run_audit(SSEBENCH_AUDIT_BIN=os.path.join(self.dir, "nope"))
        self.assertEqual(status, 2)
        self.assertIsNone(record)
        self.assertEqual(err.count("\n"), 1)
        self.assertTrue(err.startswith("ssebench audit: SSEBENCH_AUDIT_BIN="), err)

    def test_child_killed_by_sigint_is_130(self):
        status, record, _, _ = self.run_audit("audit", SBA_FAKE_MODE="sigint-self")
        self.assertEqual(status, 128 + signal.SIGINT)
        self.assertEqual(record["argv"], ["audit"])

    def test_ctrl_c_waits_for_the_child(self):
        # The fake sends SIGINT to this process while run() waits, then dies of SIGINT itself.
        try:
            status, _, _, _ = self.run_audit("audit", SBA_FAKE_MODE="ctrl-c")
        except KeyboardInterrupt:
            self.fail("Ctrl-C escaped run() instead of waiting for the child")
        self.assertEqual(status, 130)


@unittest.skipUnless(os.environ.get("SSEBENCH_AUDIT_REAL_BIN"), "SSEBENCH_AUDIT_REAL_BIN is not set")
class RealBinaryTest(unittest.TestCase):
    def test_version(self):
        command = load_command()
        parser = ssebench_parser(command)
        with mock.patch.dict(os.environ, {"SSEBENCH_AUDIT_BIN": os.environ["SSEBENCH_AUDIT_REAL_BIN"]}):
            with captured_stdout_fd() as out:
                status = command.run(parser.parse_args(["audit", "version"]))
        self.assertEqual(status, 0)
        self.assertIn("ssebench-audit", out.getvalue())


if __name__ == "__main__":
    unittest.main()
