#!/usr/bin/env python3
"""Checks a generated .cu against `purlinc --emit=ir` of the same collective.

  check_op_citations.py IR.txt FILE.cu PROGRAM...

PROGRAM names a program as the IR prints it after `program`: `latency`,
`throughput (pull)`, `throughput (push)`, `direct`, `direct, copy-engine
form` (without the parenthesis of the direct forms). The IR dump may show the first
collective for several world sizes (one per throughput transfer); each
program is taken from the first world size that has it.

FILE.cu prints each program's device code after a heading line
`// ---- NAME: program PROGRAM, printed from the SNAC IR...`; a citation
(`// %N <the op's IR line>`, or `// %N [variant]` for the same op again in
a specialization) belongs to the program of the heading above it. For each
PROGRAM: every op is cited exactly once in full, under its own heading, and
every citation under its heading names an op of that program with the
IR's text (citations of programs not named are not checked; one outside
every heading is an error). Prints one
line per program ("latency: 3 ops, each cited once") or the first mismatch,
exit status 1.
"""
import re
import sys


def programs(ir_text):
    """{program: {id: line}} of the first collective in the IR dump (every
    world size it is shown for; the first one showing a program wins)."""
    out, cur, name, skip = {}, None, None, False
    for line in ir_text.splitlines():
        m = re.match(r"collective (\S+) ", line)
        if m:
            if name is None:
                name = m.group(1)
            elif m.group(1) != name:
                cur = None
                skip = True
                continue
            skip = False
            cur = None
            continue
        if skip:
            continue
        m = re.match(r"\s*program (.+?) \{$", line)
        if m:
            key = m.group(1)
            key = re.sub(r" \(captured calls;.*\)$", "", key)
            cur = None if key in out else key
            if cur:
                out[cur] = {}
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
    for p in wanted:
        if p not in ir:
            sys.exit(f"no program {p} in {sys.argv[1]}")
    full = {p: {} for p in wanted}
    section = None
    for n, line in enumerate(cu, 1):
        h = re.match(r"^// ---- \S+: (program (.+?)|.*), printed from the SNAC IR", line)
        if line.startswith("// ---- "):
            section = h.group(2) if h and h.group(2) else None
            continue
        m = re.match(r"^\s*// %(\d+)( \[[^\]]+\])?(.*)$", line)
        if not m:
            continue
        i = int(m.group(1))
        if section is None:
            print(f"{sys.argv[2]}:{n}: cites %{i} outside a program's section")
            return 1
        if section not in wanted:
            continue  # another program's citation (not checked in this run)
        ops = ir[section]
        if i not in ops:
            print(f"{sys.argv[2]}:{n}: cites %{i}, which is not an op of program {section}")
            return 1
        if m.group(2):
            continue
        text = f"%{i}{m.group(3)}"
        if text != ops[i]:
            print(f"{sys.argv[2]}:{n}: cites '{text}', the IR says '{ops[i]}'")
            return 1
        full[section][i] = full[section].get(i, 0) + 1
    for p in wanted:
        for i, t in sorted(ir[p].items()):
            if full[p].get(i, 0) != 1:
                print(f"{sys.argv[2]}: {p}: {t} is cited {full[p].get(i, 0)} times in full (want 1)")
                return 1
        print(f"{p}: {len(ir[p])} ops, each cited once")
    return 0


if __name__ == "__main__":
    sys.exit(main())
