# Xmethods: the handful of member functions a student types in gdb, answered by reading memory
# instead of calling into the program.
#
#   (gdb) p dy()              inside any <Name>Op::backward: the output's gradient
#   (gdb) p dy().str(4)       as text (the same as the C++ Tensor::str, first values only)
#   (gdb) p *x.data()@6       raw floats
#   (gdb) p X.grad()          a Var's gradient (an error if backward has not reached it)
#
# Without them gdb would run the real functions inside the program ("inferior calls"), which
# some virtual machines refuse ("Couldn't write extended state status") and a core file cannot
# do at all. An xmethod wins over the compiled function of the same name, so the commands above
# behave the same everywhere.
import gdb
import gdb.xmethod

from . import memory
from . import model


def _tensor_type():
    return gdb.lookup_type("attn::Tensor")


class _Worker(gdb.xmethod.XMethodWorker):
    """One method: `impl(obj, *args)` computes the result from the object's memory."""

    def __init__(self, impl, arg_types=None):
        self.impl = impl
        self.arg_types = arg_types

    def get_arg_types(self):
        return self.arg_types

    def get_result_type(self, obj, *args):
        return None

    def __call__(self, obj, *args):
        try:
            return self.impl(memory.deref(obj), *args)
        except memory.READ_ERRORS as e:
            # An object that cannot be read (not constructed yet, freed) answers as its printer
            # does, "<invalid Tensor: why>": gdb shows an exception from here as a Python one.
            t = memory.strip(obj.type)
            t = memory.strip(t.target()) if t.code == gdb.TYPE_CODE_PTR else t
            kind = (t.tag or "object").replace("attn::", "")
            return gdb.Value(memory.invalid_text(kind, e))


def _node_or_error(var):
    node = model.var_node(var)
    if node is None:
        raise gdb.GdbError("this Var holds no Node")
    return node


def _grad(var):
    node = _node_or_error(var)
    if not memory.read_bool(node["has_grad"]):
        raise gdb.GdbError("no gradient yet: backward has not reached this Var")
    return node["grad"]


def _dy(op):
    # Op::dy() is output.node().grad: the gradient of the record's output.
    return _node_or_error(op["output"])["grad"]


def _str(tensor, precision=None):
    return gdb.Value(model.tensor_text(tensor, with_shape=False))


def _data(tensor):
    data = model.checked_tensor(tensor)[1]
    if data is None:
        raise gdb.GdbError("this Tensor has no storage")
    return data


_TENSOR = {
    "data": [_Worker(_data)],
    "str": [_Worker(_str), None],  # None: filled with the int overload in _Matcher.__init__
    "numel": [_Worker(lambda t: t["numel_"])],
    "shape": [_Worker(lambda t: t["shape_"])],
}
_VAR = {
    "value": [_Worker(lambda v: _node_or_error(v)["value"])],
    "grad": [_Worker(_grad)],
    "node": [_Worker(lambda v: _node_or_error(v))],
    "requires_grad": [_Worker(lambda v: _node_or_error(v)["requires_grad"])],
    "has_grad": [_Worker(lambda v: _node_or_error(v)["has_grad"])],
    "shape": [_Worker(lambda v: _node_or_error(v)["value"]["shape_"])],
}
_OP = {"dy": [_Worker(_dy)]}


class _Matcher(gdb.xmethod.XMethodMatcher):
    def __init__(self):
        super().__init__("attnlab")
        _TENSOR["str"][1] = _Worker(_str, [gdb.lookup_type("int")])
        self.methods = [gdb.xmethod.XMethod(n) for n in list(_TENSOR) + list(_VAR) + list(_OP)]

    def match(self, class_type, method_name):
        t = memory.strip(class_type)
        if t.code != gdb.TYPE_CODE_STRUCT:
            return None
        table = {"attn::Tensor": _TENSOR, "attn::Var": _VAR}.get(t.tag)
        if table is None and t.tag and t.tag.startswith("attn::") and model.is_op_type(t):
            table = _OP
        if table is None or method_name not in table:
            return None
        enabled = {m.name for m in self.methods if m.enabled}
        return table[method_name] if method_name in enabled else None


def register(objfile=None):
    gdb.xmethod.register_xmethod_matcher(objfile, _Matcher(), replace=True)
