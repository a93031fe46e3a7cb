"""The npu-bridge command."""

from npu_bridge.core.cli.main import main


def test_info(capsys):
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert "npu_bridge 0.1.0" in out and "TensorFlow 2.21" in out and "loaded: True" in out
    assert "rank 0 of 1" in out


def test_info_reports_a_malformed_world(capsys, monkeypatch):
    monkeypatch.setenv("RANK_SIZE", "two")
    assert main(["info"]) == 1
    assert "RANK_SIZE" in capsys.readouterr().err


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
