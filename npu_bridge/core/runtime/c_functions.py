"""The C functions of npu_bridge's library, declared once: what Python calls through ctypes.

``native_library.py`` binds every one from this table when it loads the library; ``c_header.py`` renders
``ops/runtime/c_api.h`` from it at build time, which every ``.cc`` defining one of them includes, so the compiler
refuses a definition that differs; ``tests/runtime/test_c_api.py`` checks the header is current and that the library
exports exactly these functions. This file is plain data and imports nothing (the build loads it by path).

Every function returns normally: the C++ side catches what it raises (``ops/runtime/no_throw.h``). The ``*_json``
functions write a NUL-terminated JSON document into ``buf`` and return the length it needs (a larger ``len`` is
retried); 0 means the function failed inside the library.
"""

# (name, return type, ((C type, parameter), ...), what it does)
FUNCTIONS = (
    (
        "npu_bridge_system_initialize",
        "int",
        (("const char*", "init_token"), ("const char*", "source"), ("int", "global")),
        "Initializes the simulated NPU system with the init options Python keeps under init_token (runtime/system.py); "
        "source names the caller; global marks a process-wide initialization. Returns the SystemState status code.",
    ),
    (
        "npu_bridge_system_shutdown",
        "int",
        (("int", "force"),),
        "Shuts the system down (force: whatever holds it). Returns the SystemState status code.",
    ),
    (
        "npu_bridge_system_state_json",
        "size_t",
        (("char*", "buf"), ("size_t", "len")),
        "The system state as JSON.",
    ),
    (
        "npu_bridge_pass_stats_json",
        "size_t",
        (("char*", "buf"), ("size_t", "len")),
        "What the NpuOptimizer passes did, as JSON.",
    ),
    (
        "npu_bridge_op_classes_json",
        "size_t",
        (("char*", "buf"), ("size_t", "len")),
        "The op classes the passes use (computing ops, ...), as JSON.",
    ),
    (
        "npu_bridge_exception_dump_json",
        "size_t",
        (("const char*", "slot"), ("char*", "buf"), ("size_t", "len")),
        "What the exception-capture slot holds, as JSON.",
    ),
    ("npu_bridge_dump_flush", "void", (), "Waits until every dump record queued so far is written."),
    (
        "npu_bridge_dump_configure",
        "void",
        (("int64_t", "queue_limit_bytes"), ("int", "threads"), ("int", "file_mode"), ("int", "directory_mode")),
        "The dump writer's queue limit, thread count and the modes of new files and directories (Python validates "
        "them).",
    ),
    (
        "npu_bridge_dump_changes",
        "uint64_t",
        (),
        "A counter that moves whenever an overflow record is queued or written, or a write fails.",
    ),
    (
        "npu_bridge_dump_status_json",
        "size_t",
        (("char*", "buf"), ("size_t", "len")),
        "The dump writer's counters, as JSON.",
    ),
    (
        "npu_bridge_dump_overflow_events_json",
        "size_t",
        (("int64_t", "start"), ("char*", "buf"), ("size_t", "len")),
        "The overflow records written so far, from index start, as JSON.",
    ),
    (
        "npu_bridge_set_overflow_mode",
        "void",
        (("int", "mode"),),
        "Sets the process-wide overflow mode of the simulated device.",
    ),
    ("npu_bridge_overflow_mode", "int", (), "The process-wide overflow mode."),
    (
        "npu_bridge_register_job_server",
        "int",
        (("const char*", "protocol"),),
        "Registers TensorFlow's gRPC server, serving only its job (this process's user's sockets on this machine, "
        "the cluster's hosts from others; listening on 127.0.0.1 alone when every host is 127.0.0.1), for "
        "ServerDefs whose protocol is protocol (collectives/job_server.py). Returns 1 when that protocol is "
        "registered (now or before), 0 when the name is empty or another one was registered.",
    ),
    (
        "npu_bridge_set_vouching_key",
        "int",
        (("const char*", "key"), ("int", "length")),
        "Sets the job's 32-byte vouching key for the job servers started after it: a server of a job across "
        "machines then answers, on UDP at its port, whether a connection is its user's, and serves a connection "
        "from another machine only when a rank there vouches for it (ops/runtime/rank_vouching.h). Returns 1, or "
        "0 when the key is not 32 bytes.",
    ),
    (
        "npu_bridge_unique_request_ids",
        "int",
        (),
        "Gives TensorFlow's request ids (tensorflow::GetUniqueRequestId in libtensorflow_cc) a per-thread generator "
        "seeded with 256 bits instead of 32 (ops/runtime/request_ids.cc): with 32-bit seeds a long job on "
        "TensorFlow's gRPC runtime fails a step as a duplicate request. Returns 1 when libtensorflow_cc's calls now "
        "take it (now or before), 0 when that library or its import is not found, -1 when the slot cannot be "
        "written.",
    ),
)
