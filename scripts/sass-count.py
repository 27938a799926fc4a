#!/usr/bin/env python3
"""Instruction counts per kernel in the SASS of cubins.

  sass-count.py FILE.cubin [FILE.cubin ...] [--filter SUBSTR] [--diff]

Disassembles each cubin (`nvcc -cubin -arch=sm_XX`) with nvdisasm ($NVDISASM,
else nvdisasm on PATH or in /usr/local/cuda/bin), demangles the kernel
names (c++filt) and prints one line per kernel: its SASS instructions, NOPs
excluded. With two files and --diff, prints the kernels side by side,
matched in order of appearance after --filter, with the difference and
whether the opcode sequences are identical (equal up to register numbers,
addresses and constants). Used for the emitted-vs-hand-written comparison
of issue 15 (bench/results/*-ir-emit/).
"""
import os, re, shutil, subprocess, sys


def nvdisasm():
    for c in (os.environ.get("NVDISASM"), shutil.which("nvdisasm"), "/usr/local/cuda/bin/nvdisasm"):
        if c and os.path.exists(c):
            return c
    sys.exit("sass-count.py: no nvdisasm (set NVDISASM; PyPI: nvidia-cuda-nvdisasm)")


def kernels(path):
    out = subprocess.run([nvdisasm(), "-c", path], capture_output=True, text=True, check=True).stdout
    name, ops, res = None, [], []
    for line in out.splitlines():
        m = re.match(r"^\.text\.(\S+):$", line)
        if m:
            if name:
                res.append((name, ops))
            name, ops = m.group(1), []
            continue
        m = re.match(r"\s*/\*[0-9a-f]{4,}\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", line)
        if m and name and m.group(2) != "NOP":
            ops.append(m.group(2))
    if name:
        res.append((name, ops))
    names = subprocess.run(["c++filt"], input="\n".join(n for n, _ in res), capture_output=True,
                           text=True).stdout.splitlines()
    return [(d, o) for (_, o), d in zip(res, names)]


def main():
    args = sys.argv[1:]
    filt = None
    if "--filter" in args:
        i = args.index("--filter")
        filt = args[i + 1]
        del args[i:i + 2]
    diff = "--diff" in args
    files = [a for a in args if a != "--diff"]
    per = [sorted((k for k in kernels(f) if filt is None or filt in k[0]), key=lambda k: k[0]) for f in files]
    if diff and len(per) == 2:
        print(f"{'old':>6} {'new':>6} {'diff':>6}  same-ops  kernel (old | new)")
        for (n1, o1), (n2, o2) in zip(*per):
            print(f"{len(o1):6} {len(o2):6} {len(o2) - len(o1):+6}  {'yes' if o1 == o2 else 'no ':8}  {n1} | {n2}")
        if len(per[0]) != len(per[1]):
            print(f"(kernel counts differ: {len(per[0])} vs {len(per[1])})")
        return
    for f, ks in zip(files, per):
        for n, o in ks:
            print(f"{f}\t{len(o)}\t{n}")


if __name__ == "__main__":
    main()
