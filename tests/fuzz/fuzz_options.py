"""The oracle and the cases of the option category of the fuzz test: what each parameter_map key accepts, read
from what the option table documents (kind, allowed text, the switches a check waits for) and from the formats
upstream documents, independently of ``npu_bridge.core.options.checks``."""

import base64
import json
import os
import re

from fuzz_helpers import (
    ACCEPT,
    ASCII_INT,
    CLEAR,
    CORE_INTS,
    CORE_OTHER,
    EITHER,
    EXTRA_INTS,
    EXTRA_SHARE,
    HOSTILE_BYTES,
    INT64,
    OTHER,
    OTHER_FIELDS,
    REJECT,
    classify_exception,
    digit_variants,
    encode_attr,
    hostile_texts,
    mutations,
    path_kind,
    random_text,
    set_worker_dir,
    worker_path,
)

from npu_bridge.core.options import OPTIONS
from npu_bridge.core.runtime.errors import shortened

# --- option domains: the oracle of one option key -------------------------------------------------------------

PLAIN_ALLOWED = {"b": "true / false", "i": "integer", "s": "string"}
_SET_ITEM = re.compile(r"([\w.:+-]+)(?: \([^)]*\))?")
_UNSUPPORTED_MEMBERS = re.compile(r"\(([\w /]+?) need[^)]*rejected\)")


def closed_set(allowed):
    """The values of an allowed text that lists them ("0 (off) / 1 (on)", "Device / Host"), else None."""
    values, pos = [], 0
    while True:
        match = _SET_ITEM.match(allowed, pos)
        if not match:
            return None
        values.append(match.group(1))
        pos = match.end()
        if not allowed.startswith(" / ", pos):
            break
        pos += 3
    return values if len(values) >= 2 else None


class Domain:
    """What one option key accepts. ``judge_text`` / ``judge_int`` say ACCEPT, REJECT or EITHER for a value
    already read as the key's kind; ``samples`` are valid values."""

    samples: tuple = ()

    def judge_text(self, text):
        raise NotImplementedError

    def judge_int(self, number):
        raise NotImplementedError


class BoolDomain(Domain):
    samples = (True, False)


class IntDomain(Domain):
    def __init__(self, values=None, low=None, high=None):
        self.values, self.low, self.high = values, low, high
        if values:
            self.samples = tuple(values)
        else:
            self.samples = tuple(
                v for v in (low if low is not None else INT64[0], high if high is not None else INT64[1], 1)
            )

    def judge_int(self, number):
        if self.values is not None:
            return ACCEPT if number in self.values else REJECT
        if (self.low is not None and number < self.low) or (self.high is not None and number > self.high):
            return REJECT
        return ACCEPT


class TextDomain(Domain):
    """Any text (free-form options): ordinary text is accepted; NUL and huge values may go either way."""

    samples = ("abc", "")

    def judge_text(self, text):
        return EITHER if "\x00" in text or len(text) > 4096 else ACCEPT


class SetDomain(Domain):
    def __init__(self, values, unsupported=(), environmental=()):
        self.values, self.unsupported, self.environmental = tuple(values), tuple(unsupported), tuple(environmental)
        self.samples = tuple(v for v in values if v not in unsupported)

    def judge_text(self, text):
        if text in self.unsupported:
            return REJECT
        if text in self.environmental:
            return EITHER
        return ACCEPT if text in self.values else REJECT


class FormatDomain(Domain):
    """A text format: ``accepts(text)`` says whether it is valid; ``either`` may soften the verdict; ``extra`` are
    near misses of the format worth trying."""

    def __init__(self, accepts, samples, either=None, extra=lambda files: ()):
        self.accepts, self.samples, self.either, self.extra = accepts, tuple(samples), either, extra

    def judge_text(self, text):
        if self.either is not None and self.either(text):
            return EITHER
        return ACCEPT if self.accepts(text) else REJECT


class PathDomain(Domain):
    """A path: "file" (any existing regular file), "parsed" (a file of a format: only ``valid_files``), "dir"
    (an existing directory), "rw_dir" (an existing directory with read and write permission)."""

    def __init__(self, what, valid_files=(), samples=()):
        self.what, self.valid_files, self.samples = what, tuple(valid_files), tuple(samples)

    def judge_text(self, text):
        if not text or "\x00" in text:
            return REJECT
        kind = path_kind(text)
        if self.what == "parsed":
            if text in self.valid_files:
                return ACCEPT
            return EITHER if kind == "file" and os.path.getsize(worker_path(text)) == 0 else REJECT
        if self.what == "file":
            return ACCEPT if kind == "file" else REJECT
        return ACCEPT if kind == "dir" else REJECT


