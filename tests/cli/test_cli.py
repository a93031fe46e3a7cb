"""The npu-bridge command, and what every tool does with its arguments."""

import importlib

import pytest

from npu_bridge.core.cli.main import main
from npu_bridge.core.runtime import arg_checks


def test_info(capsys):
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert "npu_bridge 0.1.0" in out and "TensorFlow 2.21" in out and "loaded: True" in out
    assert "rank 0 of 1" in out and "across machines" not in out


def test_info_reports_a_malformed_world(capsys, monkeypatch):
    monkeypatch.setenv("RANK_SIZE", "two")
    assert main(["info"]) == 2  # a bad input, as in every npu_bridge tool
    assert "RANK_SIZE" in capsys.readouterr().err


def test_info_reports_a_malformed_rank_table_with_exit_code_2(capsys, monkeypatch, tmp_path):
    table = tmp_path / "hccl.json"
    table.write_text('{"status": "completed", "server_count": "1", "server_list": [')
    monkeypatch.setenv("RANK_TABLE_FILE", str(table))
    assert main(["info"]) == 2
    err = capsys.readouterr().err
    assert f"rank table {table}: is not valid JSON" in err and "Traceback" not in err


SLURM_TASK = {
    "SLURM_JOB_ID": "4242",
    "SLURM_STEP_ID": "0",
    "SLURM_PROCID": "2",
    "SLURM_STEP_NUM_TASKS": "4",
    "SLURM_STEP_NODELIST": "node[1-2]",
    "SLURM_STEP_TASKS_PER_NODE": "2(x2)",
    "SLURM_LOCALID": "0",
}


def test_info_shows_a_scheduler_s_world_and_where_it_came_from(capsys, monkeypatch):
    for name in ("NPU_RUN_JOB_SECRET", "NPU_RUN_INSECURE_OPEN_PORTS", "NPU_RUN_NETWORK"):
        monkeypatch.delenv(name, raising=False)
    for name, value in SLURM_TASK.items():
        monkeypatch.setenv(name, value)
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert "world: rank 2 of 4 (source: slurm, device id 0)" in out
    assert "from: SLURM_PROCID='2', SLURM_STEP_NUM_TASKS='4', SLURM_STEP_NODELIST='node[1-2]'" in out
    assert "local ranks: 2 (this is local rank 0)" in out
    assert "hosts: 2 (node1, node2)" in out and "job id: 4242" in out
    # across machines without npu-run: how the ranks will guard their servers
    assert "across machines: no job secret: the ranks will refuse to start (give every rank NPU_RUN_JOB_SECRET" in out
    monkeypatch.setenv("NPU_RUN_JOB_SECRET", "/somewhere/job.secret")
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert "across machines: the ranks vouch for each other's connections under the job secret" in out
    monkeypatch.delenv("NPU_RUN_JOB_SECRET")
    monkeypatch.setenv("NPU_RUN_INSECURE_OPEN_PORTS", "1")
    assert main(["info"]) == 0
    assert "across machines: open to every process on the job's machines" in capsys.readouterr().out
    monkeypatch.setenv("SLURM_NODEID", "0")
    assert main(["info"]) == 2
    assert "SLURM_NODEID='0', but task 2 of the step runs on node node2 (node 1)" in capsys.readouterr().err


def test_info_in_a_torchrun_rank_across_machines_does_not_join_rank_0s_rendezvous(capsys, monkeypatch):
    torchrun = {"RANK": "0", "WORLD_SIZE": "4", "LOCAL_WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1"}
    for name, value in dict(torchrun, MASTER_PORT="9", HCCL_CONNECT_TIMEOUT="1").items():
        monkeypatch.setenv(name, value)
    assert main(["info"]) == 0  # rank 0 would listen and wait for three ranks: info neither listens nor waits
    out = capsys.readouterr().out
    assert "world: rank 0 of 4 (source: torchrun" in out
    assert "hosts: learned by the ranks from rank 0 at 127.0.0.1:9 when they start" in out
    assert "local ranks" not in out


def test_options_table_and_one_option(capsys):
    assert main(["options"]) == 0
    table = capsys.readouterr().out
    assert "|" not in table and "`" not in table  # a terminal table, not markdown
    assert max(len(line) for line in table.splitlines()) <= 120
    row = next(line for line in table.splitlines() if line.startswith("precision_mode "))
    assert row.split()[:4] == ["precision_mode", "s", "init", "unset"]
    assert main(["options", "--markdown"]) == 0
    assert "| `precision_mode` |" in capsys.readouterr().out
    assert main(["options", "dump_mode"]) == 0
    out = capsys.readouterr().out
    assert "stage:" in out and "input" in out and "status here:" in out


def test_unknown_option(capsys):
    assert main(["options", "no_such_option"]) == 2
    assert "unknown option 'no_such_option'" in capsys.readouterr().err


def test_a_mistyped_option_gets_a_suggestion(capsys):
    assert main(["options", "precison_mode"]) == 2
    assert "unknown option 'precison_mode'; did you mean 'precision_mode'?" in capsys.readouterr().err


@pytest.mark.parametrize(
    "tool, argv, message",
    [
        ("npu_bridge.core.launch.cli", ["-n", "٣", "--", "true"], "argument -n/-np/--np: invalid int value: '٣'"),
        ("npu_bridge.core.launch.cli", ["-n", "1_0", "--", "true"], "invalid int value: '1_0'"),
        (
            "npu_bridge.core.launch.cli",
            ["-n", "1", "--stop-timeout", "nan", "--", "true"],
            "invalid float value: 'nan'",
        ),
        ("npu_bridge.core.launch.cli", ["-n", "1", "--port-base", "４００００", "--", "true"], "invalid int value"),
        ("npu_bridge.core.dump.cli", ["compare", "a", "b", "--top", "٣"], "argument --top: invalid int value: '٣'"),
        ("npu_bridge.core.dump.cli", ["compare", "a", "b", "--cosine", "nan"], "invalid float value: 'nan'"),
        ("npu_bridge.core.dump.cli", ["overflow", "d", "-n", "１"], "invalid int value: '１'"),
        ("npu_bridge.core.profiling.cli", ["summary", "p", "--top", "1_0"], "invalid int value: '1_0'"),
    ],
)
def test_numbers_on_a_command_line_are_ascii(tool, argv, message, capsys):
    # int() and float() read other scripts' digits, "1_0" and "nan": usage errors (exit 2) here.
    with pytest.raises(SystemExit) as raised:
        importlib.import_module(tool).main(argv)
    assert raised.value.code == 2
    assert message in capsys.readouterr().err


def test_command_line_numbers_in_ascii_are_read():
    assert arg_checks.command_line_int(" 12 ") == 12 and arg_checks.command_line_int("-3") == -3
    assert arg_checks.command_line_float("1e-3") == 0.001 and arg_checks.command_line_float("inf") == float("inf")
