"""What the line-for-line conformance tools (tf2_call_conformance.py,
mirrored_conformance.py, keras_compile_conformance.py) report: a case's
first differing line, and the run's end (the listing written, its first
entries, "N passed, M failed" for .ci/run, the exit status)."""
import os
import sys


def first_difference(expected, got):
    """TensorFlow's and tfrun's first differing line, as the report shows
    it ("" where one side ran out), or None where they are equal."""
    for i, (x, y) in enumerate(zip(expected + [""] * len(got), got + [""] * len(expected))):
        if x != y:
            return f"  line {i + 1}\n  TensorFlow: {x}\n  tfrun:      {y}"
    return None


def finish(out_dir, summary, report, passed, failed):
    """Writes OUT_DIR/differences.txt, prints `summary` with the listing's
    path, its first 20 entries and the counts, and exits 1 if any failed."""
    listing = os.path.join(out_dir, "differences.txt")
    with open(listing, "w") as f:
        f.write("\n".join(report) + "\n")
    print(f"{summary} (listing: {listing})")
    print("\n".join(report[:20]))
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
