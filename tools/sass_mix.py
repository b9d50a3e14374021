#!/usr/bin/env python3
"""Static SASS instruction mix of jitfuse's kernels, per kernel.

    JITFUSE_DUMP=cubin JITFUSE_DUMP_DIR=/tmp/k <program>
    tools/sass_mix.py /tmp/k                 # every *.cubin there
    tools/sass_mix.py a.cubin --compare b.cubin
    tools/sass_mix.py /tmp/k --json
    tools/sass_mix.py a.cubin --loop         # each kernel's outer loop only

Counts the instructions nvdisasm prints for each kernel (static: each
instruction once, whatever the loop trip counts), by opcode and by class
(memory, conversion, fp32, fp16, integer, select, control, other). jitfuse's
kernels unroll their chunk loops, so a kernel's static count tracks the
instructions a chunk costs; it is a prediction for instruction-bound kernels
(BENCHMARKS.md), not a measurement. With --compare, kernels of the same name
in the two inputs are shown side by side with the difference per class.

nvdisasm comes with the CUDA toolkit; where the toolkit lacks it (the
development machine's has only ptxas), `pip install nvidia-cuda-nvdisasm`
provides it, and this script finds it in the Python package. Inputs may also
be SASS text already disassembled (`nvdisasm -c`, `cuobjdump -sass`).
"""

import argparse
import collections
import glob
import json
import os
import re
import shutil
import subprocess
import sys

# Opcode (the part before the first '.') -> class. One table; opcodes not
# named here count as "other".
CLASSES = {
    "memory": "LDG STG LD ST LDL STL LDS STS LDSM LDC ATOM ATOMG ATOMS RED LDGSTS LDGDEPBAR "
              "UBLKCP UTMALDG UTMASTG",
    "conversion": "F2F F2I I2F F2FP I2FP F2IP FRND",
    "fp32": "FADD FMUL FFMA FMNMX FSETP FSET MUFU FCHK FSWZADD",
    "fp16": "HADD2 HMUL2 HFMA2 HMNMX2 HSETP2 HSET2",
    "fp64": "DADD DMUL DFMA DSETP DMNMX",
    "integer": "IMAD IADD3 IADD LOP3 LOP SHF SHL SHR LEA ISETP IMNMX IABS POPC FLO BREV "
               "PRMT BMSK SGXT LEA_HI IMUL UIMAD UIADD3 ULOP3 USHF ULEA UISETP UPRMT USGXT "
               "UMOV UFLO UPOPC",
    "select": "SEL FSEL USEL PLOP3 UPLOP3 P2R R2P",
    "move": "MOV S2R S2UR CS2R ULDC R2UR SHFL",
    "control": "BRA EXIT BSSY BSYNC CALL RET BAR WARPSYNC BMOV NOP YIELD JMP BREAK "
               "ELECT VOTE VOTEU MEMBAR ERRBAR DEPBAR CCTL ENDCOLLECTIVE",
}
OPCODE_CLASS = {op: cls for cls, ops in CLASSES.items() for op in ops.split()}
CLASS_ORDER = list(CLASSES) + ["other"]

KERNEL_RE = re.compile(r"^\.text\.([A-Za-z_][A-Za-z_0-9$]*):")
# "        /*0120*/              @!P0 EXIT ;" (nvdisasm -c) or
# "        /*0120*/                   @!P0 EXIT ;    /* 0x... */" (cuobjdump).
INSTR_RE = re.compile(r"^\s+/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[0-9T]\s+)?([A-Z][A-Z0-9_]*)")
# cuobjdump -sass names a kernel "Function : NAME".
FUNCTION_RE = re.compile(r"^\s+Function : ([A-Za-z_][A-Za-z_0-9$]*)")


def opcode_class(op):
    return OPCODE_CLASS.get(op, "other")


