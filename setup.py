"""Builds npu_bridge's C++ library and pins the TensorFlow it is built against (the rest is in pyproject.toml).

The C++ library (ops/, optimizers/) is compiled against the TensorFlow of the build environment: the pinned one
pip installs for an isolated build (`pip install .`), or the one already installed with

    python -m pip install -r requirements.txt
    python -m pip install --no-build-isolation -e ".[test,lint]"
"""

import concurrent.futures
import glob
import json
import os
import runpy
import subprocess
import sys
import time

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
NATIVE_SOURCE_DIRS = ("ops", "optimizers")
EXTRA_COMPILE_FLAGS = ["-O2", "-fPIC", "-Wno-deprecated-declarations", "-Wno-interference-size"]
# Headers TensorFlow ships outside its flags' include path, and its library beside libtensorflow_framework (the
# gRPC server of ops/runtime/job_server.cc is a GrpcServer, which lives there)
BUNDLED_INCLUDE_DIRS = ("external/com_github_grpc_grpc/include", "external/farmhash_archive/src")
EXTRA_TF_LIBRARIES = ("libtensorflow_cc.so.2",)
BUILD_INFO = "_build_info.json"  # read by npu_bridge/core/runtime/native_library.py: which TensorFlow this build is for
GENERATED_HEADERS = ("npu_bridge/core/plan/contract_header.py", "npu_bridge/core/runtime/c_header.py")
MAX_COMPILE_JOBS = 2  # one TF translation unit needs ~0.6 GB and two cores are the norm here


def _import_tensorflow():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    try:
        import tensorflow as tf
    except ImportError as e:
        sys.exit(
            "npu_bridge: the build needs TensorFlow. A plain `pip install .` installs the pinned one for the "
            "build; with --no-build-isolation install it first:\n"
            "    python -m pip install -r requirements.txt\n"
            "    python -m pip install --no-build-isolation -e .\n"
            f"(import error: {e})"
        )
    return tf


class BuildNativeLibrary(build_ext):
    """Compiles the .cc files under ops/ and optimizers/ into npu_bridge/libnpu_bridge.so with TensorFlow's flags,
    one translation unit per directory (``_write_unit``)."""

    def get_ext_filename(self, ext_name):
        return os.path.join(*ext_name.split(".")) + ".so"

    def copy_extensions_to_source(self):
        super().copy_extensions_to_source()
        for ext in self.extensions:
            package = ext.name.split(".")[:-1]
            self.copy_file(os.path.join(self.build_lib, *package, BUILD_INFO), os.path.join(HERE, *package))

    def build_extension(self, ext):
        # The C++ declarations of the pass contract and of the C functions are generated from their one declaration
        # in Python, loaded by path: importing npu_bridge here would switch it on without its library.
        for generator in GENERATED_HEADERS:
            print(f"npu_bridge: generated {_write_generated_header(generator)}", flush=True)
        tf = _import_tensorflow()
        compile_flags = tf.sysconfig.get_compile_flags() + EXTRA_COMPILE_FLAGS + [f"-I{HERE}"]
        compile_flags += [f"-I{os.path.join(tf.sysconfig.get_include(), d)}" for d in BUNDLED_INCLUDE_DIRS]
        link_flags = tf.sysconfig.get_link_flags() + [f"-l:{lib}" for lib in EXTRA_TF_LIBRARIES]
        output = os.path.abspath(self.get_ext_fullpath(ext.name))
        obj_dir = os.path.abspath(os.path.join(self.build_temp, "npu_bridge_objects"))
        os.makedirs(obj_dir, exist_ok=True)
        os.makedirs(os.path.dirname(output), exist_ok=True)

        headers = [h for d in NATIVE_SOURCE_DIRS for h in glob.glob(os.path.join(HERE, d, "**", "*.h"), recursive=True)]
        newest_header = max((os.path.getmtime(h) for h in headers), default=0.0)
        flags_file = os.path.join(obj_dir, "flags.json")
        flags_changed = _read_json(flags_file) != compile_flags
        jobs = []
        objects = []
        for unit in NATIVE_SOURCE_DIRS:
            members = [source for source in ext.sources if source.split(os.sep)[0] == unit]
            unit_source, listing_changed = _write_unit(obj_dir, unit, members)
            obj = os.path.join(obj_dir, f"{unit}.o")
            objects.append(obj)
            stale = (
                flags_changed
                or listing_changed
                or not os.path.exists(obj)
                or os.path.getmtime(obj) < max([newest_header] + [os.path.getmtime(source) for source in members])
            )
            if stale or self.force:
                jobs.append((unit_source, obj, f"{unit}/ ({len(members)} files)"))
        jobs_allowed = max(1, min(MAX_COMPILE_JOBS, int(os.environ.get("NPU_BRIDGE_BUILD_JOBS", "2"))))
        started = time.monotonic()
        if jobs:
            names = ", ".join(name for _, _, name in jobs)
            print(f"npu_bridge: compiling {names} with {jobs_allowed} jobs", flush=True)
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs_allowed) as pool:
            futures = {
                pool.submit(_run, ["g++", "-c", source, "-o", obj] + compile_flags): name for source, obj, name in jobs
            }
            for done, future in enumerate(concurrent.futures.as_completed(futures), 1):
                future.result()
                elapsed = time.monotonic() - started
                print(f"npu_bridge: compiled {futures[future]} ({done}/{len(jobs)}, {elapsed:.0f} s)", flush=True)
        with open(flags_file, "w", encoding="utf-8") as f:
            json.dump(compile_flags, f)
        print(f"npu_bridge: linking {output}", flush=True)
        _run(["g++", "-shared"] + objects + ["-o", output] + link_flags)
        with open(os.path.join(os.path.dirname(output), BUILD_INFO), "w", encoding="utf-8") as f:
            json.dump(
                {
                    "tensorflow_version": tf.__version__,
                    "tensorflow_git_version": tf.version.GIT_VERSION,
                    "compile_flags": compile_flags,
                    "link_flags": link_flags,
                },
                f,
                indent=1,
            )


