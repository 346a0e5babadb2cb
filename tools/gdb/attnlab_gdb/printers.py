# Pretty-printers for attn::Tensor, attn::Var, attn::Node, every op record and attn::Tape.
#
#   (gdb) p x                 $1 = (3,2) [[1, 0], [0, 1], [1, 1]]
#   (gdb) p X                 $2 = Var 'X' = {value = (3,2) [...], has_grad = false, ...}
#   (gdb) p *this             (inside SoftmaxOp::backward) the record: inputs, output, saved y
#   (gdb) p attn::tape()::t   the tape, one line per record
#
# They read memory only (model.py), so they also work on a core file. An object that cannot be
# read (a local before its constructor ran, a freed record) prints as <invalid Tensor: why>,
# never as a Python exception, and shows no children.
import functools

import gdb

from . import memory
from . import model


def guarded(kind):
    """Wraps to_string: what memory.READ_ERRORS interrupts becomes '<invalid KIND: why>'."""

    def wrap(method):
        @functools.wraps(method)
        def to_string(self):
            try:
                return method(self)
            except memory.READ_ERRORS as e:
                return memory.invalid_text(kind, e)

        return to_string

    return wrap


def checked_children(method):
    """Wraps children: an object that cannot be read has none (to_string says why)."""

    @functools.wraps(method)
    def children(self):
        try:
            return list(method(self))
        except memory.READ_ERRORS:
            return []

    return children


class TensorPrinter:
    def __init__(self, val):
        self.val = val

    @guarded("Tensor")
    def to_string(self):
        return model.tensor_text(self.val)


class VarPrinter:
    """A Var or a Node: its name if it has one, then value, grad, requires_grad."""

    def __init__(self, val, is_node):
        self.val = val
        self.is_node = is_node

    def _node(self):
        return self.val if self.is_node else model.var_node(self.val)

    def _kind(self):
        return "Node" if self.is_node else "Var"

    def to_string(self):
        try:
            node = self._node()
            if node is None:
                return "Var (null)"
            name = memory.std_string(node["name"])
            model.node_fields(node)  # reads the flags children() shows: Invalid here, not there
        except memory.READ_ERRORS as e:
            return memory.invalid_text(self._kind(), e)
        return self._kind() + (" '%s'" % name if name else "")

    @checked_children
    def children(self):
        node = self._node()
        if node is None:
            return []
        return model.node_fields(node)


class OpPrinter:
    """One tape record: the op's struct name, its inputs and output, then what it saved."""

    def __init__(self, val):
        self.val = val

    @guarded("record")
    def to_string(self):
        return model.op_summary(self.val)

    @checked_children
    def children(self):
        op = memory.deref(self.val)
        model.op_summary(op)  # the same checks as to_string: an unreadable record has no children
        out = [("inputs[%d]" % i, v) for i, v in enumerate(model.op_inputs(op))]
        out.append(("output", op["output"]))
        out.extend(model.op_own_fields(op))
        return out


class TapePrinter:
    def __init__(self, val):
        self.val = val

    @guarded("Tape")
    def to_string(self):
        return model.tape_text(self.val)


def attnlab_lookup(val):
    t = memory.strip(val.type)
    if t.code != gdb.TYPE_CODE_STRUCT or t.tag is None:
        return None
    tag = t.tag
    if tag == "attn::Tensor":
        return TensorPrinter(val)
    if tag == "attn::Var":
        return VarPrinter(val, is_node=False)
    if tag == "attn::Node":
        return VarPrinter(val, is_node=True)
    if tag == "attn::Tape":
        return TapePrinter(val)
    if tag.startswith("attn::") and model.is_op_type(t):
        return OpPrinter(val)
    return None


def register(objfile=None):
    """Adds the printers (once, even when this file is sourced again)."""
    target = objfile if objfile is not None else gdb
    target.pretty_printers[:] = [
        p for p in target.pretty_printers if getattr(p, "__name__", "") != "attnlab_lookup"
    ]
    target.pretty_printers.append(attnlab_lookup)
