#!/usr/bin/python3
"""Keeps docs/coverage.md true: its tables against `attnlab list` and the experiments' sources.

  tests/cli/lib/coverage_map.py check LISTING [DOC]   LISTING: `attnlab list`'s output in a file;
                                                      DOC: another copy (default docs/coverage.md)
  tests/cli/lib/coverage_map.py counts                rewrites the counts of docs/coverage.md

`check` prints one "docs/coverage.md:LINE: problem" per problem and exits 1 if there is any (2
for bad usage). What it checks, and the rule that decides whether an experiment writes a named
comparison row, are in the header of tests/cli/coverage.sh, which runs it.
"""
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
DOC = os.path.join(ROOT, "docs", "coverage.md")
COLUMNS = ["section", "item", "status", "experiment", "comparison row", "note"]
STATUSES = ["covered", "partly", "missing", "out of scope"]
DOCUMENT_HEADING = re.compile(r"^## (\d{3}) ")
COUNTS_BEGIN, COUNTS_END = "<!-- counts:begin -->", "<!-- counts:end -->"
NONE = "—"

# ---- coverage.md ---------------------------------------------------------------------------


def split_cells(line):
    """The cells of a Markdown table row, "\\|" kept as a literal "|"."""
    body = line.strip()[1:-1] if line.strip().endswith("|") else line.strip()[1:]
    cells = re.split(r"(?<!\\)\|", body)
    return [c.strip().replace("\\|", "|") for c in cells]


def unquote(cell):
    """A cell's text without the backticks of a cell-wide code span; "—" (or empty) is None."""
    cell = cell.strip()
    if cell in ("", NONE):
        return None
    if len(cell) >= 2 and cell[0] == "`" and cell[-1] == "`" and cell.count("`") == 2:
        return cell[1:-1]
    return cell


def read_tables(lines):
    """({document: [row dicts]}, [planned names], problems): the item tables by document and
    the Planned table's first column."""
    tables, planned, problems = {}, [], []
    document, header, in_planned = None, None, False
    for number, line in enumerate(lines, 1):
        m = DOCUMENT_HEADING.match(line)
        if line.startswith("#"):
            document = m.group(1) if m else None
            in_planned = line.strip() == "## Planned experiments"
            header = None
            continue
        if not line.startswith("|"):
            header = None
            continue
        cells = split_cells(line)
        if header is None:
            header = cells
            if document and header != COLUMNS:
                problems.append((number, "table columns %s, expected %s" % (header, COLUMNS)))
            continue
        if set(line.replace("|", "").strip()) <= set("-: "):
            continue  # the delimiter row
        if in_planned:
            planned.append(unquote(cells[0]))
        elif document:
            row = dict(zip(COLUMNS, cells))
            row["line"], row["cells"] = number, len(cells)
            tables.setdefault(document, []).append(row)
    return tables, planned, problems


def counts_section(tables):
    """The generated counts table (per document, then all), between its marker comments."""
    out = [COUNTS_BEGIN, "", "| document | " + " | ".join(STATUSES) + " | items |",
           "|---|" + "---:|" * (len(STATUSES) + 1)]
    total = [0] * (len(STATUSES) + 1)
    for document in sorted(tables):
        n = [sum(r["status"] == s for r in tables[document]) for s in STATUSES]
        n.append(len(tables[document]))
        total = [a + b for a, b in zip(total, n)]
        out.append("| %s | %s |" % (document, " | ".join(str(x) for x in n)))
    out.append("| all | %s |" % " | ".join(str(x) for x in total))
    return out + ["", COUNTS_END]


def replace_counts(lines, tables):
    """The lines of coverage.md with the counts section regenerated (None: no markers)."""
    if COUNTS_BEGIN not in lines or COUNTS_END not in lines:
        return None
    begin, end = lines.index(COUNTS_BEGIN), lines.index(COUNTS_END)
    return lines[:begin] + counts_section(tables) + lines[end + 1:]


# ---- the experiments' sources ---------------------------------------------------------------

