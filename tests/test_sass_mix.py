#!/usr/bin/env python3
"""tools/sass_mix.py without a GPU or nvdisasm: the parser, the opcode
classes and the comparison on SASS text written by hand (nvdisasm -c and
cuobjdump -sass spellings).
Run by CTest: python3 tests/test_sass_mix.py"""

import contextlib
import io
import os
import sys
import tempfile
import unittest

TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools")
sys.path.insert(0, TOOLS)

import sass_mix  # noqa: E402

NVDISASM_TEXT = """\
\t.target\tsm_90
//--------------------- .text.jf_k0_add_p8        --------------------------
\t.section\t.text.jf_k0_add_p8,"ax",@progbits
jf_k0_add_p8:
.text.jf_k0_add_p8:
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   S2R R5, SR_CTAID.X ;
        /*0020*/              @!P0 LDG.E.128 R8, desc[UR4][R2.64] ;
        /*0030*/                   PRMT R4, R8, 0x7632, R4 ;
        /*0040*/                   IMAD.U32 R6, R8, 0x10000, RZ ;
        /*0050*/                   FFMA R6, R6, R7, R4 ;
        /*0060*/                   F2FP.BF16.F32.PACK_AB R6, R6, R7 ;
        /*0070*/               @P1 SEL R4, R5, R6, P2 ;
        /*0080*/                   STG.E.128 desc[UR4][R2.64], R8 ;
        /*0090*/                   EXIT ;
.L_x_1:
        /*00a0*/                   BRA `(.L_x_1) ;
//--------------------- .text.jf_k0_add_v8        --------------------------
.text.jf_k0_add_v8:
        /*0000*/                   LDG.E.128 R8, desc[UR4][R2.64] ;
        /*0010*/                   HADD2.F32 R4, -RZ, R8.H0_H0 ;
        /*0020*/                   STG.E.128 desc[UR4][R2.64], R8 ;
        /*0030*/                   EXIT ;
"""

CUOBJDUMP_TEXT = """\
\tcode for sm_90
\t\tFunction : jf_k0_add_v8
\t.headerflags\t@"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDG.E.128 R8, desc[UR4][R2.64] ;          /* 0x000000040208 */
                                                                             /* 0x000ea2000c1e1d00 */
        /*0010*/                   FMUL R4, R8, R9 ;                         /* 0x00000009080 */
        /*0020*/                   FMUL R5, R8, R9 ;                         /* 0x00000009080 */
        /*0030*/                   STG.E.128 desc[UR4][R2.64], R8 ;          /* 0x0000000802 */
        /*0040*/                   EXIT ;                                    /* 0x000000000000 */
"""

# A row loop (0x0020-0x0070) with a barrier, and a shuffle's slow path after
# the EXIT that branches back into the loop: not the loop body.
LOOP_CUOBJDUMP = """\
\t\tFunction : jf_loop
        /*0000*/                   S2R R0, SR_TID.X ;                        /* 0x0 */
        /*0010*/                   MOV R1, RZ ;                              /* 0x0 */
        /*0020*/                   LDG.E.128 R8, desc[UR4][R2.64] ;          /* 0x0 */
        /*0030*/                   FFMA R4, R8, R9, R4 ;                     /* 0x0 */
        /*0040*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;             /* 0x0 */
        /*0050*/                   STS [R6], R4 ;                            /* 0x0 */
        /*0060*/                   ISETP.GE.AND P0, PT, R1, R5, PT ;         /* 0x0 */
        /*0070*/              @!P0 BRA 0x20 ;                                /* 0x0 */
        /*0080*/                   EXIT ;                                    /* 0x0 */
        /*0090*/                   WARPSYNC R7 ;                             /* 0x0 */
        /*00a0*/                   BRA 0x30 ;                                /* 0x0 */
"""
LOOP_NVDISASM = """\
.text.jf_loop:
        /*0000*/                   S2R R0, SR_TID.X ;
.L_x_0:
        /*0010*/                   LDG.E.128 R8, desc[UR4][R2.64] ;
        /*0020*/                   FFMA R4, R8, R9, R4 ;
        /*0030*/              @!P0 BRA `(.L_x_0) ;
        /*0040*/                   EXIT ;
.L_x_1:
        /*0050*/                   BRA `(.L_x_1) ;
"""


