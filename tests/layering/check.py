#!/usr/bin/env python3
"""The rooms of DESIGN.md section 3, checked on the source tree: every quoted
#include in a room names a room that room may use. Fails, naming the file,
the line and the rule, when for example stack/ includes drivers/dpdk/ or
drivers/uring/ (or so much as names them) or reactor/core.hh, a public header includes an
internal one, or an app or example reaches past the public API.

  tests/layering/check.py SOURCE_DIR
"""
import pathlib
import re
import sys

# room -> include prefixes it may use (its own prefix is always allowed).
# Longest room prefix wins. "affine/" is the public API (include/affine/).
RULES = {
    "include/affine/": ["affine/"],
    "base/": ["affine/"],
    "numa/": ["affine/", "base/"],
    "reactor/policy/": ["affine/", "numa/"],
    "reactor/": ["affine/", "numa/", "base/", "reactor/policy/"],
    "drivers/": ["affine/", "reactor/", "base/", "numa/"],
    # The stack stands on the port boundary (drivers/*.hh beside port.hh),
    # never on a driver, and reaches the reactor through reactor/here.hh
    # (and the pure pieces: the policies, and the timer wheel its timer
    # fibers own one of per core), never its internal state.
    "stack/": ["affine/", "reactor/here.hh", "reactor/policy/", "reactor/timer_wheel.hh", "base/", "numa/",
               "drivers/port.hh", "drivers/poller.hh",
               "drivers/attach.hh", "drivers/rss.hh", "drivers/net_backend.hh"],
    "runtime/": ["affine/", "reactor/", "base/", "numa/", "drivers/", "stack/"],
    "sim/": ["affine/", "numa/", "base/", "reactor/policy/"],
    "apps/": ["affine/"],
    "examples/": ["affine/"],
}
# Names a room must not even mention (a comment pointing into a driver
# says the stack knows it).
FORBIDDEN_TEXT = {"stack/": ["drivers/dpdk", "drivers/uring"]}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCES = (".cc", ".hh", ".h", ".cpp")


def room_of(rel):
    best = None
    for room in RULES:
        if rel.startswith(room) and (best is None or len(room) > len(best)):
            best = room
    return best


def main():
    src = pathlib.Path(sys.argv[1]).resolve()
    problems = []
    files = 0
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src).as_posix()
        if not path.is_file() or path.suffix not in SOURCES or rel.startswith("build"):
            continue
        room = room_of(rel)
        if room is None:
            continue
        files += 1
        allowed = RULES[room] + [room]
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            m = INCLUDE.match(line)
            if m:
                target = m.group(1)
                if not any(target == a or (a.endswith("/") and target.startswith(a)) for a in allowed):
                    problems.append(f"{rel}:{n}: {room} may not include \"{target}\" (it may use {', '.join(RULES[room])})")
            for word in FORBIDDEN_TEXT.get(room, []):
                if word in line:
                    problems.append(f"{rel}:{n}: {room} names {word}: the stack knows the port boundary only")
    for p in problems:
        print(p)
    print(f"layering: {files} files, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
