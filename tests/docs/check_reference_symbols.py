#!/usr/bin/env python3
"""Every C symbol the library exports has a documented entry in the generated reference.

    check_reference_symbols.py <libtpevent.so> <the reference's XML folder> <skip code>

The `docs` target's Doxygen (docs/reference/Doxyfile.in) writes its XML beside the
HTML. Each tp_* symbol that `nm -D --defined-only` finds in the library must be a
function (or variable) of a public header there, with a description: one exported
without a declaration in include/tpevent/ is a name users can link to but cannot
read about, and one without a comment has an empty entry. Doxygen's own warnings
(docs.build) catch the second in the headers; this catches both from the side of
what the library gives out (issue 55: "every public C function appears in the
reference").

Without the XML (docs.build skipped: no doxygen, or a sanitized build) it exits with
<skip code>, saying why, unless TPEVENT_REQUIRE_DOCS=1.
"""
import os
import subprocess
import sys
import xml.etree.ElementTree as ET


def exported(library):
    out = subprocess.run(["nm", "-D", "--defined-only", library], check=True, capture_output=True,
                         text=True).stdout
    names = {}
    for line in out.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[2].startswith("tp_"):
            names[fields[2].split("@")[0]] = fields[1]
    return names


def text_of(element):
    return "".join(element.itertext()).strip() if element is not None else ""


def reference(xml_dir):
    """{name: (documented, header)} of the functions and variables of the headers."""
    found = {}
    for name in sorted(os.listdir(xml_dir)):
        if not name.endswith(".xml") or name == "index.xml":
            continue
        root = ET.parse(os.path.join(xml_dir, name)).getroot()
        for compound in root.iter("compounddef"):
            if compound.get("kind") != "file":
                continue
            header = text_of(compound.find("compoundname"))
            for member in compound.iter("memberdef"):
                if member.get("kind") not in ("function", "variable"):
                    continue
                documented = bool(text_of(member.find("briefdescription")) or
                                  text_of(member.find("detaileddescription")))
                symbol = text_of(member.find("name"))
                was = found.get(symbol, (False, header))
                found[symbol] = (was[0] or documented, header)
    return found


def main(argv):
    if len(argv) != 4:
        print(__doc__)
        return 2
    library, xml_dir, skip_code = argv[1], argv[2], int(argv[3])
    if not os.path.isfile(os.path.join(xml_dir, "index.xml")):
        print(f"no reference at {xml_dir}: docs.build did not build it here (no doxygen, or a sanitized build)")
        return 1 if os.environ.get("TPEVENT_REQUIRE_DOCS") == "1" else skip_code
    symbols = exported(library)
    if not symbols:
        print(f"FAIL: {library} exports no tp_* symbol: not the library?")
        return 1
    entries = reference(xml_dir)
    bad = 0
    for symbol in sorted(symbols):
        if symbol not in entries:
            print(f"FAIL: {symbol}: exported by {os.path.basename(library)}, not in the reference "
                  "(declare it in a header of include/tpevent/, with its comment, or do not export it)")
            bad += 1
        elif not entries[symbol][0]:
            print(f"FAIL: {symbol}: its entry in the reference ({entries[symbol][1]}) has no description: "
                  "its declaration has no comment")
            bad += 1
    print(f"{len(symbols)} exported tp_* symbols, {len(symbols) - bad} with a documented entry, {bad} without")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