def _all(pattern):
    compiled = re.compile(pattern)
    return lambda text: bool(compiled.fullmatch(text))


def _dump_step(text):
    items = text.split("|")
    if len(items) > 100:
        return False
    for item in items:
        match = re.fullmatch(r"([0-9]+)(?:-([0-9]+))?", item)
        if not match:
            return False
        first, last = int(match.group(1)), int(match.group(2) or match.group(1))
        if max(first, last) > INT64[1] or (match.group(2) is not None and first >= last):
            return False
    return True


def _dynamic_dims(text):
    groups = text.split(";")
    return all(re.fullmatch(r"[0-9]+(,[0-9]+)*", g) for g in groups) and len({g.count(",") for g in groups}) == 1


_IDENTIFIERS = r"[A-Za-z_][A-Za-z0-9_]*(,[A-Za-z_][A-Za-z0-9_]*)*"
_PROFILING_CHOICES = {
    "training_trace": ("on", "off"),
    "task_trace": ("on", "off", "l0", "l1"),
    "task_time": ("on", "off", "l0", "l1"),
    "hccl": ("on", "off"),
    "aicpu": ("on", "off"),
    "l2": ("on", "off"),
    "msproftx": ("on", "off"),
    "runtime_api": ("on", "off"),
    "ge_api": ("off", "l0", "l1"),
}


_PROFILING_KEYS = set(_PROFILING_CHOICES) | {
    "output",
    "storage_limit",
    "fp_point",
    "bp_point",
    "aic_metrics",
    "llc_profiling",
    "host_sys",
    "host_sys_usage",
    "sys_hardware_mem_freq",
    "sys_io_sampling_freq",
    "sys_interconnection_freq",
    "dvpp_freq",
    "instr_profiling_freq",
    "host_sys_usage_freq",
}


def profiling_options_verdict(text):
    """ACCEPT / REJECT / EITHER of a profiling_options value, by the forms upstream documents."""
    text = text.strip()
    if not text:
        return ACCEPT
    if text[0] not in "{[":
        items = text.split(":")
        if not all(i in ("training_trace", "task_trace", "op_trace") for i in items):
            return REJECT
        return REJECT if "op_trace" in items and len(items) > 1 else ACCEPT
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):
        return REJECT
    if not isinstance(parsed, dict):
        return REJECT
    verdict = ACCEPT
    for key, value in parsed.items():
        if key not in _PROFILING_KEYS:
            verdict = EITHER  # unknown keys: ignored with a warning, or refused
            continue
        if not isinstance(value, str):
            return REJECT
        if key in _PROFILING_CHOICES and value not in _PROFILING_CHOICES[key]:
            return REJECT
        if key == "output":
            if not value or "\x00" in value or len(os.path.abspath(value)) > 4000:
                return REJECT
            if any(len(part) > 255 for part in value.split("/")):
                return REJECT
            if path_kind(value) not in ("dir", "missing"):
                return REJECT
            parent = os.path.dirname(os.path.abspath(worker_path(value)))
            while path_kind(parent) == "missing":
                parent = os.path.dirname(parent)
            if path_kind(parent) != "dir":
                return REJECT
        if key == "storage_limit":
            match = re.fullmatch(r"([0-9]+)MB", value)
            if not match or not 200 <= int(match.group(1)) <= 4294967295:
                return REJECT
        if key.endswith("_freq") and not re.fullmatch(r"[1-9][0-9]*", value):
            return REJECT
        if key in ("aic_metrics", "llc_profiling", "host_sys", "host_sys_usage"):
            verdict = EITHER  # hardware keys with vocabularies of their own
    if len({parsed[key] for key in ("task_trace", "task_time") if key in parsed}) > 1:
        return REJECT  # two names of one setting that disagree
    return verdict


# Valid values that work only where the machine has something (a GPU): either outcome is right.
ENVIRONMENTAL = {"device_target": ("gpu",)}

