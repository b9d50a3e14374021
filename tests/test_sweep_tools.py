#!/usr/bin/env python3
"""The shape sweep's Python side without a GPU: the torch.compile order
(bench/sweep_points.py), the report's counts and same-call change table
(bench/sweep_report.py), the plan diff (bench/plan_diff.py) and the
offsets-and-odd-rows table (bench/odd_rows_table.py).
Run by CTest: python3 tests/test_sweep_tools.py"""

import json
import os
import sys
import tempfile
import unittest

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench")
sys.path.insert(0, BENCH)

import odd_rows_table  # noqa: E402
import plan_diff  # noqa: E402
import sweep_points  # noqa: E402
import sweep_report  # noqa: E402


def point(pattern, dtype, h, rows, offset=0):
    return {"id": f"{pattern}/{dtype}/H{h}/R{rows}/o{offset}", "pattern": pattern, "H": h,
            "rows": rows, "offset": offset, "dtype": dtype}


class CompileOrder(unittest.TestCase):
    def test_bytes_by_hand(self):
        # add + RMSNorm bf16 [4, 8]: x, residual, w (8) in; r, y out.
        self.assertEqual(sweep_points.point_bytes(point("add_rmsnorm", "bf16", 8, 4)),
                         (32 + 32 + 8 + 32 + 32) * 2)
        # sum/amax f32 [3, 5]: x in, two [3] out.
        self.assertEqual(sweep_points.point_bytes(point("sum_abs_amax", "f32", 5, 3)),
                         (15 + 3 + 3) * 4)
        # column sum bf16 [7, 5]: x in, one [5] out.
        self.assertEqual(sweep_points.point_bytes(point("col_sum", "bf16", 5, 7)),
                         (35 + 5) * 2)
        # LayerNorm backward bf16 [3, 5]: x, dy (15 each), w (5) bf16, mean
        # and rstd (3 each) f32 in; dx (15) bf16, dw and db (5 each) f32 out.
        self.assertEqual(sweep_points.point_bytes(point("layernorm_bwd", "bf16", 5, 3)),
                         (15 + 15 + 5 + 15) * 2 + (3 + 3 + 5 + 5) * 4)
        # RMSNorm backward f16 [3, 5]: no mean, no db.
        self.assertEqual(sweep_points.point_bytes(point("rmsnorm_bwd", "f16", 5, 3)),
                         (15 + 15 + 5 + 15) * 2 + (3 + 5) * 4)
        self.assertEqual(sweep_points.dtypes("rmsnorm_bwd", "bf16"),
                         (["bf16", "bf16", "bf16", "f32"], ["bf16", "f32"]))
        self.assertEqual(sweep_points.dtypes("softmax", "f16"), (["f16"], ["f16"]))

    def test_big_points_first_then_bf16(self):
        small_bf16 = point("softmax", "bf16", 4096, 8)            # 128 KB
        big_f32 = point("layernorm", "f32", 32064, 2092)          # 537 MB
        big_bf16 = point("add_rmsnorm", "bf16", 32064, 4185)      # 1 GB
        small_f32 = point("rope", "f32", 4096, 1)
        order = sweep_points.compile_order([small_bf16, small_f32, big_f32, big_bf16])
        self.assertEqual([p["id"] for p in order],
                         [big_bf16["id"], big_f32["id"], small_bf16["id"], small_f32["id"]])

    def test_round_robin_within_a_group(self):
        pts = [point("softmax", "bf16", 32064, 4185 + i) for i in range(3)]
        pts += [point("layernorm", "bf16", 32064, 4185 + i) for i in range(2)]
        order = [p["pattern"] for p in sweep_points.compile_order(pts)]
        self.assertEqual(order, ["layernorm", "softmax", "layernorm", "softmax", "softmax"])


def write_jsonl(d, name, recs):
    """Writes recs, one JSON object a line to d/name; returns the path."""
    path = os.path.join(d, name)
    with open(path, "w") as f:
        for r in recs:
            f.write(json.dumps(r) + "\n")
    return path


