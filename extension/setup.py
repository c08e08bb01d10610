"""Build shim for offline hosts; the project itself is declared in pyproject.toml.

setuptools.build_meta needs a `bdist_wheel` command, both to prepare the metadata and to build
the wheel. setuptools 70.1 and later have one; older ones take it from the `wheel` package,
which pip installs into an isolated build environment from the package index. Offline
(`pip install --no-build-isolation --no-index`, as extension/test.sh does) with an older
setuptools and no `wheel` there is none, so this file supplies a minimal one, for a pure-Python
`py3-none-any` wheel, from the standard library. It is used only when no real one can be found.
"""

import base64
import csv
import hashlib
import io
import os
import re
import shutil
import zipfile

from setuptools import Command, setup


def _have_bdist_wheel() -> bool:
    try:
        import setuptools.command.bdist_wheel  # noqa: F401  (setuptools >= 70.1)

        return True
    except ImportError:
        pass
    try:
        import wheel.bdist_wheel  # noqa: F401

        return True
    except ImportError:
        return False


class bdist_wheel(Command):  # noqa: N801: distutils command classes are named after the command
    description = "build a pure-Python wheel (stand-in for the wheel package's bdist_wheel)"
    user_options = [
        ("bdist-dir=", "b", "temporary directory for creating the distribution"),
        ("dist-dir=", "d", "directory to put the built wheel in"),
        ("keep-temp", "k", "keep the pseudo-installation tree"),
    ]
    boolean_options = ["keep-temp"]

    # Files of the .egg-info directory that have no place in a .dist-info one.
    _EGG_ONLY = {"PKG-INFO", "requires.txt", "SOURCES.txt", "not-zip-safe", "dependency_links.txt"}

    def initialize_options(self):
        self.bdist_dir = None
        self.dist_dir = None
        self.keep_temp = False

    def finalize_options(self):
        if self.bdist_dir is None:
            self.bdist_dir = os.path.join(self.get_finalized_command("bdist").bdist_base, "wheel")
        if self.dist_dir is None:
            self.dist_dir = "dist"

    def _wheel_name(self):
        name = re.sub(r"[-_.]+", "_", self.distribution.get_name()).lower()
        version = re.sub(r"[^\w\d.]+", "_", self.distribution.get_version())
        return name, version

    def egg2dist(self, egg_info_dir, dist_info_dir):
        """Turn setuptools' .egg-info directory into a .dist-info one (and remove the former)."""
        os.makedirs(dist_info_dir, exist_ok=True)
        shutil.copyfile(os.path.join(egg_info_dir, "PKG-INFO"), os.path.join(dist_info_dir, "METADATA"))
        for entry in os.listdir(egg_info_dir):
            src = os.path.join(egg_info_dir, entry)
            if entry in self._EGG_ONLY or not os.path.isfile(src):
                continue
            shutil.copyfile(src, os.path.join(dist_info_dir, entry))
        shutil.rmtree(egg_info_dir)

    @staticmethod
    def _entry(name):
        info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
        info.external_attr = 0o644 << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        return info

    def run(self):
        self.run_command("build")
        build_lib = self.get_finalized_command("build").build_lib
        self.run_command("egg_info")
        egg_info_dir = self.get_finalized_command("egg_info").egg_info

        name, version = self._wheel_name()
        root = self.bdist_dir
        if os.path.exists(root):
            shutil.rmtree(root)
        if os.path.isdir(build_lib):
            shutil.copytree(build_lib, root)
        else:
            os.makedirs(root)
        dist_info = f"{name}-{version}.dist-info"
        self.egg2dist(egg_info_dir, os.path.join(root, dist_info))
        with open(os.path.join(root, dist_info, "WHEEL"), "w", encoding="utf-8") as f:
            f.write("Wheel-Version: 1.0\nGenerator: setup.py bdist_wheel shim\nRoot-Is-Purelib: true\nTag: py3-none-any\n")

        files = []
        for here, dirs, names in os.walk(root):
            dirs.sort()
            for n in sorted(names):
                files.append(os.path.relpath(os.path.join(here, n), root).replace(os.sep, "/"))
        # The .dist-info directory goes last, as the wheel spec recommends.
        files.sort(key=lambda p: (p.startswith(dist_info + "/"), p))

        os.makedirs(self.dist_dir, exist_ok=True)
        wheel_path = os.path.join(self.dist_dir, f"{name}-{version}-py3-none-any.whl")
        record = io.StringIO()
        writer = csv.writer(record, lineterminator="\n")
        with zipfile.ZipFile(wheel_path, "w", zipfile.ZIP_DEFLATED) as zf:
            for rel in files:
                with open(os.path.join(root, rel), "rb") as f:
                    data = f.read()
                digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                writer.writerow((rel, f"sha256={digest}", len(data)))
                zf.writestr(self._entry(rel), data)
            writer.writerow((f"{dist_info}/RECORD", "", ""))
            zf.writestr(self._entry(f"{dist_info}/RECORD"), record.getvalue())
        if not self.keep_temp:
            shutil.rmtree(root)


setup(cmdclass={} if _have_bdist_wheel() else {"bdist_wheel": bdist_wheel})