# Options whose allowed text states a format rather than values: how upstream documents each.
FORMATS = {
    "dump_step": FormatDomain(
        _dump_step,
        ["0|5|10-20", "3"],
        extra=lambda files: [
            "0|" * 100 + "0",
            "|".join(str(i) for i in range(100)),
            "5-3",
            "3-3",
            "1-٣",
            str(2**63),
            str(2**63 - 1),
            "0||1",
            "-1",
            "1-",
        ],
    ),
    "input_shape": FormatDomain(
        _all(r"[^:;,]+:(-1|[0-9]+)(,(-1|[0-9]+))*(;[^:;,]+:(-1|[0-9]+)(,(-1|[0-9]+))*)*"),
        ["data:-1,3"],
        extra=lambda files: ["data:-2,3", "data:", "data:1;label:-1", ":1", "data:1,,2", "data:٣", "data:1;"],
    ),
    "dynamic_dims": FormatDomain(
        _dynamic_dims, ["2,4", "20,20;40,40"], extra=lambda files: ["2,4;8", "2;;4", "2,-4", "٢,٤", "2,4;"]
    ),
    "profiling_options": FormatDomain(
        lambda text: profiling_options_verdict(text) == ACCEPT,
        ['{"training_trace":"on","task_trace":"on"}', "training_trace:task_trace", ""],
        either=lambda text: profiling_options_verdict(text) == EITHER,
        extra=lambda files: (
            [
                json.dumps(value)
                for value in (
                    {"storage_limit": "٣٠٠MB"},
                    {"storage_limit": "199MB"},
                    {"storage_limit": "500MB"},
                    {"storage_limit": "9" * 30 + "MB"},
                    {"sys_io_sampling_freq": "١"},
                    {"sys_io_sampling_freq": "10"},
                    {"output": "a\x00b"},
                    {"output": files.paths["long_path"]},
                    {"output": files.paths["long_name"]},
                    {"output": files.paths["text"]},
                    {"output": files.paths["fifo"]},
                    {"output": files.paths["dev_zero"]},
                    {"output": os.path.join(files.paths["text"], "sub")},
                    {"output": files.paths["dir"]},
                    {"output": ""},
                    {"output": 5},
                    {"output": None},
                    {"output": ["x"]},
                    {"task_trace": "l2"},
                    {"task_trace": "on", "task_time": "off"},
                    {"training_trace": ["on"]},
                    {"fp_point": "x" * 100000},
                    {"fp_point": 5},
                    {"\x00": "on"},
                )
            ]
            + ["training_trace:op_trace", "op_trace", "training_trace:", ":", "Training_trace", '{"a": 1} x']
        ),
    ),
    "experimental_accelerate_train_mode": FormatDomain(
        _all(r"[A-Za-z0-9_]+\|(step|loss)\|[0-9]+(\.[0-9]+)?"), ["fast|step|0.9"]
    ),
    "local_device_list": FormatDomain(_all(r"[0-9]+(,[0-9]+)*"), ["0,1"]),
    "stream_max_parallel_num": FormatDomain(
        _all(r"[A-Za-z_][A-Za-z0-9_]*:[0-9]+(,[A-Za-z_][A-Za-z0-9_]*:[0-9]+)*"), ["DNN_VM_AICPU:10,AIcoreEngine:1"]
    ),
    "auto_multistream_parallel_mode": FormatDomain(
        lambda text: (
            text in ("cv", "LoadBalance")
            or bool(
                re.fullmatch(r"(LoadBalance|MainStream):([1-9][0-9]?)", text) and 1 <= int(text.split(":")[1]) <= 64
            )
        ),
        ["cv", "LoadBalance:8", "MainStream:64"],
    ),
    "graph_memory_max_size": FormatDomain(
        _all(r"[0-9]+( *[*] *[0-9]+)*"),
        ["26843545600"],
        either=lambda text: text.isascii() and text.isdigit() and len(text) > 18,
    ),
    "variable_memory_max_size": FormatDomain(
        _all(r"[0-9]+( *[*] *[0-9]+)*"),
        ["5368709120"],
        either=lambda text: text.isascii() and text.isdigit() and len(text) > 18,
    ),
    "aicore_num": FormatDomain(_all(r"[0-9]+\|[0-9]+"), ["2|4"]),
    "optypelist_for_implmode": FormatDomain(_all(_IDENTIFIERS), ["LayerNorm,SoftmaxV2"]),
    "enable_scope_fusion_passes": FormatDomain(_all(_IDENTIFIERS), ["ScopeLayerNormPass"]),
}


