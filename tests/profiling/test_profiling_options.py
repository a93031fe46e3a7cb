"""Profiling options: both profiling_options forms, their validation at session creation, the environment,
ProfilingConfig (current and legacy signatures) and what the settings mean."""

import json
import os

import pytest
import tensorflow as tf
from helpers.profiling import end_profiles, npu_config

from npu_bridge.core.options import parse_values
from npu_bridge.core.options import profiling_options as profiling_options_format
from npu_bridge.core.profiling import settings as profiling_settings
from npu_bridge.core.runtime.errors import NpuOptionError
from npu_bridge.estimator.npu.npu_config import NPURunConfig, ProfilingConfig
from npu_bridge.profiler import profiler

v1 = tf.compat.v1


@pytest.fixture(autouse=True)
def _no_profile_left():
    yield
    end_profiles()


def settings_of(environ=None, **options):
    return profiling_settings.from_session_options(parse_values(options, "test"), environ or {})


def test_empty_options_are_upstreams_defaults():
    assert profiling_options_format.parse("") == profiling_options_format.DEFAULT_OPTIONS
    settings = settings_of(profiling_mode=True, profiling_options="")
    assert settings.training_trace and settings.task_level == "l1" and settings.hccl
    assert settings.output == os.getcwd() and settings.fp_point == settings.bp_point == ""


def test_json_form_is_normalized():
    parsed = profiling_options_format.parse(
        '{"output": "./prof", "training_trace": "on", "task_trace": "l0", '
        '"fp_point": "conv1", "bp_point": "", "aic_metrics": "Memory"}'
    )
    assert parsed == {
        "output": "./prof",
        "training_trace": "on",
        "task_time": "l0",
        "fp_point": "conv1",
        "bp_point": "",
        "aic_metrics": "Memory",
    }


@pytest.mark.parametrize(
    "text, training, task",
    [
        ("training_trace", True, "off"),
        ("task_trace", False, "l1"),
        ("training_trace:task_trace", True, "l1"),
        ("op_trace", False, "l1"),
    ],
)
def test_legacy_colon_form(text, training, task):
    settings = settings_of(profiling_mode=True, profiling_options=text, fp_point="a", bp_point="b")
    assert (settings.training_trace, settings.task_level) == (training, task)
    assert (settings.fp_point, settings.bp_point) == ("a", "b")


def test_json_points_win_over_the_legacy_keys_and_missing_keys_take_ascends_defaults():
    settings = settings_of(profiling_mode=True, profiling_options='{"fp_point": "x"}', fp_point="a", bp_point="b")
    assert (settings.fp_point, settings.bp_point) == ("x", "b")
    assert not settings.training_trace and settings.task_level == "l1"


def test_storage_limit_and_hardware_only_keys():
    settings = settings_of(
        profiling_mode=True,
        profiling_options=json.dumps(
            {
                "storage_limit": "250MB",
                "l2": "on",
                "msproftx": "off",
                "sys_hardware_mem_freq": "50",
                "host_sys": "cpu,mem",
                "aic_metrics": "PipeUtilization",
            }
        ),
    )
    assert settings.storage_limit_mb == 250
    assert set(settings.hardware_only) == {"l2", "sys_hardware_mem_freq", "host_sys"}


BAD = [
    ('{"training_trace": "yes"}', '"training_trace" must be one of on, off'),
    ('{"task_trace": "l2"}', '"task_trace" must be one of on, off, l0, l1'),
    ('{"task_trace": "on", "task_time": "off"}', "two names of one setting and disagree"),
    ('{"aic_metrics": "Everything"}', '"aic_metrics" must be one of ArithmeticUtilization'),
    ('{"storage_limit": "100MB"}', '"storage_limit" must be <N>MB with 200 <= N <= 4294967295'),
    ('{"storage_limit": "1GB"}', '"storage_limit" must be <N>MB'),
    ('{"training_trace": true}', 'key "training_trace" must be a JSON string, got true'),
    ('{"host_sys": "cpu,gpu"}', '"host_sys" must be a comma-separated list of cpu, mem'),
    ('{"dvpp_freq": "0"}', '"dvpp_freq" must be a positive integer'),
    ('{"output": ""}', '"output" is empty'),
    ('{"output": ', "not valid JSON"),
    ('["training_trace"]', "must be a JSON object"),
    ("training_trace:memory", "profiling options must be in 'training_trace', 'task_trace' or 'op_trace'"),
    ("op_trace:training_trace", "op_trace can not be combined"),
]


@pytest.mark.parametrize("text, detail", BAD, ids=[b[0] for b in BAD])
def test_bad_options_are_rejected_when_the_session_is_created(text, detail):
    with pytest.raises(NpuOptionError, match="profiling_options") as raised:
        v1.Session(config=npu_config(profiling_mode=True, profiling_options=text))
    assert raised.value.key == "profiling_options"
    assert detail in str(raised.value) and "Allowed: JSON object string" in str(raised.value)


def test_an_output_that_cannot_be_created_is_rejected(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(NpuOptionError, match=r'"output" .*file/prof: .*file exists and is not a directory'):
        v1.Session(
            config=npu_config(profiling_mode=True, profiling_options=json.dumps({"output": str(blocker / "prof")}))
        )


def test_bad_options_pass_while_profiling_is_off():
    assert parse_values({"profiling_mode": False, "profiling_options": '{"training_trace": "yes"}'}, "t")


def test_unknown_json_keys_are_warned_with_a_suggestion(npu_log):
    assert profiling_options_format.parse('{"trainig_trace": "on"}') == {}
    assert any("'trainig_trace' is not known" in m and "did you mean 'training_trace'" in m for m in npu_log)


def test_profiling_mode_environment_variable_values():
    assert settings_of({"PROFILING_MODE": "true"}) is not None
    assert settings_of({"PROFILING_MODE": "false"}) is None
    assert settings_of({}) is None
    with pytest.raises(NpuOptionError, match="PROFILING_MODE"):
        settings_of({"PROFILING_MODE": "yes please"})


def test_profiling_config_current_form_maps_to_the_parameter_map():
    config = ProfilingConfig(enable_profiling=True, profiling_options='{"output": "./p", "training_trace": "on"}')
    assert config.parameter_map_values() == {
        "profiling_mode": True,
        "profiling_options": '{"output": "./p", "training_trace": "on"}',
    }
    assert ProfilingConfig(True).parameter_map_values() == {"profiling_mode": True, "profiling_options": ""}
    assert ProfilingConfig().parameter_map_values() == {"profiling_mode": False}
    values = NPURunConfig(profiling_config=config).parameter_map_values()
    assert values["profiling_mode"] is True and values["profiling_options"].startswith('{"output"')


def test_profiling_config_legacy_form():
    config = ProfilingConfig(True, ["training_trace", "task_trace"], fp_point="conv1/Conv2D", bp_point="loss")
    assert config.parameter_map_values() == {
        "profiling_mode": True,
        "profiling_options": "training_trace:task_trace",
        "fp_point": "conv1/Conv2D",
        "bp_point": "loss",
    }
    assert ProfilingConfig(True, enable_options=["op_trace"]).profiling_options == "op_trace"


def test_profiling_config_checks_values_when_created():
    with pytest.raises(NpuOptionError, match="ProfilingConfig"):
        ProfilingConfig(enable_profiling=True, profiling_options='{"task_time": "full"}')
    with pytest.raises(NpuOptionError, match="profiling options must be in"):
        ProfilingConfig(True, ["memory_trace"])


def test_profiler_is_available_under_its_upstream_path():
    assert profiler.Profiler.__module__ == "npu_bridge.core.profiling.profiler_scope"