ADDR_RE = re.compile(r"^\s+/\*([0-9a-f]{4,})\*/")
LABEL_RE = re.compile(r"^(\.L_\w+):")
# A branch's target: an address (cuobjdump) or a label (nvdisasm -c).
TARGET_RE = re.compile(r"\bBRA(?:\.[A-Z.]+)?\s+(?:`\((\.L_\w+)\)|0x([0-9a-f]+))")


def outer_loop(instrs, labels):
    """The instructions of the largest range from a backward branch's target
    to the branch that holds no EXIT ([] without one): a kernel's outer
    loop, whose count is what an iteration issues. (A range with an EXIT is
    no loop body: ptxas puts the slow paths of warp shuffles after the
    kernel's end, branching back into its middle.)"""
    best = []
    for i, (addr, _, line) in enumerate(instrs):
        m = TARGET_RE.search(line)
        if not m:
            continue
        target = labels.get(m.group(1)) if m.group(1) else int(m.group(2), 16)
        if target is None or target > addr:
            continue
        body = [x for x in instrs[: i + 1] if x[0] >= target]
        if any(op == "EXIT" for _, op, _ in body):
            continue
        if len(body) > len(best):
            best = body
    return best


def parse_sass(text, loop=False):
    """{kernel: Counter(opcode -> count)} in the order the kernels appear;
    with loop, only the instructions of each kernel's outer loop."""
    raw = collections.OrderedDict()  # kernel -> ([(addr, opcode, line)], {label: addr})
    kernel = None
    pending = []
    for line in text.splitlines():
        m = KERNEL_RE.match(line) or FUNCTION_RE.match(line)
        if m:
            kernel = m.group(1)
            raw.setdefault(kernel, ([], {}))
            pending = []
            continue
        m = LABEL_RE.match(line)
        if m:
            pending.append(m.group(1))
            continue
        m = INSTR_RE.match(line)
        if m and kernel is not None:
            addr = int(ADDR_RE.match(line).group(1), 16)
            instrs, labels = raw[kernel]
            for label in pending:
                labels[label] = addr
            pending = []
            instrs.append((addr, m.group(1), line))
    out = collections.OrderedDict()
    for name, (instrs, labels) in raw.items():
        picked = outer_loop(instrs, labels) if loop else instrs
        out[name] = collections.Counter(op for _, op, _ in picked)
    return out


def find_nvdisasm(explicit=None):
    """The nvdisasm to run, or None: --nvdisasm, $NVDISASM, PATH, the CUDA
    toolkit, then the nvidia-cuda-nvdisasm Python package."""
    for cand in (explicit, os.environ.get("NVDISASM")):
        if cand:
            return cand
    found = shutil.which("nvdisasm")
    if found:
        return found
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home and os.access(os.path.join(home, "bin", "nvdisasm"), os.X_OK):
            return os.path.join(home, "bin", "nvdisasm")
    for base in sys.path:
        for path in sorted(glob.glob(os.path.join(base or ".", "nvidia", "cu*", "bin", "nvdisasm"))):
            if os.access(path, os.X_OK):
                return path
    return None


def disassemble(path, nvdisasm):
    if nvdisasm is None:
        sys.exit("sass_mix.py: no nvdisasm found (CUDA toolkit bin/, $NVDISASM, or "
                 "`pip install nvidia-cuda-nvdisasm`); or pass SASS text instead of a CUBIN")
    run = subprocess.run([nvdisasm, "-c", path], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"sass_mix.py: {nvdisasm} -c {path} failed: {run.stderr.strip()}")
    return run.stdout