SHARED = ("experiments/kit/", "experiments/report/", "experiments/cli/", "experiments/plugin/")
INCLUDE = re.compile(r'^#include "(experiments/[^"]+\.h)"', re.M)
LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
LITERALS = re.compile(r'(?:"(?:[^"\\\n]|\\.)*"\s*)+')
ROW_CALL = re.compile(r"\b(?:cmp|prose|diag)\s*\.\s*(add|add_exact|add_rows)\s*\(")


def read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


def code(path):
    """The file's C++ with its comments blanked (string and character literals kept; a digit
    separator, 1'000, is not a character literal)."""
    src, out, i = read(path), [], 0
    token = re.compile(r'"(?:[^"\\\n]|\\.)*"|(?<!\w)\'(?:[^\'\\\n]|\\.)*\'|//[^\n]*|/\*.*?\*/',
                       re.S)
    for m in token.finditer(src):
        out.append(src[i:m.start()])
        text = m.group(0)
        out.append(re.sub(r"[^\n]", " ", text) if text[0] == "/" else text)
        i = m.end()
    return "".join(out + [src[i:]])


def experiment_files():
    """{experiment name: its .cpp file} from every `e.name = "...";` under experiments/."""
    out = {}
    for folder, _, files in os.walk(os.path.join(ROOT, "experiments")):
        for name in sorted(files):
            if name.endswith(".cpp"):
                path = os.path.relpath(os.path.join(folder, name), ROOT)
                for m in re.finditer(r'\be\.name\s*=\s*"([a-z0-9-]+)"\s*;', code(path)):
                    out[m.group(1)] = path
    return out


def source_set(start):
    """The experiment's own sources: `start` and the experiment-specific files it includes."""
    seen, todo = [], [start]
    while todo:
        path = todo.pop()
        if path in seen or not os.path.exists(os.path.join(ROOT, path)):
            continue
        seen.append(path)
        for header in INCLUDE.findall(read(path)):
            if header.startswith(SHARED) or header.count("/") == 1:
                continue
            # The header's .cpp, and its parts when the size limit split it (stem_part.cpp).
            stem = os.path.join(ROOT, header[:-2])
            parts = [os.path.relpath(p, ROOT) for p in sorted(glob.glob(stem + "_*.cpp"))]
            todo += [header, header[:-2] + ".cpp"] + parts
    return seen


def unescape(text):
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), text)


def scan(text, start=0):
    """(index, character, bracket depth before it) of the text outside string literals."""
    depth, j = 0, start
    while j < len(text):
        if text[j] == '"':
            j = LITERAL.match(text, j).end()
            continue
        yield j, text[j], depth
        depth += (text[j] in "([{") - (text[j] in ")]}")
        j += 1


def first_argument(src, i):
    """The text of the call's first argument, from index i (just after the '(')."""
    end = next((j for j, c, depth in scan(src, i) if depth == 0 and c in ",)]}"), len(src))
    return src[i:end].strip()


def top_level(expr, token):
    """Indexes of `token` in expr outside literals and brackets (':' never as part of '::')."""
    return [j for j, _, depth in scan(expr) if depth == 0 and expr.startswith(token, j) and
            (token != ":" or (expr[j - 1:j] != ":" and expr[j + 1:j + 2] != ":"))]


def format_pieces(fmt):
    """A fmt format string as pieces: ("lit", text) and ("any", None) per {...}."""
    pieces = []
    for part in re.split(r"(\{[^{}]*\})", fmt.replace("{{", "\0").replace("}}", "\1")):
        if part.startswith("{") and part.endswith("}"):
            pieces.append(("any", None))
        elif part:
            pieces.append(("lit", part.replace("\0", "{").replace("\1", "}")))
    return pieces


def templates(expr):
    """The templates (lists of pieces) a row-name expression can print."""
    expr = expr.strip()
    question = top_level(expr, "?")
    if question:
        rest = expr[question[0] + 1:]
        colon = top_level(rest, ":")[0]
        return templates(rest[:colon]) + templates(rest[colon + 1:])
    pieces = []
    for start, end in zip([0] + [p + 1 for p in top_level(expr, "+")],
                          top_level(expr, "+") + [len(expr)]):
        pieces += operand_pieces(expr[start:end].strip())
    return [pieces]


