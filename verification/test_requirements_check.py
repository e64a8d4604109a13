"""Tests of requirements_check.py on small repositories written to a temporary folder.

    python3 -m unittest discover -s verification -p 'test_requirements_check.py'
"""

import contextlib
import io
import tempfile
import textwrap
import unittest
from pathlib import Path

import requirements_check as rc

SPEC = """
# contract

## Invariants

- **I1 single probe** (`acquire`). Exactly one probe.
- **I2 stale rejection**. A stale release changes nothing.

## Registries

- **R1. Making room forgets nothing.** Only blank breakers go.
"""

PROOFS = """
**Properties**

- (a) *one probe per open period:* no counter is elected twice.
"""

TECHNIQUES = """
## Techniques

| technique | what it is | where it runs |
|---|---|---|
| unit | a test | stage 30 |
| loom | interleavings | stage 55 |
| Miri | undefined behaviour | stage 60 |
| fuzz | a target | stage 75 |
"""

HEADER = """
## Invariants

| id | invariant | tests | techniques | gap |
|---|---|---|---|---|
"""

ROWS = {
    "I1": "| **I1** | single probe | `core/src/tests.rs :: one_probe` [unit, Miri]<br>`verification/tests/loom.rs :: i1_loom` [loom]"
    "<br>`fuzz/src/run.rs :: run` [fuzz] | unit, Miri, loom, fuzz | — |",
    "I2": "| **I2** | stale | `core/src/tests.rs :: stale_is_stale` [unit, Miri]<br>`verification/tests/loom.rs :: i2_loom` [loom] "
    "| unit, Miri, loom | — |",
    "R1": "| **R1** | room | `std/tests/registry.rs :: keeps_knowledge` [unit] | unit | gap: no threads, no model yet |",
    "fleet (a)": "| **fleet (a)** | one probe | `verification/tests/fleet_model :: holds` [unit]<br>"
    "`verification/tests/loom.rs :: i1_loom` [loom]<br>`fuzz/src/run.rs :: run` [fuzz] | unit, loom, fuzz | — |",
}

SOURCES = {
    "core/src/tests.rs": """
        #[test]
        fn one_probe() {}

        #[test]
        #[cfg_attr(
            miri,
            ignore = "slow"
        )]
        fn slow_under_miri() {}

        #[test]
        fn stale_is_stale<W: Word>() {}
    """,
    "verification/tests/loom.rs": "#[test]\nfn i1_loom() {}\n#[test]\nfn i2_loom() {}\n",
    "fuzz/src/run.rs": "pub fn run(data: &[u8]) {}\n",
    "std/tests/registry.rs": "#[test]\nfn keeps_knowledge() {}\n",
    "verification/tests/fleet_model/main.rs": "mod model;\n#[test]\nfn holds() {}\n",
    "verification/tests/fleet_model/model.rs": "fn step() {}\n",
}


class Repo:
    """A repository with a spec, a fleet page, sources and a requirements page."""

    def __init__(self, rows=None, spec=SPEC, sources=None):
        self._tmp = tempfile.TemporaryDirectory()
        self.root = Path(self._tmp.name)
        self.write("docs/spec.md", spec)
        self.write("docs/distributed-proofs.md", PROOFS)
        for path, text in (SOURCES if sources is None else sources).items():
            self.write(path, textwrap.dedent(text))
        self.set_rows(ROWS if rows is None else rows)

    def write(self, path: str, text: str):
        f = self.root / path
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)

    def set_rows(self, rows: dict[str, str]):
        self.write("docs/requirements.md", "# Requirements\n" + TECHNIQUES + HEADER + "\n".join(rows.values()) + "\n")

    def problems(self) -> list[str]:
        return rc.check(self.root).problems

    def close(self):
        self._tmp.cleanup()


