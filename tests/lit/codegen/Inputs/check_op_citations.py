#!/usr/bin/env python3
"""Checks a generated .cu against `purlinc --emit=ir` of the same collective.

  check_op_citations.py IR.txt FILE.cu PROGRAM...

For each PROGRAM (e.g. `latency`) whose device code purlinc prints: every op
of that program in the first collective of IR.txt is cited in FILE.cu
exactly once in full (`// %N <the op's IR line>`), and every citation in
FILE.cu (`// %N ...`, full or `// %N [variant]`) names an op of a printed
program, with the IR's text. Prints one line per program ("latency: 3 ops,
each cited once") or the first mismatch, exit status 1.
"""
import re
import sys


def programs(ir_text):
    """{program: {id: line}} of the first collective in the IR dump."""
    out, cur, seen = {}, None, False
    for line in ir_text.splitlines():
        if line.startswith("collective "):
            if seen:
                break
            seen = True
        m = re.match(r"\s*program (\w+)", line)
        if m:
            cur = m.group(1)
            out.setdefault(cur, {})
            continue
        m = re.match(r"\s*(%(\d+) .*)$", line)
        if m and cur:
            out[cur][int(m.group(2))] = m.group(1)
    return out


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    ir = programs(open(sys.argv[1]).read())
    cu = open(sys.argv[2]).read().splitlines()
    wanted = sys.argv[3:]
    ops = {}
    for p in wanted:
        if p not in ir:
            sys.exit(f"no program {p} in {sys.argv[1]}")
        ops.update({i: (p, t) for i, t in ir[p].items()})
    full = {}
    for n, line in enumerate(cu, 1):
        m = re.match(r"^\s*// %(\d+)( \[[^\]]+\])?(.*)$", line)
        if not m:
            continue
        i = int(m.group(1))
        if i not in ops:
            print(f"{sys.argv[2]}:{n}: cites %{i}, which is not an op of {', '.join(wanted)}")
            return 1
        if m.group(2):
            continue
        text = f"%{i}{m.group(3)}"
        if text != ops[i][1]:
            print(f"{sys.argv[2]}:{n}: cites '{text}', the IR says '{ops[i][1]}'")
            return 1
        full[i] = full.get(i, 0) + 1
    for p in wanted:
        for i, t in sorted(ir[p].items()):
            if full.get(i, 0) != 1:
                print(f"{sys.argv[2]}: {t} is cited {full.get(i, 0)} times in full (want 1)")
                return 1
        print(f"{p}: {len(ir[p])} ops, each cited once")
    return 0


if __name__ == "__main__":
    sys.exit(main())
