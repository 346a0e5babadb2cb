# attnlab's objects as plain Python, read from memory: the printers, xmethods and commands all
# go through these functions.
#
#   tensor_text(this_op["output"]) ...  see printers.py for where each is used
#
# The C++ side (autograd/tensor.h, var.h, tape.h) is mirrored here field by field:
#   Tensor { shared_ptr<Storage> storage_; Shape shape_; int64_t numel_; }
#   Storage { real* data_; int64_t size_; }
#   Var { shared_ptr<Node> node_; }
#   Node { Tensor value, grad; bool has_grad, requires_grad, produced_by_op; string name; ... }
#   Op { vtable; vector<Var> inputs; Var output; }   (each op adds its saved members)
#   Tape { vector<unique_ptr<Op>> records_; }
# Renaming one of those members means changing it here too (tests/cli/gdb_printers.sh fails).
import re

import gdb

from . import memory
from . import settings


# attn::kMaxRank (autograd/shape.h), and a bound no real extent or element count reaches (2^40
# floats is 4 TiB): past it the memory is not a Tensor yet, or not any more.
MAX_RANK = 4
MAX_ELEMENTS = 1 << 40
MAX_INPUTS = 1 << 10
MAX_RECORDS = 1 << 28


def shape_of(tensor):
    """A Tensor's shape, checked: rank 0..4, each extent 0..MAX_ELEMENTS (else Invalid)."""
    shape = memory.read_int64_vector(memory.deref(tensor)["shape_"], "shape rank", MAX_RANK)
    for n in shape:
        if not 0 <= n <= MAX_ELEMENTS:
            raise memory.Invalid("shape %s" % shape_str(shape))
    return shape


def checked_tensor(tensor):
    """(shape, data pointer, numel) of a Tensor, after checking that they agree: numel is the
    product of the extents, and the storage is readable and holds at least numel values at an
    aligned, non-null address. A Tensor without storage (moved from) gives (shape, None, 0)."""
    t = memory.deref(tensor)
    shape = shape_of(t)
    storage = memory.smart_ptr_get(t["storage_"])
    if int(storage) == 0:  # moved from: the shape is empty, numel_ kept its old value
        return shape, None, 0
    numel = int(t["numel_"])
    product = 1
    for n in shape:
        product *= n
    if numel != product:
        raise memory.Invalid("numel %d, shape %s" % (numel, shape_str(shape)))
    if int(storage) % 8:
        raise memory.Invalid("storage pointer %#x" % int(storage))
    data = storage.dereference()["data_"]  # gdb.MemoryError if the Storage is unreadable
    size = int(storage.dereference()["size_"])
    if not numel <= size <= MAX_ELEMENTS or int(data) == 0 or \
            int(data) % memory.pointee(data).sizeof:
        raise memory.Invalid("storage of %d values at %#x for %d elements"
                             % (size, int(data), numel))
    return shape, data, numel


def shape_str(shape):
    """Like attn::shape_str: "(2,3)", "()" for a scalar."""
    return "(" + ",".join(str(n) for n in shape) + ")"


def _fmt(x):
    return "%.4g" % x


def _nested(values, shape, limit):
    """numpy-like nesting of the first `limit` values: [[1, 2], [3, ...]]."""
    if not shape:
        return _fmt(values[0]) if values else "?"
    budget = [limit]

    def rows(offset, dims):
        stride = 1
        for d in dims[1:]:
            stride *= d
        parts = []
        for i in range(dims[0]):
            if budget[0] <= 0:
                parts.append("...")
                break
            if len(dims) == 1:
                parts.append(_fmt(values[offset + i]))
                budget[0] -= 1
            else:
                parts.append(rows(offset + i * stride, dims[1:]))
        return "[" + ", ".join(parts) + "]"

    return rows(0, shape)


def tensor_text(tensor, with_shape=True):
    """'(3,3) [[0.4011, 0.1978, 0.4011], [...], ...]': the shape and the first values."""
    shape, data, numel = checked_tensor(tensor)
    if data is None:
        return shape_str(shape) + " (no storage)"
    limit = settings.max_values()
    values = memory.read_numbers(data, min(numel, limit), memory.pointee(data))
    body = _nested(values, shape, limit)
    return (shape_str(shape) + " " + body) if with_shape else body