class Report(unittest.TestCase):
    def test_ratio_min_and_points_without_compile(self):
        a = point("softmax", "bf16", 32064, 4185)
        b = point("softmax", "bf16", 32064, 4186)
        with tempfile.TemporaryDirectory() as d:
            jf = write_jsonl(d, "jf.jsonl", [dict(a, us=100.0, bytes=1 << 30, status="ok"),
                                            dict(b, us=100.0, bytes=1 << 30, status="ok")])
            # a: eager 150, compile 80 -> 0.80x vs compile; b: eager only.
            tr = write_jsonl(d, "tr.jsonl", [{"id": a["id"], "eager_us": 150.0},
                                            {"id": a["id"], "compile_us": 80.0},
                                            {"id": b["id"], "eager_us": 120.0},
                                            {"id": b["id"], "compile_skipped": "budget"}])
            md = os.path.join(d, "t.md")
            sweep_report.main(["--jitfuse", jf, "--torch", tr, "--md", md])
            with open(md) as f:
                text = f.read()
        row = [l for l in text.splitlines() if l.startswith("| softmax |")][0]
        cells = [c.strip() for c in row.strip("|").split("|")]
        self.assertEqual(cells[1], "2")        # points with a ratio
        self.assertEqual(cells[2], "0.80x")    # min, against torch.compile
        self.assertIn("vs compile", cells[3])
        self.assertEqual(cells[6], "1")        # >= 64 MB points below 1.0x
        self.assertEqual(cells[7], "1")        # points without torch.compile

    def test_points_against_the_copy_of_their_size(self):
        a = point("softmax", "bf16", 32064, 4185)       # 1 GB: 80 us copy / 100 us = 80%
        b = point("softmax", "bf16", 32064, 4186)       # 1 GB: 90 / 100 = 90%
        c = point("softmax", "bf16", 4096, 8)           # small: not judged
        d_ = point("layernorm", "f32", 4096, 16384)     # no copy time: not judged
        with tempfile.TemporaryDirectory() as d:
            jf = write_jsonl(d, "jf.jsonl", [
                dict(a, us=100.0, copy_us=80.0, bytes=1 << 30, status="ok"),
                dict(b, us=100.0, copy_us=90.0, bytes=1 << 30, status="ok"),
                dict(c, us=10.0, copy_us=2.0, bytes=1 << 20, status="ok"),
                dict(d_, us=100.0, bytes=1 << 30, status="ok")])
            tr = write_jsonl(d, "tr.jsonl", [{"id": a["id"], "eager_us": 120.0}])
            md = os.path.join(d, "t.md")
            sweep_report.main(["--jitfuse", jf, "--torch", tr, "--md", md])
            with open(md) as f:
                text = f.read()
        rows = [l for l in text.splitlines() if l.startswith("| softmax | 2 |")]
        self.assertEqual(len(rows), 1, text)
        cells = [c.strip() for c in rows[0].strip("|").split("|")]
        self.assertEqual(cells[2], "80%")
        self.assertEqual(cells[3], "bf16 4185x32064 +0B")
        self.assertEqual(cells[4], "1")
        self.assertNotIn("| layernorm | 1 |", text)
        self.assertIn("- softmax bf16 4185x32064 +0B: 100.0 us, copy 80.0 us (80%, 1.20x best peer)",
                      text)
        self.assertNotIn("4186x32064 +0B: 100.0", text)

    def test_best_of_repeated_runs_on_both_sides(self):
        a = point("silu_mul", "f32", 4096, 16384)
        with tempfile.TemporaryDirectory() as d:
            r1 = write_jsonl(d, "r1.jsonl", [dict(a, us=99.0, bytes=1 << 30, status="ok")])
            r2 = write_jsonl(d, "r2.jsonl", [dict(a, us=101.0, bytes=1 << 30, status="ok")])
            tr = write_jsonl(d, "tr.jsonl", [{"id": a["id"], "compile_us": 100.0}])
            md = os.path.join(d, "t.md")
            sweep_report.main(["--jitfuse", r1, r2, "--torch", tr, "--md", md])
            with open(md) as f:
                latest = f.read()
            sweep_report.main(["--jitfuse", r1, r2, "--torch", tr, "--jitfuse-best", "--md", md])
            with open(md) as f:
                best = f.read()
        cell = lambda t: [c.strip() for c in [l for l in t.splitlines()
                                              if l.startswith("| silu_mul |")][0].strip("|").split("|")][2]
        self.assertEqual(cell(latest), "0.99x")  # the later file's 101 us
        self.assertEqual(cell(best), "1.01x")    # the faster run's 99 us

    def test_latest_file_wins_and_change_against_a_baseline(self):
        a = point("rope", "bf16", 6144, 16384)
        b = point("rope", "bf16", 6144, 16384, offset=2)
        c = point("softmax", "f32", 4096, 8)
        with tempfile.TemporaryDirectory() as d:
            old = write_jsonl(d, "old.jsonl", [dict(a, us=140.0), dict(b, us=290.0),
                                              dict(c, us=10.0)])
            first = write_jsonl(d, "jf1.jsonl", [dict(a, us=999.0, bytes=1 << 30),
                                                dict(b, us=250.0, bytes=1 << 30),
                                                dict(c, us=12.5, bytes=1 << 10)])
            # A later run of a alone: its time replaces the first file's.
            later = write_jsonl(d, "jf2.jsonl", [dict(a, us=100.0, bytes=1 << 30)])
            # The peer keeps its fastest time over the files: 110, not 130.
            tr = write_jsonl(d, "tr.jsonl", [{"id": a["id"], "compile_us": 110.0}])
            tr2 = write_jsonl(d, "tr2.jsonl", [{"id": a["id"], "compile_us": 130.0}])
            md = os.path.join(d, "t.md")
            sweep_report.main(["--jitfuse", first, later, "--torch", tr, tr2, "--baseline", old,
                               "--md", md])
            with open(md) as f:
                text = f.read()
        summary_part, change_part = text.split("Change against the baseline")
        rope = [l for l in summary_part.splitlines() if l.startswith("| rope |")]
        # Summary: a at 100 us against torch.compile's 110 -> 1.10x.
        self.assertIn("| 1.10x |", rope[0])
        # Change: a 140 -> 100 (1.40x), b 290 -> 250 (1.16x): median 1.28x.
        row = [l for l in change_part.splitlines() if l.startswith("| rope |")][0]
        cells = [x.strip() for x in row.strip("|").split("|")]
        self.assertEqual(cells[1:4], ["2", "1.28x", "1.16x"])
        self.assertEqual(cells[4], b["id"])
        self.assertEqual(cells[5], "1.40x")
        # The largest slowdown first: softmax 10 -> 12.5 us, 0.80x.
        self.assertIn(f"- {c['id']}: 10.0 -> 12.5 us (0.80x)", text)

    def test_change_alone_without_torch(self):
        # An A/B of two jitfuse runs (bench/run_ab.sh): no peer file, only
        # the change table; without either, an error.
        a = point("layernorm", "bf16", 32064, 4185, offset=2)
        with tempfile.TemporaryDirectory() as d:
            base = write_jsonl(d, "a.jsonl", [dict(a, us=232.0)])
            new = write_jsonl(d, "b.jsonl", [dict(a, us=200.0)])
            md = os.path.join(d, "t.md")
            sweep_report.main(["--jitfuse", new, "--baseline", base, "--md", md])
            with open(md) as f:
                text = f.read()
            with self.assertRaises(SystemExit):
                sweep_report.main(["--jitfuse", new])
        self.assertNotIn("| pattern | points | min", text.split("Change against")[0])
        row = [l for l in text.splitlines() if l.startswith("| layernorm |")][0]
        self.assertIn("| 1 | 1.16x |", row)

    def test_change_lists_speedups_with_registers(self):
        # Each listed point names its variants' registers before -> after
        # (those both runs compiled; spills when there are any), by the
        # suffix after the names' shared prefix; speedups get their list.
        def var(name, regs, spill=0):
            return {"name": name, "threads": 128, "registers": regs, "stack_bytes": 0,
                    "spill_bytes": spill}
        a = point("layernorm", "bf16", 4999, 16384)
        c = point("layernorm", "bf16", 1021, 16384, offset=2)
        with tempfile.TemporaryDirectory() as d:
            base = write_jsonl(d, "a.jsonl", [
                dict(a, us=100.8, variants=[var("jf_k0_cast_p8", 84), var("jf_k0_cast_o8", 94),
                                            var("jf_k0_cast_t256_p8", 64)]),
                dict(c, us=24.8, variants=[var("jf_k0_cast_p8", 72)])])
            new = write_jsonl(d, "b.jsonl", [
                dict(a, us=93.3, variants=[var("jf_k0_cast_p8", 56), var("jf_k0_cast_o8", 52)]),
                dict(c, us=28.0, variants=[var("jf_k0_cast_p8", 52, spill=8)])])
            md = os.path.join(d, "t.md")
            sweep_report.main(["--jitfuse", new, "--baseline", base, "--md", md])
            with open(md) as f:
                text = f.read()
        slow, fast = text.split("Largest speedups:")
        self.assertIn(f"- {c['id']}: 24.8 -> 28.0 us (0.89x; registers p8 72->52 "
                      "(spills 0->8 B))", slow)
        self.assertIn(f"- {a['id']}: 100.8 -> 93.3 us (1.08x; registers p8 84->56, o8 94->52)",
                      fast)
        self.assertNotIn(c["id"], fast)
        self.assertNotIn(a["id"], slow.split("Largest slowdowns:")[1])


