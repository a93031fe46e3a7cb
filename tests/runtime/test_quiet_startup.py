"""TensorFlow's C++ start-up lines are hidden when npu_bridge is imported first; NPU_BRIDGE_TF_LOGS=1 shows them."""

import os
import sys

import pytest
from helpers.processes import USER_ENVIRONMENT, noise, run_python

from npu_bridge.core.runtime import log
from npu_bridge.core.runtime.errors import EnvironmentVariableError


@pytest.fixture
def tf_logs(monkeypatch):
    """Sets NPU_BRIDGE_TF_LOGS for the test (None: unset)."""

    def set_to(value):
        if value is None:
            monkeypatch.delenv(log.TF_LOGS_VARIABLE, raising=False)
        else:
            monkeypatch.setenv(log.TF_LOGS_VARIABLE, value)

    set_to(None)
    return set_to


def _c_level(text):
    """Writes to file descriptor 2 as C++ code does, past sys.stderr."""
    os.write(2, text.encode())


def test_c_level_output_is_hidden_and_python_output_is_not(capfd, tf_logs):
    with log.hidden_tensorflow_startup():
        _c_level("I0000 start-up line\n")
        print("a python line (a warning, a traceback)", file=sys.stderr)
    _c_level("E0000 a later error\n")
    err = capfd.readouterr().err
    assert "start-up line" not in err
    assert "a python line (a warning, a traceback)" in err
    assert "E0000 a later error" in err  # stderr is back once the block ends


def test_hidden_lines_are_shown_when_the_block_fails(capfd, tf_logs):
    with pytest.raises(ImportError, match="no TensorFlow"):
        with log.hidden_tensorflow_startup():
            _c_level("F0000 why the import failed\n")
            raise ImportError("no TensorFlow")
    assert "F0000 why the import failed" in capfd.readouterr().err
    _c_level("after\n")
    assert capfd.readouterr().err == "after\n"


def test_nothing_is_hidden_with_npu_bridge_tf_logs_1(capfd, tf_logs):
    tf_logs("1")
    with log.hidden_tensorflow_startup():
        _c_level("I0000 start-up line\n")
    assert "I0000 start-up line" in capfd.readouterr().err


def test_a_nested_block_leaves_the_hiding_to_the_outer_one(capfd, tf_logs):
    with log.hidden_tensorflow_startup():
        with log.hidden_tensorflow_startup():
            _c_level("inner\n")
        _c_level("outer\n")
    _c_level("after\n")
    assert capfd.readouterr().err == "after\n"


def test_sys_stderr_is_given_back_and_streams_bound_meanwhile_keep_working(capfd, tf_logs):
    before = sys.stderr
    with log.hidden_tensorflow_startup():
        bound = sys.stderr  # what a logging handler created during TensorFlow's import keeps
        assert bound is not before
    assert sys.stderr is before
    bound.write("through a handler's stream\n")
    bound.flush()
    bound.close()  # absl's handler closes its stream at exit: the real stderr stays open
    print("still open", file=sys.stderr)
    err = capfd.readouterr().err
    assert "through a handler's stream" in err and "still open" in err


@pytest.mark.parametrize("value,shown", [("", False), ("0", False), (" 1 ", True), ("1", True)])
def test_the_switch(value, shown):
    assert log.tensorflow_startup_shown({log.TF_LOGS_VARIABLE: value}) is shown


@pytest.mark.parametrize("value", ["yes", "true", "2", "١"])
def test_a_bad_switch_value_is_refused(value):
    with pytest.raises(EnvironmentVariableError, match=f"NPU_BRIDGE_TF_LOGS has invalid value '{value}'. Allowed: 0"):
        log.tensorflow_startup_shown({log.TF_LOGS_VARIABLE: value})


_IMPORT = """
    import os
    import npu_bridge
    import tensorflow as tf
    from npu_bridge.core.runtime import native_library
    assert native_library.is_loaded()  # npu_bridge switched on
    print("gpus", tf.config.list_physical_devices("GPU"))  # no cuInit error without a CUDA driver
    os.write(2, b"stderr works\\n")
"""


@pytest.mark.slow
def test_importing_tensorflow_after_npu_bridge_prints_nothing_of_tensorflow():
    hidden = run_python(_IMPORT, env=USER_ENVIRONMENT)
    assert hidden.returncode == 0, hidden.stderr
    assert hidden.stderr == "stderr works\n"
    shown = run_python(_IMPORT, env=dict(USER_ENVIRONMENT, NPU_BRIDGE_TF_LOGS="1"))
    assert shown.returncode == 0, shown.stderr
    # This TensorFlow (a CUDA build) prints its start-up lines twice: once for its main library and once for its
    # profiler extension, which carries a second copy of its logging.
    assert noise(shown.stderr), shown.stderr


@pytest.mark.slow
def test_tensorflow_imported_first_shows_its_start_up_lines_but_not_the_cuinit_error():
    result = run_python(
        """
        import tensorflow as tf
        import npu_bridge
        print("gpus", tf.config.list_physical_devices("GPU"))
        """,
        env=USER_ENVIRONMENT,
    )
    assert result.returncode == 0, result.stderr
    assert noise(result.stderr), result.stderr  # printed before npu_bridge was imported
    assert "cuInit" not in result.stderr


@pytest.mark.slow
def test_a_bad_switch_fails_the_tensorflow_import_and_npu_bridge_stays_off():
    result = run_python(
        """
        import npu_bridge
        try:
            import tensorflow
        except ValueError as e:
            print("refused:", e)
        from npu_bridge.core import activation
        try:
            activation.activate()
        except ValueError:
            print("still off")
        """,
        env={"NPU_BRIDGE_TF_LOGS": "on"},
    )
    assert result.returncode == 0, result.stderr
    assert "refused: NPU_BRIDGE_TF_LOGS has invalid value 'on'" in result.stdout and "still off" in result.stdout
