"""What ``npu_device.open()`` plans: it validates the options a script set once, resolves the world once, plans
without a parameter_map in between, and gets the PassPlan a TF1 session with the same options gets. Prints one
RESULT line."""

import dataclasses
import json
import os

import tensorflow as tf
from tensorflow.python.eager import context

import npu_device
from npu_bridge.core.options import parse
from npu_bridge.core.plan import pass_contract
from npu_bridge.core.session import bridge
from npu_bridge.core.world import world

calls = {"validated": 0, "parse_config": 0, "environment_world": 0}
plans = []


def counted(module, name, record=None):
    original = getattr(module, name)

    def wrapper(*args, **kwargs):
        calls[name] = calls.get(name, 0) + 1
        result = original(*args, **kwargs)
        if record is not None:
            record.append(result)
        return result

    setattr(module, name, wrapper)


counted(parse, "_validated")
counted(parse, "parse_config")
counted(world, "environment_world")
counted(bridge, "plan_validated", plans)

options = npu_device.global_options()
options.precision_mode = "allow_mix_precision"
options.dump_config.enable_dump = True
options.dump_config.dump_path = os.getcwd()
options.dump_config.dump_step = "0|2"
handle = npu_device.open().as_default()
at_open = dict(calls)
function_plan = plans[0]
function_entry = next(
    e for e in context.context().config.graph_options.rewrite_options.custom_optimizers if e.name == "NpuOptimizer"
)

config = tf.compat.v1.ConfigProto()
entry = config.graph_options.rewrite_options.custom_optimizers.add()
entry.name = "NpuOptimizer"
handle.options.write_parameter_map(entry, explicit_only=True)  # what a TF1 script with these options writes
session_plan = bridge.bridge_config("", config)
session_entry = next(
    e for e in session_plan.config.graph_options.rewrite_options.custom_optimizers if e.name == "NpuOptimizer"
)
pass_contract.compact(session_entry)
wire_difference = {
    name
    for name in set(pass_contract.read(function_entry)) | set(pass_contract.read(session_entry))
    if pass_contract.read(function_entry).get(name) != pass_contract.read(session_entry).get(name)
}

result = {
    "validated": at_open["_validated"],
    "parse_config": at_open["parse_config"],
    "environment_world": at_open["environment_world"],
    "plans": at_open["plan_validated"],
    "device_id": [handle.options.get("session_device_id"), function_plan.world.device_id],
    "same_options": session_plan.options == function_plan.options == handle.options,
    "function_graphs": [function_plan.pass_plan.function_graphs, session_plan.pass_plan.function_graphs],
    "same_pass_plan": dataclasses.replace(session_plan.pass_plan, function_graphs=True) == function_plan.pass_plan,
    "wire_difference": sorted(wire_difference),
    "dump_enabled": function_plan.pass_plan.dump_enabled,
}
print("RESULT " + json.dumps(result), flush=True)