def var_node(var):
    """The Node a Var points at (None for a null Var)."""
    ptr = memory.smart_ptr_get(memory.deref(var)["node_"])
    return None if int(ptr) == 0 else ptr.dereference()


def node_fields(node):
    """(label, value) pairs of a Node, as shown under a Var: value, grad (has_grad = false when
    backward has not reached it: the grad member then holds a placeholder), requires_grad."""
    out = [("value", node["value"])]
    if memory.read_bool(node["has_grad"]):
        out.append(("grad", node["grad"]))
    else:
        out.append(("has_grad", False))
    out.append(("requires_grad", memory.read_bool(node["requires_grad"])))
    return out


def node_summary(node):
    """'(3,2)[X]': the shape, and the name when the Var has one (as attn::print_tape shows it)."""
    name = memory.std_string(node["name"])
    text = shape_str(shape_of(node["value"]))
    if name:
        text += "[" + name + "]"
    return text


def _is_op_type(t):
    t = memory.strip(t)
    if t.code != gdb.TYPE_CODE_STRUCT:
        return False
    if t.tag == "attn::Op":
        return True
    return any(f.is_base_class and _is_op_type(f.type) for f in t.fields())


def is_op_type(t):
    try:
        return _is_op_type(t)
    except gdb.error:
        return False


def most_derived(op):
    """The record as its own struct (SoftmaxOp, ...), found through its vtable in memory."""
    op = memory.deref(op)
    try:
        dyn = op.dynamic_type
        if dyn is not None and memory.strip(dyn) != memory.strip(op.type):
            return op.cast(dyn)
    except gdb.error:
        pass
    return op


def op_class_name(op):
    """'SoftmaxOp': the struct's name without namespaces (what `break X::backward` takes)."""
    tag = memory.strip(most_derived(op).type).tag or "Op"
    return re.sub(r"^.*::", "", re.sub(r"\(anonymous namespace\)::", "", tag))


def op_inputs(op):
    return memory.vector_items(memory.deref(op)["inputs"], "inputs", MAX_INPUTS)


def op_summary(op, width=0):
    """One tape line: 'SoftmaxOp (3,3)* -> (3,3)', marking inputs that need a gradient with *;
    `width` pads the struct name (to align a column of records)."""
    op = memory.deref(op)
    ins = []
    for v in op_inputs(op):
        node = var_node(v)
        if node is None:
            ins.append("null")
            continue
        ins.append(node_summary(node) + ("*" if memory.read_bool(node["requires_grad"]) else ""))
    out = var_node(op["output"])
    if out is None:
        raise memory.Invalid("null output")
    text = "%-*s %s -> %s" % (width, op_class_name(op), " ".join(ins), node_summary(out))
    if memory.read_bool(out["has_grad"]):
        text += "  (has grad)"
    return text


def op_own_fields(op):
    """The members the op's own struct adds (what forward saved for backward)."""
    derived = most_derived(op)
    t = memory.strip(derived.type)
    if t.tag == "attn::Op":
        return []
    return [(f.name, derived[f.name]) for f in t.fields() if not f.is_base_class and f.name
            and not f.name.startswith("_vptr")]


def tape_records(tape):
    records = memory.vector_items(memory.deref(tape)["records_"], "records", MAX_RECORDS)
    return [memory.smart_ptr_get(p).dereference() for p in records]


def tape_text(tape):
    """What attn::print_tape() prints (with class names), read from memory; a record that
    cannot be read shows as <invalid record: why> on its own line."""
    records = tape_records(tape)
    limit = settings.max_records()
    lines = ["tape: %d records (* = needs a gradient)" % len(records)]
    for i, op in enumerate(records[:limit]):
        try:
            line = op_summary(op, width=20)
        except memory.READ_ERRORS as e:
            line = memory.invalid_text("record", e)
        lines.append("  #%-4d %s" % (i, line))
    if len(records) > limit:
        lines.append("  ... %d more (set attnlab-records N)" % (len(records) - limit))
    return "\n".join(lines)
