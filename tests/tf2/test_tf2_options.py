"""``npu_device.global_options()``: the adapter's field tree, its assignment errors, and the values the option
table receives when the device opens."""

import threading

import pytest

from npu_bridge.core.runtime.errors import NpuOptionError
from npu_bridge.core.tf2 import option_fields, option_values
from npu_bridge.core.tf2.global_options import OptionGroup


def _fresh():
    return OptionGroup("", threading.Event())


def test_defaults_and_nested_containers_read_as_the_adapter_declares_them():
    options = _fresh()
    assert options.graph_run_mode == 1 and options.precision_mode is None and options.hcom_parallel is True
    assert options.dump_config.dump_mode == "output" and options.dump_config.enable_dump is False
    assert options.experimental.multi_branches_config.dynamic_node_type is None
    assert options.experimental.logical_device_deploy_config.logical_device_cluster_deploy_mode == "LB"
    assert "dump_config" in dir(options) and "precision_mode" in dir(options)


def test_as_dict_flattens_leaf_names_and_renders_strings():
    options = _fresh()
    options.dump_config.enable_dump = True
    options.dump_config.dump_step = "0|5"
    flat = options.as_dict()
    assert flat["enable_dump"] == "1" and flat["dump_step"] == "0|5" and flat["hcom_parallel"] == "1"
    assert flat["graph_run_mode"] == "1" and "precision_mode" not in flat  # unset fields are left out


@pytest.mark.parametrize(
    "path, value, error, words",
    [
        ("precision_mode", "allow_mix", ValueError, "not in optional list"),
        ("dump_config.dump_mode", "everything", ValueError, "not in optional list"),
        ("hcom_parallel", "yes", TypeError, "expected bool, got str"),
        ("graph_run_mode", "1", TypeError, "expected int, got str"),
        ("jit_compile", True, TypeError, "expected str, got bool"),
        ("enable_exception_dump", 3, ValueError, "not in optional list"),
    ],
)
def test_a_value_outside_a_fields_list_raises_at_assignment(path, value, error, words):
    options = _fresh()
    *groups, leaf = path.split(".")
    container = options
    for name in groups:
        container = getattr(container, name)
    with pytest.raises(error) as raised:
        setattr(container, leaf, value)
    assert words in str(raised.value) and path in str(raised.value)


def test_equal_values_pass_as_in_the_adapter():
    options = _fresh()
    options.hcom_parallel = 1  # 1 == True
    options.graph_run_mode = False  # False == 0
    assert options.hcom_parallel == 1 and options.graph_run_mode is False


def test_an_unknown_attribute_raises_value_error_listing_the_options():
    options = _fresh()
    with pytest.raises(ValueError) as raised:
        options.precison_mode = "allow_mix_precision"
    assert "'NpuConfig' has no option 'precison_mode'" in str(raised.value) and "precision_mode" in str(raised.value)
    with pytest.raises(ValueError, match="NpuDumpConfig"):
        options.dump_config.dump_pth = "/tmp"
    with pytest.raises(ValueError, match="group of options"):
        options.dump_config = None


def test_legacy_and_deprecated_fields_are_accepted_with_a_warning(npu_log):
    options = _fresh()
    options.auto_tune_mode = "RL,GA"
    options.op_select_implmode = "high_precision"
    assert any("auto_tune_mode was removed" in m for m in npu_log)
    assert any("op_select_implmode is deprecated; use op_precision_mode" in m for m in npu_log)


def test_assignments_after_the_device_read_the_options_say_they_have_no_effect(npu_log):
    opened = threading.Event()
    options = OptionGroup("", opened)
    options.precision_mode = "force_fp32"
    opened.set()
    options.precision_mode = "allow_mix_precision"
    assert any("after npu_device.open() has no effect" in m for m in npu_log)


def test_assigned_fields_reach_the_option_table_under_their_option_names():
    options = _fresh()
    options.precision_mode = "allow_mix_precision"
    options.profiling_config.enable_profiling = True
    options.dump_config.enable_dump = True
    options.dump_config.dump_path = "/tmp"
    options.dump_config.dump_step = 10  # scripts also pass ints
    options.graph_memory_max_size = str("21*1024*1024*1024")  # an expression string, as four zoo scripts set it
    options.variable_memory_max_size = 4 * 1024 * 1024 * 1024
    options.hcom_parallel = True
    parsed = option_values.parse_assigned(options.assigned())
    assert parsed.get("precision_mode") == "allow_mix_precision"
    assert parsed.get("profiling_mode") is True
    assert parsed.get("profiling_options") == option_fields.DEFAULT_PROFILING_OPTIONS  # the adapter's default
    assert parsed.get("dump_step") == "10" and parsed.get("enable_dump") is True
    assert parsed.get("graph_memory_max_size") == "21*1024*1024*1024"
    assert parsed.get("variable_memory_max_size") == str(4 * 1024**3)


def test_a_value_the_option_table_refuses_names_the_option_when_the_device_opens():
    options = _fresh()
    options.dump_config.enable_dump = True
    options.dump_config.dump_path = "/tmp"
    options.dump_config.dump_step = "5-2"
    with pytest.raises(NpuOptionError) as raised:
        option_values.parse_assigned(options.assigned())
    assert "dump_step" in str(raised.value) and "npu_device.global_options()" in str(raised.value)


def test_every_field_with_an_option_names_a_key_of_the_option_table():
    from npu_bridge.core.options.table import OPTIONS

    for field in option_fields.FIELDS:
        if field.option_name is None:
            assert field.no_effect, field.path
        else:
            assert field.option_name in OPTIONS, field.path