def operand_pieces(operand):
    """One operand of a '+' chain as pieces."""
    if re.fullmatch(r'(?:"(?:[^"\\\n]|\\.)*"\s*)+', operand):
        return [("lit", "".join(unescape(s) for s in LITERAL.findall(operand)))]
    m = re.match(r'fmt::format\(\s*((?:"(?:[^"\\\n]|\\.)*"\s*)+)', operand)
    if m:
        return format_pieces("".join(unescape(s) for s in LITERAL.findall(m.group(1))))
    return [("source", None)]


def row_templates(paths):
    """(templates, literal patterns) of the experiment's sources."""
    out, literals = [], []
    for path in paths:
        src = code(path)
        for m in ROW_CALL.finditer(src):
            for t in templates(first_argument(src, m.end())):
                out.append(t + [("lit", "["), ("digits", None), ("lit", ",:]")]
                           if m.group(1) == "add_rows" else t)
        for run in LITERALS.findall(src):  # adjacent literals are one string
            pieces = format_pieces("".join(unescape(t) for t in LITERAL.findall(run)))
            if sum(c.isalpha() for kind, t in pieces if kind == "lit" for c in t) >= 3:
                literals.append(re.compile("".join(
                    re.escape(t) if kind == "lit" else ".*" for kind, t in pieces)))
    return out, literals


def matches(name, pieces, literals):
    """Whether the whole of `name` is printed by the template `pieces`."""
    if not pieces:
        return name == ""
    kind, text = pieces[0]
    if kind == "lit":
        return name.startswith(text) and matches(name[len(text):], pieces[1:], literals)
    for end in range(0 if kind == "any" else 1, len(name) + 1):
        part = name[:end]
        if kind == "digits" and not part.isdigit():
            break
        if kind == "source" and not (re.fullmatch(r"-?[\d.]+", part) or
                                     any(p.fullmatch(part) for p in literals)):
            continue
        if matches(name[end:], pieces[1:], literals):
            return True
    return False


# ---- the checks -----------------------------------------------------------------------------


def read_listing(path):
    """{name: source} of the experiments `attnlab list` printed into the file `path`."""
    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^  ([a-z0-9]+(?:-[a-z0-9]+)*)  +(.+?)  +\S", line)
            if m and m.group(1) != "experiment":
                out[m.group(1)] = m.group(2).strip()
    return out


class RowChecker:
    """Whether a row name is one the experiment writes (templates built once per experiment)."""

    def __init__(self):
        self.files = experiment_files()
        self.cache = {}

    def writes(self, experiment, name):
        if experiment not in self.cache:
            path = self.files.get(experiment)
            self.cache[experiment] = row_templates(source_set(path)) if path else ([], [])
        found, literals = self.cache[experiment]
        return any(matches(name, t, literals) for t in found)


def check_row(row, listing, planned, rows):
    """The problems of one item row (strings)."""
    status, experiment = row["status"], unquote(row["experiment"].replace("`", ""))
    name, note = unquote(row["comparison row"]), unquote(row["note"])
    out = []
    if status not in STATUSES:
        return ["status %r is not one of %s" % (status, ", ".join(STATUSES))]
    if not unquote(row["section"]) or not unquote(row["item"]):
        out.append("no section or no item")
    if status in ("covered", "partly"):
        if experiment not in listing:
            out.append("experiment %r is not in `attnlab list`" % experiment)
        else:
            for row_name in [name] + note_rows(note):
                if row_name and not rows.writes(experiment, row_name):
                    out.append("%s writes no comparison row %r (rule: tests/cli/coverage.sh)"
                               % (experiment, row_name))
        if status == "covered" and not name:
            out.append("covered, but no comparison row named")
        if status == "partly" and not note:
            out.append("partly, but no note saying what is not compared")
    else:
        if name:
            out.append("%s, but a comparison row is named" % status)
        if not note:
            out.append("%s, but no note giving the plan or the reason" % status)
    if status == "missing" and experiment:
        out += check_planned(experiment, listing, planned)
    if status == "out of scope" and experiment:
        out.append("out of scope, but an experiment is named")
    return out