class PlanDiff(unittest.TestCase):
    """bench/plan_diff.py: points whose programs differ, by cache key."""

    def compiled(self, pid, key, variants, status="compiled only"):
        return {"id": pid, "cache_key": key, "status": status,
                "variants": [{"name": n, "registers": r, "spill_bytes": s}
                             for n, r, s in variants]}

    def test_changed_points_and_their_variants(self):
        same = self.compiled("softmax/f32/H7/R3/o0", "k1", [("jf_k0_div_v4", 32, 0)])
        a_split = self.compiled("add_rmsnorm/f32/H9/R5/o0", "k2",
                                [("jf_k0_add_v4", 32, 0), ("jf_k0_add_ac8_v4", 90, 0)])
        b_split = self.compiled("add_rmsnorm/f32/H9/R5/o0", "k3",
                                [("jf_k0_add_v4", 32, 0), ("jf_k0_add_ac8_v4", 58, 0),
                                 ("jf_k0_add_ac8_p4", 64, 8)])
        # Other code, the same variants and registers: still a change.
        a_code = self.compiled("layernorm/f32/H9/R5/o0", "k4", [("jf_k0_x_v4", 40, 0)])
        b_code = self.compiled("layernorm/f32/H9/R5/o0", "k5", [("jf_k0_x_v4", 40, 0)])
        with tempfile.TemporaryDirectory() as d:
            a = plan_diff.load(write_jsonl(d, "a.jsonl", [same, a_split, a_code]))
            b = plan_diff.load(write_jsonl(d, "b.jsonl", [same, b_split, b_code]))
        changed, errors = plan_diff.diff(a, b)
        self.assertEqual(errors, [])
        self.assertEqual([pid for pid, _ in changed],
                         ["add_rmsnorm/f32/H9/R5/o0", "layernorm/f32/H9/R5/o0"])
        self.assertEqual(changed[0][1], [("jf_k0_add_ac8_p4", None, (64, 8)),
                                         ("jf_k0_add_ac8_v4", (90, 0), (58, 0))])
        self.assertEqual(changed[1][1], [])
        text = plan_diff.report(a, b, changed, errors)
        self.assertIn("2 of 3 points compile differently in B.", text)
        self.assertIn("| add_rmsnorm/f32/H9/R5/o0 | jf_k0_add_ac8_p4 | - | 64 (8 B spilled) |",
                      text)
        self.assertIn("| add_rmsnorm/f32/H9/R5/o0 | jf_k0_add_ac8_v4 | 90 | 58 |", text)
        self.assertIn("| layernorm/f32/H9/R5/o0 | (same variants, other code) | | |", text)
        self.assertNotIn("softmax", text)

    def test_errors_and_mismatched_runs(self):
        ok = self.compiled("softmax/f32/H7/R3/o0", "k1", [])
        bad = dict(ok, status="error", error="NVRTC: boom\nmore")
        with tempfile.TemporaryDirectory() as d:
            a_path = write_jsonl(d, "a.jsonl", [ok])
            b_path = write_jsonl(d, "b.jsonl", [bad])
            changed, errors = plan_diff.diff(plan_diff.load(a_path), plan_diff.load(b_path))
            self.assertEqual((changed, errors), ([], ["softmax/f32/H7/R3/o0"]))
            text = plan_diff.report(plan_diff.load(a_path), plan_diff.load(b_path), changed,
                                    errors)
            self.assertIn("error: softmax/f32/H7/R3/o0: NVRTC: boom", text)
            other = write_jsonl(d, "c.jsonl", [self.compiled("softmax/f32/H8/R3/o0", "k", [])])
            self.assertEqual(plan_diff.main([a_path, other]), 2)
            broken = os.path.join(d, "d.jsonl")
            with open(broken, "w") as f:
                f.write("{not json\n")
            self.assertEqual(plan_diff.main([a_path, broken]), 2)


