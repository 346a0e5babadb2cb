"""What a --quick run's comparison rows may say (tests/cli/experiments_registry.sh).

    /usr/bin/python3 tests/cli/lib/quick_claims.py RUN_DIR/results.json

prints "N rows" and exits 0 when every row keeps the rules, else prints each broken rule (one
line per row) and exits 1:
  - no row says `ok` (nor DIFFERS): a --quick run cuts the settings for speed and judges no
    claim, so every row is `not judged` with the reason "--quick run" (its "outcome" in
    results.json still says how it came out);
  - no numeric row has an "ours" equal to its document value bit for bit, unless the row says
    ours is an exact quantity (a count, a size: Comparison::exact_quantity) or every value of
    ours is an integer (integer inputs through a matmul, a count: floats hold them exactly). A
    float computation does not land exactly on a printed fraction: such a row copied the
    document's number (or did arithmetic on it) instead of measuring.
"""

import json
import sys


def broken_rules(results):
    """One line per row that breaks a rule; empty when every row keeps them."""
    bad = []
    for table in results["comparisons"]:
        for e in table["entries"]:
            if e["status"] != "not judged" or not e.get("not_judged", "").startswith("--quick run"):
                bad.append(f'{e["name"]!r}: status {e["status"]!r} in a --quick run')
            if "tolerance" not in e or e["exact_quantity"]:
                continue  # a text row, or one whose ours is exact by nature
            doc, ours = e["document"], e["ours"]
            values = ours if isinstance(ours, list) else [ours]
            if all(isinstance(x, (int, float)) and float(x).is_integer() for x in values):
                continue  # integers: exact in float, a count or an integer computation
            # json reads back the exact doubles attnlab wrote (shortest round-trip form)
            if doc == ours or e["ours_is_document"]:
                bad.append(f'{e["name"]!r}: ours {ours!r} is the document value bit for bit')
    return bad


def main(argv):
    if len(argv) != 1:
        print("usage: quick_claims.py RUN_DIR/results.json", file=sys.stderr)
        return 2
    try:
        with open(argv[0]) as f:
            results = json.load(f)
    except (OSError, ValueError) as e:
        print(f"quick_claims: cannot read {argv[0]}: {e}", file=sys.stderr)
        return 2
    bad = broken_rules(results)
    for line in bad:
        print(line)
    rows = sum(len(t["entries"]) for t in results["comparisons"])
    if not bad:
        print(f"{rows} rows")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
