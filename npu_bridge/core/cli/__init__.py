"""``npu-bridge``: what is installed and how options are understood.

main    the command line: ``info`` (versions, the C++ library, the collective world), ``options`` (the table or one)
"""
