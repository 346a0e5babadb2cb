# Reading libstdc++ containers straight from memory (no calls into the program).
#
#   ptr = smart_ptr_get(var_value["node_"])     # shared_ptr<Node> -> Node*
#   ints = read_int64_vector(tensor["shape_"], "shape rank", 4)   # vector<int64_t> -> [2, 3]
#   text = std_string(node["name"])             # std::string -> "X"
#
# Everything here reads the inferior's memory and never runs its code, so it works the same on a
# live process, on a process gdb cannot call into, and on a core file. Memory can also hold no
# object yet (a local read before its constructor ran) or a freed one: every count and length is
# checked before it is used, and what cannot be the object raises Invalid (the printers show
# it as "<invalid Tensor: shape rank 93824994626212>", never a Python exception).
# It relies on libstdc++'s layout (GCC's standard library, the one Debian builds attnlab with):
#   std::vector<T>      _M_impl._M_start / _M_finish
#   std::shared_ptr<T>  the object pointer is the first word (_M_ptr)
#   std::unique_ptr<T>  with the default deleter, the object is just the pointer
#   std::string         _M_dataplus._M_p / _M_string_length
import struct

import gdb


class Invalid(Exception):
    """Memory that cannot hold the object its type says: not constructed yet, freed, corrupt."""


# What the printers catch: Invalid, unreadable memory (gdb.MemoryError is a gdb.error), and
# what Python raises on garbage numbers (a negative count, a huge length).
READ_ERRORS = (Invalid, gdb.error, OverflowError, ValueError, struct.error)


def invalid_text(kind, error):
    """'<invalid Tensor: shape rank 93824994626212>': how a printer shows an unreadable object."""
    return "<invalid %s: %s>" % (kind, str(error) or type(error).__name__)


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


def pointee(ptr):
    """The type a pointer value points at, typedefs resolved on both sides. libstdc++ declares
    a vector's _M_start as the typedef `pointer`, and gdb's target() of a typedef is the type
    it names (Var *), not what that points at: its sizeof would be a pointer's 8 bytes, not a
    Var's 16, and every vector of Vars would seem twice as long as it is."""
    return strip(strip(ptr.type).target())


def vector_range(v, what, limit):
    """(first element pointer, element count) of a std::vector, raising Invalid unless the count
    is in 0..limit and the three pointers are a vector's: start <= finish <= end of storage, a
    whole number of elements apart (`what` names the count: "shape rank", "inputs")."""
    v = deref(v)
    impl = v["_M_impl"]
    start = impl["_M_start"]
    first, finish, end = int(start), int(impl["_M_finish"]), int(impl["_M_end_of_storage"])
    size = pointee(start).sizeof
    count = (finish - first) // size
    if not 0 <= count <= limit:
        raise Invalid("%s %d" % (what, count))
    misaligned = (finish - first) % size or first % min(size, 8)
    if misaligned or end < finish or (first == 0) != (end == 0):
        raise Invalid("%s vector with start %#x, end %#x, capacity end %#x"
                      % (what.split()[0], first, finish, end))
    return start, count


def vector_items(v, what, limit):
    start, n = vector_range(v, what, limit)
    return [(start + i).dereference() for i in range(n)]


def read_numbers(ptr, count, elem_type):
    """`count` numbers of `elem_type` (float, double or a 64-bit integer) starting at ptr."""
    elem_type = strip(elem_type)
    size = elem_type.sizeof
    if elem_type.code == gdb.TYPE_CODE_FLT:
        fmt = {4: "f", 8: "d"}[size]
    elif elem_type.code == gdb.TYPE_CODE_INT:
        fmt = {4: "i", 8: "q"}[size]
    else:
        raise TypeError("read_numbers: %s is not a float or an integer" % elem_type)
    if count == 0:
        return []
    raw = gdb.selected_inferior().read_memory(int(ptr), count * size)
    return list(struct.unpack("=%d%s" % (count, fmt), bytes(raw)))


def read_int64_vector(v, what, limit):
    start, n = vector_range(v, what, limit)
    return read_numbers(start, n, pointee(start))


def read_bool(v):
    """A bool member, raising Invalid unless its byte is 0 or 1 (gdb would print 0x5a as true)."""
    byte = bytes(gdb.selected_inferior().read_memory(int(deref(v).address), 1))[0]
    if byte > 1:
        raise Invalid("bool holding %d" % byte)
    return byte == 1


def std_string(v, limit=1 << 16):
    """The text of a std::string, raising Invalid when its length is not in 0..limit."""
    v = deref(v)
    n = int(v["_M_string_length"])
    if not 0 <= n <= limit:
        raise Invalid("string length %d" % n)
    return v["_M_dataplus"]["_M_p"].string(length=n) if n else ""