def is_elf(path):
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def load(inputs, nvdisasm, loop=False):
    """{kernel: Counter} over every input: CUBINs, SASS text, directories of
    *.cubin. A kernel in two inputs keeps the first (variants are unique per
    program; two programs may share a name, so pass them separately)."""
    files = []
    for item in inputs:
        if os.path.isdir(item):
            found = sorted(glob.glob(os.path.join(item, "*.cubin")))
            if not found:
                sys.exit(f"sass_mix.py: no *.cubin in {item} (JITFUSE_DUMP=cubin writes them)")
            files += found
        else:
            files.append(item)
    out = collections.OrderedDict()
    for path in files:
        if not os.path.exists(path):
            sys.exit(f"sass_mix.py: {path}: no such file")
        text = disassemble(path, nvdisasm) if is_elf(path) else open(path).read()
        kernels = parse_sass(text, loop)
        if not kernels:
            sys.exit(f"sass_mix.py: {path}: no kernel found (not a CUBIN or SASS text)")
        for name, counts in kernels.items():
            out.setdefault(name, counts)
    return out


def by_class(counts):
    c = collections.Counter()
    for op, n in counts.items():
        c[opcode_class(op)] += n
    return c


def summary(counts, top):
    classes = by_class(counts)
    return {
        "total": sum(counts.values()),
        "classes": {k: classes[k] for k in CLASS_ORDER if classes[k]},
        "top": dict(counts.most_common(top)),
    }


def print_table(kernels, top):
    head = ["kernel", "total"] + CLASS_ORDER
    rows = []
    for name, counts in kernels.items():
        s = summary(counts, top)
        rows.append([name, str(s["total"])] + [str(s["classes"].get(k, 0)) for k in CLASS_ORDER])
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
    for r in [head] + rows:
        print("  ".join(x.ljust(widths[0]) if i == 0 else x.rjust(widths[i])
                        for i, x in enumerate(r)))
    if top:
        print()
        for name, counts in kernels.items():
            ops = ", ".join(f"{op} {n}" for op, n in counts.most_common(top))
            print(f"{name}: {ops}")


def print_compare(a, b):
    names = [n for n in a if n in b]
    if not names:
        sys.exit("sass_mix.py: the two inputs have no kernel name in common")
    head = ["kernel", "total"] + CLASS_ORDER
    rows = []
    for n in names:
        ca, cb = by_class(a[n]), by_class(b[n])
        ta, tb = sum(a[n].values()), sum(b[n].values())
        cells = [n, f"{ta} -> {tb} ({tb - ta:+d})"]
        cells += [f"{cb[k] - ca[k]:+d}" if cb[k] != ca[k] else "." for k in CLASS_ORDER]
        rows.append(cells)
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
    for r in [head] + rows:
        print("  ".join(x.ljust(widths[0]) if i == 0 else x.rjust(widths[i])
                        for i, x in enumerate(r)))
    only = [n for n in a if n not in b] + [n for n in b if n not in a]
    if only:
        print("in one input only: " + ", ".join(only))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("inputs", nargs="+", help="CUBINs, SASS text files, or directories of *.cubin")
    ap.add_argument("--compare", metavar="OTHER", nargs="+",
                    help="second set of inputs: per-kernel differences (OTHER minus INPUTS)")
    ap.add_argument("--kernel", metavar="REGEX", help="only kernels whose name matches")
    ap.add_argument("--top", type=int, default=0, help="also list each kernel's N commonest opcodes")
    ap.add_argument("--json", action="store_true", help="one JSON object per kernel")
    ap.add_argument("--nvdisasm", help="path of nvdisasm")
    ap.add_argument("--loop", action="store_true",
                    help="count only each kernel's outer loop (the largest range from a backward "
                         "branch's target to the branch): an iteration's instructions")
    args = ap.parse_args(argv)
    nvdisasm = find_nvdisasm(args.nvdisasm)

    def pick(kernels):
        if not args.kernel:
            return kernels
        rx = re.compile(args.kernel)
        return collections.OrderedDict((k, v) for k, v in kernels.items() if rx.search(k))

    first = pick(load(args.inputs, nvdisasm, args.loop))
    if args.compare:
        print_compare(first, pick(load(args.compare, nvdisasm, args.loop)))
    elif args.json:
        for name, counts in first.items():
            print(json.dumps({"kernel": name, **summary(counts, args.top or 10)}))
    else:
        print_table(first, args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
