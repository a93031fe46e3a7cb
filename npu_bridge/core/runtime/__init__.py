"""What every other part stands on.

keras_selection  legacy Keras (tf_keras) for TF1 code, whichever of TensorFlow and npu_bridge is imported first
native_library  loading the C++ library and checking which TensorFlow it was built for
errors          every exception class npu_bridge raises
env_choice      environment variables that take one of a few words
bounded_files   reading the small files users name: regular files only, bounded size, never blocking
inert_text      text from files made inert for terminals, CSV and HTML (controls escaped)
version         the --version line of the command-line tools
log             the ``npu_bridge`` logger (ASCEND_GLOBAL_LOG_LEVEL, ASCEND_SLOG_PRINT_TO_STDOUT)
system          process-wide NPU system state
data_stack      a deep call (TensorFlow's import) run with room on CPython's frame stack
executed_op_types  the user's op types behind the op types TensorFlow executed (oneDNN kernels, fusions)
op_sites        where an op was created in the user's code (file:line from its traceback)
close_callbacks  clean-up steps npu_close runs; interrupt: Ctrl-C in a rank ends it with one line
c_functions     the C functions of the library (declared once); c_header renders ops/runtime/c_api.h
own_user_descriptors  file descriptors handed over a Unix socket to and from processes of this user only
job_secret      the secret of a job across machines, and the handshake that proves a connection knows it
job_values      upstream's process-wide value store (``util.global_dict_*``)
arg_checks      argument checks with upstream's messages
unsupported     upstream names that cannot work off the NPU
tf_adapter_module  upstream's SWIG module ``npu_bridge.tf_adapter``: its DT_* constants; its functions unsupported
graph_manager_scope  ``ScopedGraphManager`` (no effect here)
api_surface     the upstream import paths the facades serve; doc_blocks: generated blocks of the docs/ pages

Which modules are user code, and the imports they get (a route of ``user_imports`` for ``user_code``; the TF1
mode and the TF2 adapter add them):

user_code       the one rule for what user code is
keras_overrides  Keras subclasses using private methods of Keras 2.6 (``_moments``, ``_convolution_op``)
after_import    a function called on a module right after its first import
module_aliases  a package importable under a second name, imported only when that name is
child_python    the sitecustomize folder that starts every child Python in a mode (TF1 mode, TF2 adapter)
user_imports    the ``__import__`` wrapper and its routes
legacy_modules  Keras of the script's era for user code in both modes: the route, the modules and views it gives
legacy_paths    where each Keras 2.2-2.6 and moved TensorFlow-internal module lives now (the rename tables)
addons_keras    tensorflow_addons (which user code imports) on tf_keras: its ``keras.src`` imports, Python ops first
eager_profiler  ``tensorflow.python.eager.profiler``, written here
absl_enum_strings  ``DEFINE_enum`` with a string as ``enum_values``, as absl-py 0.x took it (both modes)
legacy_mixed_precision  ``tf.keras.mixed_precision.experimental`` of TensorFlow 1.15-2.6 (both modes)
py_compat       opt-in Python-level names Python 3.11, NumPy 2 and SciPy removed (both modes' ``--py-compat``), with
                scipy_misc (``scipy.misc.imread`` & co. on Pillow), scipy_integrate (``simps``, ``trapz``,
                ``cumtrapz``), scipy_paths (SciPy modules made private, under their old paths) and
                numpy_iterator_stack (``np.stack`` & co. of an iterator)

Writing files:

atomic_write    text files readers see whole (old or new, never cut); output files users name
safe_paths      files land only where the user put them; readers stay inside the tree they were given
"""
