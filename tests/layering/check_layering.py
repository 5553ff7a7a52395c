#!/usr/bin/env python3
"""The layering of KernelSight's source tree, checked (docs/architecture.md, "Layers").

Each top-level folder may include (with #include "...") only the folders its rule allows; the
pure layers (base/, kernels/) may not include SystemC at all. Every offending include is printed
as file:line. Known violations that cannot be fixed yet are listed, each with its reason, in
allowlist.txt next to this script ("file -> included/path  # reason"); an entry that no longer
matches a violation is an error too, so the list only shrinks.

usage: check_layering.py [--root DIR] [--allowlist FILE] | --self-test
"""
import argparse
import os
import re
import sys
import tempfile

# folder -> folders it may include (itself is always allowed).
RULES = {
    "base": set(),                                  # units, config, registry, csv, rng, files: everyone's
    "kernels": {"base"},                            # the pure cost library
    "sc_modules": {"base"},                         # the SimPy-style framework: knows no GPU, no LLM
    "proto": {"base", "sc_modules", "kernels"},     # the TLM contract: value types of kernels/ only
    "hw": {"base", "sc_modules", "kernels", "proto"},
    "serving": {"base", "sc_modules", "kernels", "proto"},  # hardware only through the contract
}
# Within an allowed folder, only these headers (the contract uses kernels/' plain value types,
# never its cost models or the decomposer).
ONLY_HEADERS = {
    ("proto", "kernels"): {"kernels/kernel.hpp", "kernels/kernel_cost.hpp", "kernels/step_kernels.hpp",
                           "kernels/step.hpp", "kernels/dtype.hpp"},
}
# Single files with a rule of their own: the example GPU proves a module written only against the
# contract is a GPU, so it may include proto/ and nothing else of ours.
FILE_RULES = {
    "examples/contract_gpu/contract_gpu.hpp": {"proto"},
    # A foreign base-protocol model: no header of ours at all.
    "examples/base_protocol_gpu/systolic_accelerator.hpp": set(),
    # A user's interconnect: the contract only.
    "examples/user_interconnect/crossbar.hpp": {"proto"},
}
# Folders that must stay free of SystemC (pure C++, unit-testable without a simulation).
NO_SYSTEMC = {"base", "kernels"}
# Every top-level folder of the project an include path may start with (others: system headers).
PROJECT_FOLDERS = set(RULES) | {"app", "tests", "examples", "bench"}
SYSTEMC_HEADER = re.compile(r'^\s*#\s*include\s*<(systemc(\.h)?|tlm(\.h)?|tlm_utils/[^>]*|sysc/[^>]*)>')
LOCAL_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
SOURCE_EXT = (".hpp", ".cpp", ".h", ".hh", ".cc", ".ipp", ".inl")


