"""The session plan handed to the C++ passes: the pass contract, declared once.

contract_table   the keys, record fields and node attributes (plain data; the build reads it by path)
pass_contract    ``PassPlan`` and the one writer / reader of the keys, built from the table
contract_header  renders optimizers/pass_contract_keys.h from the table (run by setup.py)

Below every domain that stamps node attributes or fills the plan (compute, precision, collectives, training, dump)
and below the session orchestration that writes it.
"""