def note_rows(note):
    """The row names a note quotes in backticks (not a verdict word, not a --flag)."""
    return [t for t in re.findall(r"`([^`]+)`", note or "")
            if t not in ("ok", "DIFFERS", "not judged") and not t.startswith("--")]


def check_planned(cell, listing, planned):
    m = re.fullmatch(r"([a-z0-9-]+) \(planned\)", cell)
    if not m:
        return ["missing: the experiment cell is %r, expected '—' or 'NAME (planned)'" % cell]
    name = m.group(1)
    if name in planned and name in listing:
        return ["%s is in `attnlab list` now: map its items (covered or partly) and take it "
                "out of the Planned table" % name]
    if name not in planned and name not in listing:
        return ["%s is neither in the Planned table nor in `attnlab list`" % name]
    return []


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return f.read().split("\n")


def check(listing_path, doc=DOC):
    lines = read_lines(doc)
    tables, planned, problems = read_tables(lines)
    listing = read_listing(listing_path)
    if len(listing) < 2:
        problems.append((0, "the listing %s names %d experiments" % (listing_path, len(listing))))
    for document in ("000", "001", "002", "003", "004"):
        if not tables.get(document):
            problems.append((0, "no item table under a '## %s ...' heading" % document))
    rows, mapped = RowChecker(), set()  # mapped: (experiment, document) of covered/partly
    for document in sorted(tables):
        first_line = {}  # (section, item) -> the line that maps it: an item is mapped once
        for row in tables[document]:
            if row["cells"] != len(COLUMNS):
                problems.append((row["line"], "a row of %d cells" % row["cells"]))
                continue
            key = (row["section"], row["item"])
            if key in first_line:
                problems.append((row["line"], "%s's item %r is mapped twice (also line %d)"
                                 % (document, row["item"], first_line[key])))
            first_line.setdefault(key, row["line"])
            problems += [(row["line"], p) for p in check_row(row, listing, planned, rows)]
            if row["status"] in ("covered", "partly"):
                mapped.add((unquote(row["experiment"].replace("`", "")), document))
    for name, source in sorted(listing.items()):
        documents = sorted(set(re.findall(r"\b(00[0-4])\b", source)))
        # "(none)" (demo) and a page of docs/ (bag-of-tokens) are no course document's items.
        if not documents and source != "(none)" and not source.startswith("docs/"):
            problems.append((0, "%s: its source %r names no document 000-004" % (name, source)))
        for document in documents:
            if (name, document) not in mapped:
                problems.append((0, "%s (%s) is in `attnlab list` but maps no item of %s"
                                 % (name, source, document)))
    if replace_counts(lines, tables) is None:
        problems.append((0, "no counts section (%s ... %s)" % (COUNTS_BEGIN, COUNTS_END)))
    elif replace_counts(lines, tables) != lines:
        problems.append((0, "the counts section is out of date: run "
                            "tests/cli/lib/coverage_map.py counts"))
    for number, problem in problems:
        where = os.path.relpath(doc, ROOT) if doc.startswith(ROOT + os.sep) else doc
        print("%s:%d: %s" % (where, number, problem))
    total = sum(len(t) for t in tables.values())
    print("coverage_map: %d items, %d problems" % (total, len(problems)))
    return 1 if problems else 0


def write_counts():
    lines = read_lines(DOC)
    tables, _, problems = read_tables(lines)
    new = replace_counts(lines, tables)
    if new is not None and not problems:
        with open(DOC, "w", encoding="utf-8") as f:
            f.write("\n".join(new))
    return 0 if new is not None and not problems else 1


def main(argv):
    if argv[:1] == ["check"] and len(argv) in (2, 3):
        return check(*argv[1:])
    if argv == ["counts"]:
        return write_counts()
    print("usage: coverage_map.py check LISTING [DOC] | coverage_map.py counts", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