def domain_of(spec, files):
    """The ``Domain`` of an option, from what the table documents about it.

    Raises:
      LookupError: the option cannot be classified (a new option needs a FORMATS entry or a clearer allowed text).
    """
    allowed = spec.allowed
    if spec.name in FORMATS:
        return FORMATS[spec.name]
    if spec.kind == "b":
        return BoolDomain()
    if spec.kind == "i":
        members = closed_set(allowed)
        if members:
            return IntDomain(values=tuple(int(v) for v in members))
        if "clamped" in allowed:
            return IntDomain()
        match = re.search(r"(-?[0-9]+) \.\. (-?[0-9]+)", allowed)
        if match:
            return IntDomain(low=int(match.group(1)), high=int(match.group(2)))
        match = re.search(r"(>=?) ?(-?[0-9]+)", allowed)
        if match:
            return IntDomain(low=int(match.group(2)) + (match.group(1) == ">"))
        return IntDomain()
    if "read and write permission" in allowed:
        return PathDomain("rw_dir", samples=(files.paths["dir"],))
    if re.search(r"path to an existing directory", allowed):
        return PathDomain("dir", samples=(files.paths["dir"],))
    if "path to" in allowed and spec.name in files.valid:
        return PathDomain("parsed", valid_files=(files.valid[spec.name],), samples=(files.valid[spec.name],))
    if "path to" in allowed and "file" in allowed:
        if re.search(r"JSON|\.ini|file of", allowed):
            raise LookupError(f"{spec.name}: a file of a format; add a valid file to VALID_FILE_CONTENT")
        return PathDomain("file", samples=(files.paths["text"],))
    members = closed_set(allowed)
    if members and spec.check is not None:
        unsupported = _UNSUPPORTED_MEMBERS.search(allowed)
        return SetDomain(
            members,
            unsupported.group(1).split(" / ") if unsupported else (),
            ENVIRONMENTAL.get(spec.name, ()),
        )
    if spec.check is None:
        return TextDomain()
    raise LookupError(f"{spec.name}: no oracle for the allowed text {allowed!r}")


def judge_option(spec, domain, field, value):
    """What the oracle expects of one AttrValue (``field``, Python ``value``) for an option."""
    if field not in ("s", "i", "b", "none"):
        return REJECT
    if field == "none":
        field, value = spec.kind, {"b": False, "i": 0, "s": b""}[spec.kind]
    text = None
    if field == "s":
        try:
            text = value.decode("utf-8")
        except UnicodeDecodeError:
            return REJECT
    if spec.kind == "b":
        if field == "b":
            return ACCEPT
        if field == "i":
            return ACCEPT if value in (0, 1) else REJECT
        if text.strip().lower() in ("true", "false", "1", "0"):
            return ACCEPT if text == text.strip() else EITHER
        return REJECT
    if spec.kind == "i":
        if field in ("i", "b"):
            return domain.judge_int(int(value))
        if not ASCII_INT.fullmatch(text.strip()):
            return REJECT
        number = int(text)
        if not INT64[0] <= number <= INT64[1]:
            return REJECT
        verdict = domain.judge_int(number)
        return EITHER if verdict == ACCEPT and text != str(number) else verdict
    if field == "i":
        if spec.strict_kind:
            return REJECT
        text = str(value)
    elif field == "b":
        if not spec.bool_texts:
            return REJECT
        text = spec.bool_texts[0] if value else spec.bool_texts[1]
    return domain.judge_text(text)


def companions(spec, domains, files):
    """Other options a value of ``spec`` needs to be checked and to satisfy the cross-option rules:
    {key: (field, value)}."""
    result = {}
    for switch in spec.checked_when[:1]:
        switch_spec = OPTIONS[switch]
        if switch_spec.kind == "b":
            result[switch] = ("b", True)
        else:
            result[switch] = ("s", domains[switch].samples[0].encode())
    dump_switches = ("enable_dump", "enable_dump_debug")
    if spec.name in dump_switches or any(s in dump_switches for s in result):
        result["dump_path"] = ("s", files.paths["dir"].encode())
    if spec.name == "modify_mixlist":
        result["precision_mode"] = ("s", b"allow_mix_precision")
    if spec.name == "optypelist_for_implmode":
        result["op_select_implmode"] = ("s", b"high_precision")
    trio = {"input_shape": ("s", b"data:-1,3"), "dynamic_dims": ("s", b"2,4"), "dynamic_node_type": ("i", 1)}
    if spec.name in trio or spec.name == "compile_hybrid_mode":
        result.update({k: v for k, v in trio.items() if k != spec.name})
    result.pop(spec.name, None)
    return result


# --- generating option values ---------------------------------------------------------------------------------