class Check(unittest.TestCase):
    def setUp(self):
        self.repos = []

    def tearDown(self):
        for r in self.repos:
            r.close()

    def repo(self, **kw) -> Repo:
        r = Repo(**kw)
        self.repos.append(r)
        return r

    def assertProblem(self, problems: list[str], *parts: str):
        self.assertTrue(
            any(all(p in line for p in parts) for line in problems),
            f"no problem naming {parts} in {problems}",
        )

    def test_a_complete_page_passes_and_main_exits_0(self):
        r = self.repo()
        self.assertEqual(r.problems(), [])
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(rc.main(["--root", str(r.root)]), 0)
        last = out.getvalue().strip().splitlines()[-1]
        self.assertIn("4 invariants", last)
        self.assertIn("4 techniques", last)
        self.assertTrue(last.endswith(": ok"), last)

    def test_ids_come_from_bold_items_mentions_and_the_fleet_properties(self):
        r = self.repo()
        r.write("docs/spec.md", SPEC + "\nA later rule, I11, is new.\n")
        self.assertEqual(rc.invariant_ids(r.root), ["I1", "I2", "I11", "R1", "fleet (a)"])

    def test_a_planted_missing_test_fails_with_exit_1(self):
        r = self.repo()
        r.write("verification/tests/loom.rs", "#[test]\nfn i1_loom() {}\n")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(rc.main(["--root", str(r.root)]), 1)
        self.assertIn("FAIL", out.getvalue())
        self.assertIn("`fn i2_loom` is not in verification/tests/loom.rs", out.getvalue())
        self.assertIn("1 problem(s)", out.getvalue().strip().splitlines()[-1])

    def test_a_gone_file_fails(self):
        r = self.repo()
        (r.root / "fuzz/src/run.rs").unlink()
        self.assertProblem(r.problems(), "I1", "cited file fuzz/src/run.rs is gone")

    def test_a_new_invariant_without_a_row_fails(self):
        r = self.repo()
        r.write("docs/spec.md", SPEC + "- **I3 several probes**. At most n probes in half-open.\n")
        self.assertProblem(r.problems(), "I3: no row")

    def test_a_mention_of_a_new_id_in_prose_needs_a_row(self):
        r = self.repo()
        r.write("docs/spec.md", SPEC + "\nThe ramp keeps I12 as well.\n")
        self.assertProblem(r.problems(), "I12: no row")

    def test_a_new_fleet_property_without_a_row_fails(self):
        r = self.repo()
        r.write("docs/distributed-proofs.md", PROOFS + "- (b) *no stale release changes the word:* ...\n")
        self.assertProblem(r.problems(), "fleet (b): no row")

    def test_a_row_for_no_invariant_fails(self):
        rows = dict(ROWS)
        rows["I9"] = ROWS["I2"].replace("**I2**", "**I9**")
        self.assertProblem(self.repo(rows=rows).problems(), "I9", "names no invariant")

    def test_a_row_that_lost_its_last_test_fails(self):
        r = self.repo()
        r.write("std/tests/registry.rs", "fn something_else() {}\n")
        self.assertProblem(r.problems(), "R1", "lost its last test")

    def test_fewer_than_three_techniques_need_a_gap_with_a_reason(self):
        rows = dict(ROWS)
        rows["R1"] = ROWS["R1"].replace("gap: no threads, no model yet", "—")
        self.assertProblem(self.repo(rows=rows).problems(), "R1", "fewer than 3", "gap")
        rows["R1"] = ROWS["R1"].replace("gap: no threads, no model yet", "gap:")
        self.assertProblem(self.repo(rows=rows).problems(), "R1", "fewer than 3")

    def test_the_techniques_cell_is_the_union_of_the_citations(self):
        rows = dict(ROWS)
        rows["I2"] = ROWS["I2"].replace("| unit, Miri, loom |", "| unit, Miri, loom, fuzz |")
        self.assertProblem(self.repo(rows=rows).problems(), "I2", '"fuzz" is claimed but no cited test uses it')
        rows["I2"] = ROWS["I2"].replace("| unit, Miri, loom |", "| unit, loom, fuzz |")
        problems = self.repo(rows=rows).problems()
        self.assertProblem(problems, "I2", '"Miri" of a cited test is missing')

    def test_an_unknown_technique_fails(self):
        rows = dict(ROWS)
        rows["I1"] = ROWS["I1"].replace("[fuzz] | unit, Miri, loom, fuzz", "[fuzzing] | unit, Miri, loom, fuzzing")
        self.assertProblem(self.repo(rows=rows).problems(), "I1", '"fuzzing"', "not in the technique table")

    def test_a_test_ignored_under_miri_cannot_be_tagged_miri(self):
        rows = dict(ROWS)
        rows["I2"] = ROWS["I2"].replace("stale_is_stale", "slow_under_miri")
        self.assertProblem(self.repo(rows=rows).problems(), "I2", "slow_under_miri is tagged Miri but ignored")

    def test_a_target_cited_without_rs_is_its_file_or_its_folder(self):
        r = self.repo()
        self.assertEqual(r.problems(), [])
        for f in ("main.rs", "model.rs"):
            (r.root / "verification/tests/fleet_model" / f).unlink()
        (r.root / "verification/tests/fleet_model").rmdir()
        r.write("verification/tests/fleet_model.rs", "#[test]\nfn holds() {}\n")
        self.assertEqual(r.problems(), [])
        (r.root / "verification/tests/fleet_model.rs").unlink()
        self.assertProblem(r.problems(), "fleet (a)", "verification/tests/fleet_model is gone")

    def test_a_second_row_for_one_id_fails(self):
        rows = dict(ROWS)
        rows["I2 again"] = ROWS["I2"]
        self.assertProblem(self.repo(rows=rows).problems(), "a second row for I2")


if __name__ == "__main__":
    unittest.main()
