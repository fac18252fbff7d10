"""Builds shardpoint._core with the repository's CMake build, for
`pip install ./python` (pyproject.toml). Nothing here is fetched: CMake,
Ninja, the compiler and the libraries come from scripts/setup.sh.

Environment:
  SHARDPOINT_BUILD_DIR   the CMake build folder (default: a temporary one
                         under python/build/); reuse it to rebuild quickly
  SHARDPOINT_CMAKE_ARGS  extra arguments for the CMake configure step
                         (default build type Release), e.g.
                         "-DCMAKE_CXX_COMPILER=clang++"
  SHARDPOINT_JOBS        parallel build jobs (default: the machine's cores)
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def version():
    """The version, from the one place it is written."""
    text = (ROOT / "include" / "shardpoint" / "version.hpp").read_text()
    parts = [re.search(r"#define SHARDPOINT_VERSION_%s (\d+)" % p, text).group(1)
             for p in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(parts)


class cmake_build(build_ext):
    """Configures the repository with the Python module on, builds only the
    module's target, and copies the extension where setuptools expects it."""

    def build_extension(self, ext):
        build = Path(os.environ.get("SHARDPOINT_BUILD_DIR") or
                     Path(self.build_temp).resolve() / "cmake")
        args = ["-DCMAKE_BUILD_TYPE=Release"] + shlex.split(
            os.environ.get("SHARDPOINT_CMAKE_ARGS", ""))
        configure = ["cmake", "-S", str(ROOT), "-B", str(build), "-G", "Ninja",
                     "-DSHARDPOINT_BUILD_ONNX=ON", "-DSHARDPOINT_BUILD_PYTHON=ON",
                     "-DSHARDPOINT_BUILD_TESTS=OFF", "-DSHARDPOINT_BUILD_EXAMPLES=OFF",
                     "-DPython3_EXECUTABLE=" + sys.executable] + args
        jobs = os.environ.get("SHARDPOINT_JOBS") or str(os.cpu_count() or 2)
        print("shardpoint: " + " ".join(shlex.quote(a) for a in configure), flush=True)
        subprocess.run(configure, check=True)
        subprocess.run(["cmake", "--build", str(build), "--target", "shardpoint_python",
                        "-j", jobs], check=True)
        built = list((build / "python" / "shardpoint").glob("_core*.so"))
        if len(built) != 1:
            sys.exit("shardpoint: the build made %d extension files in %s"
                     % (len(built), build / "python" / "shardpoint"))
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[0], target)


setup(
    version=version(),
    ext_modules=[Extension("shardpoint._core", sources=[])],
    cmdclass={"build_ext": cmake_build},
)