class Parse(unittest.TestCase):
    def test_nvdisasm_text(self):
        k = sass_mix.parse_sass(NVDISASM_TEXT)
        self.assertEqual(list(k), ["jf_k0_add_p8", "jf_k0_add_v8"])
        p8 = k["jf_k0_add_p8"]
        self.assertEqual(sum(p8.values()), 11)  # the label line is not an instruction
        self.assertEqual(p8["LDG"], 1)          # predicated: counted, guard stripped
        self.assertEqual(p8["SEL"], 1)
        self.assertEqual(sum(k["jf_k0_add_v8"].values()), 4)

    def test_cuobjdump_text(self):
        k = sass_mix.parse_sass(CUOBJDUMP_TEXT)
        self.assertEqual(dict(k["jf_k0_add_v8"]), {"LDG": 1, "FMUL": 2, "STG": 1, "EXIT": 1})

    def test_loop_only(self):
        k = sass_mix.parse_sass(LOOP_CUOBJDUMP, loop=True)
        self.assertEqual(dict(k["jf_loop"]),
                         {"LDG": 1, "FFMA": 1, "BAR": 1, "STS": 1, "ISETP": 1, "BRA": 1})
        self.assertEqual(sum(sass_mix.parse_sass(LOOP_CUOBJDUMP)["jf_loop"].values()), 11)
        # nvdisasm's labels; the self-branch after EXIT is a one-instruction
        # "loop", smaller than the row loop.
        k = sass_mix.parse_sass(LOOP_NVDISASM, loop=True)
        self.assertEqual(dict(k["jf_loop"]), {"LDG": 1, "FFMA": 1, "BRA": 1})
        # A kernel without a loop counts nothing.
        self.assertEqual(sum(sass_mix.parse_sass(CUOBJDUMP_TEXT, loop=True)["jf_k0_add_v8"].values()), 0)

    def test_classes(self):
        k = sass_mix.parse_sass(NVDISASM_TEXT)
        s = sass_mix.summary(k["jf_k0_add_p8"], 3)
        self.assertEqual(s["classes"], {"memory": 3, "conversion": 1, "fp32": 1, "integer": 2,
                                        "select": 1, "move": 1, "control": 2})
        self.assertEqual(s["total"], 11)
        self.assertEqual(sass_mix.opcode_class("HADD2"), "fp16")
        self.assertEqual(sass_mix.opcode_class("NOTANOP"), "other")


class Command(unittest.TestCase):
    def run_main(self, *argv):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(sass_mix.main(list(argv)), 0)
        return out.getvalue()

    def test_table_compare_and_filter(self):
        with tempfile.TemporaryDirectory() as d:
            a, b = os.path.join(d, "a.sass"), os.path.join(d, "b.sass")
            open(a, "w").write(NVDISASM_TEXT)
            open(b, "w").write(CUOBJDUMP_TEXT)
            table = self.run_main(a, "--kernel", "_v8$")
            self.assertIn("jf_k0_add_v8", table)
            self.assertNotIn("jf_k0_add_p8", table)
            # v8: 4 instructions in a, 5 in b (one fp16 conversion -> two fp32).
            cmp = self.run_main(a, "--compare", b)
            self.assertIn("4 -> 5 (+1)", cmp)
            self.assertIn("in one input only: jf_k0_add_p8", cmp)

    def test_no_kernel_is_an_error(self):
        with tempfile.TemporaryDirectory() as d:
            empty = os.path.join(d, "x.sass")
            open(empty, "w").write("nothing here\n")
            with self.assertRaises(SystemExit) as e:
                sass_mix.main([empty])
            self.assertIn("no kernel found", str(e.exception.code))


if __name__ == "__main__":
    unittest.main()
