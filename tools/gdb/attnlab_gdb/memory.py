# Reading libstdc++ containers straight from memory (no calls into the program).
#
#   ptr = smart_ptr_get(var_value["node_"])     # shared_ptr<Node> -> Node*
#   ints = read_int64_vector(tensor["shape_"])  # std::vector<int64_t> -> [2, 3]
#   text = std_string(node["name"])             # std::string -> "X"
#
# Everything here reads the inferior's memory and never runs its code, so it works the same on a
# live process, on a process gdb cannot call into, and on a core file. It relies on libstdc++'s
# layout (GCC's standard library, the one Debian builds attnlab with):
#   std::vector<T>      _M_impl._M_start / _M_finish
#   std::shared_ptr<T>  the object pointer is the first word (_M_ptr)
#   std::unique_ptr<T>  with the default deleter, the object is just the pointer
#   std::string         _M_dataplus._M_p / _M_string_length
import struct

import gdb


def strip(t):
    """The type behind typedefs, references and cv-qualifiers."""
    t = t.strip_typedefs()
    while t.code in (gdb.TYPE_CODE_REF, gdb.TYPE_CODE_RVALUE_REF):
        t = t.target().strip_typedefs()
    return t.unqualified()


def deref(v):
    """A value with references followed (a `const Tensor&` becomes the Tensor)."""
    if v.type.strip_typedefs().code in (gdb.TYPE_CODE_REF, gdb.TYPE_CODE_RVALUE_REF):
        return v.referenced_value()
    return v


def template_arg(v, i=0):
    return strip(v.type).template_argument(i)


def smart_ptr_get(v):
    """The raw pointer held by a std::shared_ptr<T> or std::unique_ptr<T> (default deleter).

    Both keep the object pointer in their first word, so the smart pointer's own address,
    reinterpreted as T**, gives it whatever the library's internal member names are."""
    v = deref(v)
    pointee = template_arg(v)
    return v.address.cast(pointee.pointer().pointer()).dereference()


def vector_range(v):
    """(first element pointer, element count) of a std::vector."""
    v = deref(v)
    impl = v["_M_impl"]
    start, finish = impl["_M_start"], impl["_M_finish"]
    return start, int(finish - start)


def vector_items(v):
    start, n = vector_range(v)
    return [(start + i).dereference() for i in range(n)]


def read_numbers(ptr, count, elem_type):
    """`count` numbers of `elem_type` (float, double or a 64-bit integer) starting at ptr."""
    elem_type = strip(elem_type)
    size = elem_type.sizeof
    if elem_type.code == gdb.TYPE_CODE_FLT:
        fmt = {4: "f", 8: "d"}[size]
    else:
        fmt = {4: "i", 8: "q"}[size]
    if count == 0:
        return []
    raw = gdb.selected_inferior().read_memory(int(ptr), count * size)
    return list(struct.unpack("=%d%s" % (count, fmt), bytes(raw)))


def read_int64_vector(v):
    start, n = vector_range(v)
    return read_numbers(start, n, start.type.target())


def std_string(v):
    v = deref(v)
    n = int(v["_M_string_length"])
    return v["_M_dataplus"]["_M_p"].string(length=n) if n else ""