def scan(root):
    """Yields (file, line number, included, reason) for every include breaking a rule."""
    for top in sorted(RULES):
        base_dir = os.path.join(root, top)
        for dirpath, dirnames, filenames in os.walk(base_dir):
            dirnames.sort()
            for name in sorted(filenames):
                if not name.endswith(SOURCE_EXT):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root).replace(os.sep, "/")
                with open(path, encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        m = LOCAL_INCLUDE.match(line)
                        if m:
                            included = m.group(1)
                            folder = included.split("/", 1)[0]
                            if folder != top and folder in PROJECT_FOLDERS and folder not in RULES[top]:
                                yield rel, number, included, f"{top}/ may not include {folder}/"
                            only = ONLY_HEADERS.get((top, folder))
                            if only is not None and included not in only:
                                yield rel, number, included, f"{top}/ may include only {', '.join(sorted(only))} of {folder}/"
                        if top in NO_SYSTEMC and SYSTEMC_HEADER.match(line):
                            header = line.strip().split("include", 1)[1].strip()
                            yield rel, number, header, f"{top}/ is pure C++: no SystemC"


def scan_files(root):
    """Yields (file, line number, included, reason) for the files of FILE_RULES."""
    for rel, allowed in sorted(FILE_RULES.items()):
        path = os.path.join(root, rel)
        if not os.path.exists(path):
            yield rel, 0, "-", "file with a layering rule is missing"
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                m = LOCAL_INCLUDE.match(line)
                if m and m.group(1).split("/", 1)[0] not in allowed:
                    yield rel, number, m.group(1), f"{rel} may include only {', '.join(sorted(allowed)) + '/' if allowed else 'no project header'}"


def read_allowlist(path):
    entries = {}
    if not path or not os.path.exists(path):
        return entries
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            body, _, reason = line.partition("#")
            parts = [p.strip() for p in body.split("->")]
            if len(parts) != 2 or not parts[0] or not parts[1] or not reason.strip():
                raise SystemExit(f"{path}:{number}: expected 'file -> included  # reason', got: {line}")
            entries[(parts[0], parts[1])] = (number, reason.strip())
    return entries


def check(root, allowlist):
    allowed = read_allowlist(allowlist)
    used = set()
    errors = []
    for rel, number, included, reason in list(scan(root)) + list(scan_files(root)):
        if (rel, included) in allowed:
            used.add((rel, included))
            continue
        errors.append(f"{rel}:{number}: includes {included} ({reason})")
    for key, (number, _) in sorted(allowed.items(), key=lambda kv: kv[1][0]):
        if key not in used:
            errors.append(f"{allowlist}:{number}: stale entry '{key[0]} -> {key[1]}' (no such violation: remove it)")
    for e in errors:
        print(e)
    print(f"{len(errors)} error(s); {len(used)} known violation(s) allowed by the allow-list")
    return 1 if errors else 0


def self_test():
    """The checker finds what it must and nothing else, on a small tree built here."""
    with tempfile.TemporaryDirectory() as root:
        def write(rel, text):
            p = os.path.join(root, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w") as f:
                f.write(text)
        write("kernels/a.hpp", '#include "base/units.hpp"\n#include "kernels/b.hpp"\n#include "hw/gpu.hpp"\n')
        write("kernels/b.cpp", '#include <vector>\n  #  include <systemc>\n')
        write("sc_modules/sim.cpp", '#include "base/x.hpp"\n#include "kernels/k.hpp"\n')
        write("serving/r.hpp", '#include "proto/p.hpp"\n#include "hw/host.hpp"\n#include "app/sim.hpp"\n')
        write("proto/p.hpp", '#include "kernels/kernel.hpp"\n#include "serving/r.hpp"\n#include "kernels/roofline.hpp"\n')
        write("examples/contract_gpu/contract_gpu.hpp", '#include "proto/p.hpp"\n#include "hw/gpu.hpp"\n')
        write("examples/base_protocol_gpu/systolic_accelerator.hpp", '#include <tlm>\n#include "base/x.hpp"\n')
        write("examples/user_interconnect/crossbar.hpp", '#include "proto/p.hpp"\n')
        found = sorted((rel, n, inc) for rel, n, inc, _ in list(scan(root)) + list(scan_files(root)))
        want = sorted([("kernels/a.hpp", 3, "hw/gpu.hpp"), ("kernels/b.cpp", 2, "<systemc>"),
                       ("sc_modules/sim.cpp", 2, "kernels/k.hpp"), ("serving/r.hpp", 2, "hw/host.hpp"),
                       ("serving/r.hpp", 3, "app/sim.hpp"), ("proto/p.hpp", 2, "serving/r.hpp"), ("proto/p.hpp", 3, "kernels/roofline.hpp"),
                       ("examples/contract_gpu/contract_gpu.hpp", 2, "hw/gpu.hpp"),
                       ("examples/base_protocol_gpu/systolic_accelerator.hpp", 2, "base/x.hpp")])
        if found != want:
            print("self-test: found", found, "want", want)
            return 1
        allow = os.path.join(root, "allow.txt")
        write("allow.txt", "serving/r.hpp -> hw/host.hpp  # reason\nkernels/a.hpp -> base/units.hpp  # stale\n")
        # 8 unlisted violations + 1 stale entry; the listed one is not reported.
        import io, contextlib
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = check(root, allow)
        lines = [l for l in out.getvalue().splitlines() if "known violation" not in l]
        if rc != 1 or len(lines) != 9 or any("hw/host.hpp" in l for l in lines) or not any("stale" in l for l in lines):
            print("self-test: unexpected report", rc, lines)
            return 1
    print("self-test passed")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--root", default=os.path.normpath(os.path.join(here, "..", "..")))
    ap.add_argument("--allowlist", default=os.path.join(here, "allowlist.txt"))
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    return check(a.root, a.allowlist)


if __name__ == "__main__":
    sys.exit(main())
