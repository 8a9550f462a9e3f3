#!/usr/bin/env python3
"""Counts one Bazel test run's cases from GoogleTest's XML: prints
"PASSED FAILED SKIPPED". Usage: count_results.py TESTLOGS LABEL...

.ci/run deletes TESTLOGS before each suite, so every test.xml here is from
this run. A test target without one never ran (its build broke, or it
crashed before writing it) and counts as one failed case.
"""
import glob
import os
import sys
import xml.etree.ElementTree as ET


def main():
    logs, labels = sys.argv[1], sys.argv[2:]
    passed = failed = skipped = 0
    for label in labels:
        package, name = label.lstrip("/").split(":")
        folder = os.path.join(logs, package, name)
        # A sharded test writes one test.xml per shard (shard_K_of_N/).
        paths = sorted(glob.glob(os.path.join(folder, "shard_*_of_*", "test.xml"))) or \
            glob.glob(os.path.join(folder, "test.xml"))
        if not paths:
            print(f"count_results: {label} left no test.xml", file=sys.stderr)
            failed += 1
            continue
        for path in paths:
            try:
                root = ET.parse(path).getroot()
            except ET.ParseError as e:
                print(f"count_results: {path}: {e}", file=sys.stderr)
                failed += 1
                continue
            cases = list(root.iter("testcase"))
            if not cases:
                # Bazel writes a stand-in test.xml for a binary that died
                # before GoogleTest wrote its own: one case, the target.
                failed += 1
                continue
            for case in cases:
                if case.find("failure") is not None or case.find("error") is not None:
                    failed += 1
                elif case.get("status") == "notrun" or case.get("result") == "skipped" or \
                        case.find("skipped") is not None:
                    skipped += 1
                else:
                    passed += 1
    print(passed, failed, skipped)


if __name__ == "__main__":
    main()