class OddRows(unittest.TestCase):
    """bench/odd_rows_table.py: each shape's bandwidth over its aligned 4096."""

    def timed(self, pid, gbs, status="ok"):
        return {"id": pid, "gbs": gbs, "status": status}

    def test_ratios_by_hand_and_the_target(self):
        pts = [self.timed("softmax/bf16/H4096/R16384/o0", 4000.0),
               self.timed("softmax/bf16/H4096/R16384/o2", 3000.0),   # 0.75: short
               self.timed("softmax/bf16/H4095/R16384/o0", 3880.0),   # 0.97
               # f32 rows of 4999 come at 13424 rows (the 256 MiB cap).
               self.timed("softmax/f32/H4096/R16384/o0", 4000.0),
               self.timed("softmax/f32/H4096/R16384/o4", 4100.0),
               self.timed("softmax/f32/H4999/R13424/o0", 3760.0),    # 0.94: short
               # No aligned point: no row; a failed point: "-".
               self.timed("rope/f16/H4096/R16384/o2", 1000.0),
               self.timed("silu_mul/f16/H4096/R16384/o0", 4000.0),
               self.timed("silu_mul/f16/H4095/R16384/o0", 1.0, status="error")]
        with tempfile.TemporaryDirectory() as d:
            first = write_jsonl(d, "a.jsonl", pts)
            # A later file wins for the same point.
            later = write_jsonl(d, "b.jsonl", [self.timed("softmax/bf16/H4096/R16384/o2",
                                                          3900.0)])
            rows = odd_rows_table.rows_of(sweep_report.read_all([first]))
            again = odd_rows_table.rows_of(sweep_report.read_all([first, later]))
        self.assertEqual([(p, dt) for p, dt, _, _ in rows],
                         [("softmax", "bf16"), ("softmax", "f32"), ("silu_mul", "f16")])
        self.assertEqual(rows[0][3][0], 0.75)
        self.assertAlmostEqual(rows[0][3][1], 0.97)
        self.assertIsNone(rows[0][3][2])
        self.assertAlmostEqual(rows[1][3][0], 1.025)
        self.assertAlmostEqual(rows[1][3][2], 0.94)
        self.assertEqual(rows[2][3], [None, None, None])
        self.assertAlmostEqual(again[0][3][0], 0.975)
        text = odd_rows_table.markdown(rows)
        self.assertIn("| softmax | bf16 | 4000 | **0.75** | 0.97 | - |", text)
        self.assertIn("| softmax | f32 | 4000 | 1.02 | - | **0.94** |", text)
        self.assertIn("2 ratios under 0.95 (bold).", text)


if __name__ == "__main__":
    unittest.main()
