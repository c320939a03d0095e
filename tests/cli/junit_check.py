#!/usr/bin/env python3
"""junit_check.py — test-only oracle for `--junit FILE` (tests/cli/test_junit.sh).

    python3 tests/cli/junit_check.py FILE

Parses FILE with Python's own XML parser (an implementation independent of the
writer in src/report/junit.c) and checks it against the rules of the JUnit XSD that
Jenkins, GitLab and the GitHub test-report actions read (jenkins-junit.xsd):

  - the root is <testsuites>; its children are <testsuite>; a testsuite holds
    <properties>, <testcase>, <system-out>, <system-err> only; a testcase holds at
    most one of <failure>/<error>/<skipped> (plus system-out/system-err); failure,
    error and skipped hold text only;
  - only the schema's attributes appear on each element, and the required ones are
    there (testsuite name and tests; testcase name; and what gdnbench promises beyond
    the schema: counts and time on both suite levels, classname and time on every
    testcase, a message on every failure/error/skipped, type on failure/error);
  - tests/failures/errors/skipped are non-negative integers, time a non-negative
    decimal, timestamp ISO 8601 without a zone;
  - the counts add up: each testsuite's counts are those of its testcases, the
    document's are the sums of its testsuites', and each suite's time is the sum of
    its cases' times (to the writer's rounding).

Prints "tests=N failures=N errors=N skipped=N" and then one line per testcase,
"OUTCOME<TAB>classname<TAB>name<TAB>message" (OUTCOME pass/failure/error/skipped;
the name and message unescaped), and for a failure or error with text, its lines
prefixed "  | ".  A breach of a rule: one line on stderr per breach, exit 1.  Python
is used here only as a test oracle; gdnbench never needs it.
"""
import re
import sys
import xml.etree.ElementTree as ET

ATTRS = {
    "testsuites": {"name", "time", "tests", "failures", "disabled", "errors", "skipped"},
    "testsuite": {"name", "tests", "failures", "errors", "time", "disabled", "skipped", "timestamp",
                  "hostname", "id", "package", "file", "log", "url", "version", "group"},
    "testcase": {"name", "assertions", "time", "classname", "status", "class", "file", "line", "log",
                 "group", "url"},
    "failure": {"message", "type"},
    "error": {"message", "type"},
    "skipped": {"message"},
    "properties": set(),
    "property": {"name", "value"},
    "system-out": set(),
    "system-err": set(),
}
REQUIRED = {
    "testsuites": {"name", "tests", "failures", "errors", "skipped", "time"},
    "testsuite": {"name", "tests", "failures", "errors", "skipped", "time", "timestamp"},
    "testcase": {"name", "classname", "time"},
    "failure": {"message", "type"},
    "error": {"message", "type"},
    "skipped": {"message"},
    "property": {"name", "value"},
}
CHILDREN = {
    "testsuites": {"testsuite"},
    "testsuite": {"properties", "testcase", "system-out", "system-err"},
    "testcase": {"failure", "error", "skipped", "system-out", "system-err"},
    "properties": {"property"},
}
COUNTS = ("tests", "failures", "errors", "skipped")

problems = []


def bad(what):
    problems.append(what)


def check_attrs(el, where):
    allowed = ATTRS.get(el.tag)
    if allowed is None:
        bad(f"{where}: element <{el.tag}> is not in the JUnit schema")
        return
    for a in el.attrib:
        if a not in allowed:
            bad(f"{where}: attribute {a} is not allowed on <{el.tag}>")
    for a in REQUIRED.get(el.tag, ()):
        if a not in el.attrib:
            bad(f"{where}: <{el.tag}> lacks the required attribute {a}")
    for a in COUNTS:
        if a in el.attrib and not re.fullmatch(r"[0-9]+", el.attrib[a]):
            bad(f"{where}: {a}=\"{el.attrib[a]}\" is not a non-negative integer")
    if "time" in el.attrib and not re.fullmatch(r"[0-9]+(\.[0-9]+)?", el.attrib["time"]):
        bad(f"{where}: time=\"{el.attrib['time']}\" is not a non-negative decimal")
    if "timestamp" in el.attrib and not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", el.attrib["timestamp"]):
        bad(f"{where}: timestamp=\"{el.attrib['timestamp']}\" is not ISO 8601 (YYYY-MM-DDTHH:MM:SS)")
    for child in el:
        if child.tag not in CHILDREN.get(el.tag, set()):
            bad(f"{where}: <{child.tag}> is not allowed inside <{el.tag}>")
        check_attrs(child, f"{where}/{child.tag}")


def num(el, a):
    try:
        return int(el.attrib.get(a, "-1"))
    except ValueError:
        return -1


def main():
    if len(sys.argv) != 2:
        print("usage: junit_check.py FILE", file=sys.stderr)
        return 2
    try:
        root = ET.parse(sys.argv[1]).getroot()
    except (ET.ParseError, OSError) as e:
        print(f"junit_check: {sys.argv[1]}: not well-formed XML: {e}", file=sys.stderr)
        return 1
    if root.tag != "testsuites":
        bad(f"the root is <{root.tag}>, not <testsuites>")
    check_attrs(root, root.tag)
    total = dict.fromkeys(COUNTS, 0)
    lines = []
    for si, suite in enumerate(root.findall("testsuite")):
        got = dict.fromkeys(COUNTS, 0)
        seconds = 0.0
        cases = suite.findall("testcase")
        for case in cases:
            got["tests"] += 1
            try:
                seconds += float(case.attrib.get("time", "0"))
            except ValueError:
                pass
            outcomes = [c for c in case if c.tag in ("failure", "error", "skipped")]
            if len(outcomes) > 1:
                bad(f"testcase {case.attrib.get('name')!r}: {len(outcomes)} of failure/error/skipped (at most one)")
            outcome, message, text = "pass", "", ""
            if outcomes:
                o = outcomes[0]
                if len(o):
                    bad(f"testcase {case.attrib.get('name')!r}: <{o.tag}> has child elements")
                outcome = o.tag
                message = o.attrib.get("message", "")
                text = o.text or ""
                got[{"failure": "failures", "error": "errors", "skipped": "skipped"}[o.tag]] += 1
            lines.append(f"{outcome}\t{case.attrib.get('classname', '')}\t{case.attrib.get('name', '')}\t{message}")
            lines.extend("  | " + t for t in text.splitlines())
        for a in COUNTS:
            if num(suite, a) != got[a]:
                bad(f"testsuite {si + 1} ({suite.attrib.get('name')!r}): {a}=\"{suite.attrib.get(a)}\" "
                    f"but its testcases say {got[a]}")
            total[a] += num(suite, a)
        try:
            if abs(float(suite.attrib.get("time", "nan")) - seconds) > 1e-5 * (len(cases) + 1):
                bad(f"testsuite {si + 1}: time=\"{suite.attrib.get('time')}\" but its testcases sum to {seconds:.6f}")
        except ValueError:
            pass
    for a in COUNTS:
        if num(root, a) != total[a]:
            bad(f"testsuites: {a}=\"{root.attrib.get(a)}\" but its testsuites sum to {total[a]}")
    if problems:
        for p in problems:
            print(f"junit_check: {sys.argv[1]}: {p}", file=sys.stderr)
        return 1
    print(" ".join(f"{a}={total[a]}" for a in COUNTS))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