def _write_unit(obj_dir, unit, sources):
    """Writes {obj_dir}/{unit}.cc, one translation unit that includes every source of ``unit`` (ops/, optimizers/).

    Parsing TensorFlow's headers is most of the time of every translation unit: the 51 sources compiled one by one
    took 148 s on two cores, as two units 20 s. The sources stay separate files, and compiler messages name them.
    Returns:
      (its path, whether its list of sources changed).
    """
    path = os.path.join(obj_dir, f"{unit}.cc")
    text = "".join(f'#include "{source}"\n' for source in sorted(sources))
    if _read_text(path) == text:
        return path, False
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path, True


def _read_text(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError:
        return None


def _write_generated_header(generator):
    """Renders a generator's header from its table (both loaded by path) and writes it when its text changed."""
    module = runpy.run_path(os.path.join(HERE, generator))
    text = module["render"](runpy.run_path(os.path.join(HERE, module["TABLE"])))
    path = os.path.join(HERE, module["HEADER"])
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return module["HEADER"]  # unchanged: keep its time, so nothing recompiles for it
    except FileNotFoundError:
        pass
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return module["HEADER"]


def _read_json(path):
    try:
        text = _read_text(path)
        return None if text is None else json.loads(text)
    except ValueError:  # not JSON, or not UTF-8
        return None


def _run(cmd):
    result = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"npu_bridge build failed: {' '.join(cmd[:4])} ...\n{result.stderr}")


NATIVE_SOURCES = sorted(
    os.path.relpath(p, HERE)
    for d in NATIVE_SOURCE_DIRS
    for p in glob.glob(os.path.join(HERE, d, "**", "*.cc"), recursive=True)
)


def _runtime_requirements():
    """The installed metadata's pins: exactly the TensorFlow this build compiles against (the library loads with
    no other), tf-keras of its minor version, numpy, tf-slim (the TF1 mode's tf.contrib.slim / layers),
    keras-applications (which TensorFlow 1.15 installed with itself; zoo scripts import it) and grpcio
    (step_sequences; the range TensorFlow 2.21 requires)."""
    tf_version = _import_tensorflow().__version__
    minor = ".".join(tf_version.split(".")[:2])
    return [
        f"tensorflow=={tf_version}",
        f"tf-keras~={minor}.0",
        "numpy>=1.26,<3",
        "tf-slim==1.1.0",
        "keras-applications==1.0.8",
        "grpcio>=1.24.3,<2",
    ]


# Metadata, scripts and packages are in pyproject.toml; this file adds the C++ library and the pins.
setup(
    ext_modules=[Extension("npu_bridge.libnpu_bridge", sources=NATIVE_SOURCES)],
    cmdclass={"build_ext": BuildNativeLibrary},
    install_requires=_runtime_requirements(),
    zip_safe=False,
)
