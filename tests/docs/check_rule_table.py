#!/usr/bin/env python3
"""docs.rule_table: tests/conformance/README.md's table of rules keeps up with the rules
and the suite.

- every rule of docs/design.md ("## The rules", a numbered list) has a row "| N. ...";
- every conformance test the table names (`ruleNN_...`, `file.c:test`) is defined
  with TEST(name) in tests/conformance/ (a renamed or deleted test fails here);
- every rule test of the suite (TEST(ruleNN_...)) is named in the table, so that a new
  test says which rule it checks.

Usage: check_rule_table.py <source dir>
"""
import glob
import os
import re
import sys


def rules_of_design(path):
    text = open(path, encoding="utf-8").read()
    section = re.search(r"^## The rules\n(.*?)^## ", text, re.M | re.S)
    if not section:
        sys.exit(f"{path}: no '## The rules' section")
    return [int(n) for n in re.findall(r"^(\d+)\. ", section.group(1), re.M)]


def suite_tests(folder):
    tests = {}
    for source in sorted(glob.glob(os.path.join(folder, "*.c"))):
        for name in re.findall(r"^TEST\(([a-z0-9_]+)\)", open(source, encoding="utf-8").read(), re.M):
            tests[name] = os.path.basename(source)
    return tests


def main():
    top = sys.argv[1]
    design = os.path.join(top, "docs/design.md")
    folder = os.path.join(top, "tests", "conformance")
    table_path = os.path.join(folder, "README.md")
    table = open(table_path, encoding="utf-8").read()
    tests = suite_tests(folder)
    failures = []

    rows = {int(n) for n in re.findall(r"^\| (\d+)\. ", table, re.M)}
    for rule in rules_of_design(design):
        if rule not in rows:
            failures.append(f"{table_path}: rule {rule} of docs/design.md has no row '| {rule}. ...'")

    for line_number, line in enumerate(table.splitlines(), 1):
        for name in re.findall(r"\b(rule\d\d_[a-z0-9_]+)\b", line):
            if name in tests or os.path.exists(os.path.join(folder, name + ".c")):
                continue
            failures.append(f"{table_path}:{line_number}: '{name}' is no test of tests/conformance/*.c")

    for name, source in tests.items():
        if name.startswith("rule") and not re.search(r"\b" + name + r"\b", table):
            failures.append(f"{table_path}: {source}'s test {name} is in no row: say which rule it checks")

    for failure in failures:
        print(failure)
    if failures:
        return 1
    print(f"{len(rows)} rows, {sum(1 for n in tests if n.startswith('rule'))} rule tests named, all defined")
    return 0


if __name__ == "__main__":
    sys.exit(main())
