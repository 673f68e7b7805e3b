"""runtime/nd/__init__.pyi, the generated stub of runtime.nd, is in step with the registry
(regenerate it with ``python -m runtime.nd._stub``)."""

import ast

from runtime import nd
from runtime._imperative import OpFunction
from runtime.nd import _stub


def test_stub_is_in_step_with_the_registry():
    assert _stub.PATH.read_text() == _stub.render(), (
        "runtime/nd/__init__.pyi is out of date: run `python -m runtime.nd._stub`")


def test_stub_declares_every_public_name():
    tree = ast.parse(_stub.PATH.read_text())
    declared = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            declared.add(node.name)
        elif isinstance(node, ast.ImportFrom):
            declared.update(a.asname or a.name for a in node.names)
        elif isinstance(node, ast.AnnAssign):
            declared.add(node.target.id)
    public = {k for k in vars(nd) if not k.startswith("_")} - _stub._SKIP
    assert public <= declared
    ops = {k for k, v in vars(nd).items() if isinstance(v, OpFunction) and k[0] != "_"}
    assert {"exp", "FullyConnected", "sum", "dot"} <= ops <= declared


def test_stub_signatures_follow_the_nd_functions():
    tree = ast.parse(_stub.PATH.read_text())
    defs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    fc = [a.arg for a in defs["FullyConnected"].args.args]
    assert fc[:4] == ["data", "weight", "bias", "num_hidden"]
    assert defs["concat"].args.vararg.arg == "data"