def option_values(spec, domain, files, rng):
    """(field, Python value) pairs for one option: the core hostile set, a seeded share of the extra one, random
    values, the valid samples and near misses of them, and the format's own near misses."""
    core, extra = hostile_texts(files)

    def some(values):
        return [v for v in values if rng.random() < EXTRA_SHARE]

    values = [("s", t.encode()) for t in core + some(extra)]
    values += [("s", b) for b in HOSTILE_BYTES[:1] + tuple(some(HOSTILE_BYTES[1:]))]
    values += [("i", n) for n in CORE_INTS + tuple(some(EXTRA_INTS))]
    values += [("b", True), ("b", False)]
    values += list(OTHER_FIELDS[:CORE_OTHER]) + some(OTHER_FIELDS[CORE_OTHER:])
    values += [("s", random_text(rng).encode()) for _ in range(3)]
    values += [("i", rng.randint(INT64[0], INT64[1])), ("i", rng.randint(-100, 100))]
    for position, sample in enumerate(domain.samples):
        if isinstance(sample, bool):
            values += [("b", sample), ("s", str(sample).lower().encode())]
        elif isinstance(sample, int):
            values += [("i", sample), ("i", sample - 1), ("i", sample + 1)] if INT64[0] < sample < INT64[1] else []
            values += [("s", str(sample).encode())] + [("s", v.encode()) for v in digit_variants(str(sample))]
        else:
            near = mutations(sample)
            values += [("s", sample.encode())] + [
                ("s", m.encode()) for m in (near if position == 0 else rng.sample(near, min(2, len(near))))
            ]
            if spec.kind == "s" and sample.isdigit():
                values.append(("i", int(sample)))
    values += [("s", t.encode()) for t in getattr(domain, "extra", lambda files: ())(files)]
    unique, seen = [], set()
    for field, value in values:
        marker = (field, repr(value))
        if marker not in seen:
            seen.add(marker)
            unique.append((field, value))
    return unique


def option_cases(files, rng, workdir):
    """Every option key's cases: dicts for the worker plus "label" (the oracle's verdict) and "shown" (forms of
    the value an error message may show). ``workdir`` is where the workers run (relative paths start there)."""
    set_worker_dir(workdir)
    domains = {name: domain_of(spec, files) for name, spec in OPTIONS.items()}
    cases = []
    for name, spec in OPTIONS.items():
        extra = {k: encode_attr(f, v) for k, (f, v) in companions(spec, domains, files).items()}
        for field, value in option_values(spec, domains[name], files, rng):
            cases.append(
                {
                    "key": name,
                    "field": field,
                    "value": encode_attr(field, value)[1],
                    "companions": extra,
                    "label": judge_option(spec, domains[name], field, value),
                    "shown": shown_forms(field, value, spec.kind),
                }
            )
    return cases


def shown_forms(field, value, kind):
    """Texts of which one must appear in an error message about this value."""
    zero = {"b": False, "i": 0, "s": ""}[kind]
    if field == "s":
        try:
            text = value.decode("utf-8")
        except UnicodeDecodeError:
            return [shortened(value)[:100]]
        forms = [shortened(text)[:100]]
        if ASCII_INT.fullmatch(text.strip()):
            forms.append(repr(int(text)))
        return forms
    if field == "i":
        return [repr(value), repr(str(value))]
    if field == "b":
        return [repr(value), repr(str(value).lower()), repr(int(value))]
    if field == "none":
        return [repr(zero)]
    return [
        {"f": "f: ", "list_i": "list", "list_s": "list", "type": "type: ", "shape": "shape", "tensor": "tensor"}.get(
            field, field
        )
    ]


def classify_option(case, record):
    key = case["key"]
    names = [f"'{key}'"]
    outcome, reason = classify_exception(record, case["label"], names, case["shown"], key=key)
    if outcome == CLEAR and "Allowed: " not in record["message"]:
        return OTHER, f"the message has no 'Allowed:' part: {record['message'][:600]}"
    return outcome, reason


def describe_value(case):
    value = case["value"]
    if isinstance(value, dict) and "b64" in value:
        value = base64.b64decode(value["b64"])
        try:
            value = value.decode("utf-8")
        except UnicodeDecodeError:
            pass
    return f"{case['key']} .{case['field']}={shortened(value, 80)}"


def tally_options(cases, records, tally):
    for case, record in zip(cases, records):
        outcome, reason = classify_option(case, record)
        tally.add(outcome, describe_value(case), reason)
