#!/usr/bin/env python3
"""The numbers and folder names the tutorials and the README print are what the binary prints.

Runs every command of the ```console blocks of the given Markdown files (in order, in one scratch
folder, so a later command sees an earlier one's results) and checks that the block's printed
lines appear in the command's output in the same order. A line `...` in a block stands for any
number of lines. Commands the scratch folder cannot run (a Slurm submission, the Slurm test's own
session) are skipped and named. Exit 1 with the first difference of each block that differs.

    check_printed_outputs.py KERNELSIGHT ROOT FILE.md...
Update a block by running its command (`kernelsight` is build/app/kernelsight) and pasting the
output, shortening with `...` where the text says so."""
import functools
import os
import re
import subprocess
import sys
import tempfile

RUNNABLE = ("kernelsight ", "build/app/kernelsight ", "awk ", "python3 scripts/plot.py ")


def blocks(path):
    """(line number, [(command, [expected lines])]) per ```console block, except those right after
    a `<!-- output not checked: why -->` line (a file the reader writes, a cluster)."""
    lines = open(path).read().split("\n")
    i, out = 0, []
    while i < len(lines):
        if lines[i].strip() == "```console" and i > 0 and lines[i - 1].startswith("<!-- output not checked"):
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                i += 1
        elif lines[i].strip() == "```console":
            start, i, cmds = i + 1, i + 1, []
            while i < len(lines) and lines[i].strip() != "```":
                if lines[i].startswith("$ "):
                    cmds.append((lines[i][2:], []))
                elif cmds:
                    cmds[-1][1].append(lines[i])
                i += 1
            out.append((start, cmds))
        i += 1
    return out


# What differs from run to run is compared as a placeholder: wall-clock times, and the order in
# which a sweep's parallel points finish.
VOLATILE = [(re.compile(r"[0-9.]+ s wall"), "N s wall"),
            (re.compile(r"^\[\s*\d+/(\d+)\] point\s+\d+ ok\s.*$"), r"[i/\1] point ok")]


def same(expected, actual):
    """`...` inside a printed line stands for any text (a shortened line); wall times may differ."""
    for pattern, placeholder in VOLATILE:
        expected, actual = pattern.sub(placeholder, expected), pattern.sub(placeholder, actual)
    if "..." in expected:
        return re.fullmatch(".*".join(re.escape(part) for part in expected.split("...")), actual) is not None
    return actual == expected


def missing(expected, actual):
    """The first expected line that cannot be matched in order (None if all are): consecutive
    lines must follow each other; `...` skips any number of lines. Blank printed lines are
    ignored. Backtracks, so `...` takes as many lines as the rest needs."""
    exp = [e.rstrip() for e in expected if e.strip()]
    act = [a.rstrip() for a in actual if a.strip()]
    best = [0]  # the furthest expected line reached, for the message

    @functools.lru_cache(maxsize=None)
    def match(i, j, free):
        best[0] = max(best[0], i)
        if i == len(exp):
            return True
        if exp[i] == "...":
            return match(i + 1, j, True)
        for k in range(j, len(act) if free else min(j + 1, len(act))):
            if same(exp[i], act[k]) and match(i + 1, k + 1, False):
                return True
        return False

    return None if match(0, 0, True) else exp[min(best[0], len(exp) - 1)]


def main():
    binary, root, docs = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), sys.argv[3:]
    failures, checked, skipped = [], 0, []
    with tempfile.TemporaryDirectory() as work:
        for name in ("scenarios", "scripts", "data", "tests"):
            os.symlink(os.path.join(root, name), os.path.join(work, name))
        env = dict(os.environ, PATH=os.path.dirname(binary) + os.pathsep + os.environ["PATH"])
        os.symlink(binary, os.path.join(work, "kernelsight"))
        os.makedirs(os.path.join(work, "results"))  # the tutorials' earlier (bash) steps made it
        for doc in docs:
            for line, cmds in blocks(os.path.join(root, doc)):
                # A block with a command that cannot run here is skipped whole: its later
                # commands see what that one did (a Slurm job's results).
                unrunnable = [c for c, _ in cmds if not c.startswith(RUNNABLE)]
                if unrunnable:
                    skipped.append(f"{doc}:{line}: {unrunnable[0][:70]}")
                    continue
                for cmd, expected in cmds:
                    run = re.sub(r"^(build/app/)?kernelsight ", "./kernelsight ", cmd)
                    # Line-buffered, both streams in one pipe: the order a terminal shows.
                    done = subprocess.run(["stdbuf", "-oL", "-eL", "bash", "-c", run], cwd=work, env=env,
                                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                    actual = done.stdout.split("\n")
                    checked += 1
                    first = missing(expected, actual)
                    if first is not None:
                        failures.append(f"{doc}:{line}: `{cmd}`\n  printed line not in the output: {first!r}\n  "
                                        "the output:\n    " + "\n    ".join(actual[:60]))
    for s in skipped:
        print(f"skipped (not runnable here): {s}")
    print(f"{checked} commands checked, {len(failures)} differ")
    for f in failures:
        print(f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
