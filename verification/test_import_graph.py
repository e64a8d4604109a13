"""Tests of import_graph.py on small crates written to a temporary folder.

    python3 -m unittest discover -s verification -p 'test_import_graph.py'
"""

import contextlib
import os
import tempfile
import textwrap
import unittest
from pathlib import Path

import import_graph as ig


class Tree:
    """A crate folder with `src/` files given as {path: text}."""

    def __init__(self, files: dict[str, str]):
        self._tmp = tempfile.TemporaryDirectory()
        self.root = Path(self._tmp.name)
        (self.root / "Cargo.toml").write_text('[package]\nname = "demo"\n')
        for path, text in files.items():
            f = self.root / "src" / path
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(textwrap.dedent(text))

    def report(self) -> ig.Report:
        return ig.analyse(self.root, "demo")

    def edges(self) -> set[tuple[str, str]]:
        r = self.report()
        src = self.root / "src"
        return {(str(a.relative_to(src)), str(b.relative_to(src))) for a, bs in r.edges.items() for b in bs}

    def circles(self) -> list[list[str]]:
        src = self.root / "src"
        return [[str(f.relative_to(src)) for f in c] for c in self.report().circles]

    def close(self):
        self._tmp.cleanup()


class Tokens(unittest.TestCase):
    def test_comments_strings_and_lifetimes_are_not_code(self):
        text = """
        // use crate::a::X;
        /// [`Y`](crate::b::Y)
        /* crate::c /* nested */ crate::d */
        fn f<'a>(s: &'a str) -> char { let _ = "crate::e"; let _ = r#"crate::f"#; 'x' }
        """
        tokens = ig.tokenize(text)
        self.assertNotIn("crate", tokens)
        self.assertIn("fn", tokens)

    def test_use_groups_expand(self):
        tokens = ig.tokenize("use crate::{a::{self, X}, b::Y as Z, c::*};")
        out = []
        ig.use_tree(tokens, 1, [], out)
        self.assertEqual(
            out,
            [(["crate", "a"], "a"), (["crate", "a", "X"], "X"), (["crate", "b", "Y"], "Z"), (["crate", "c"], "*")],
        )

    def test_cfg_test_and_doc_exclude_but_not_test_keeps(self):
        self.assertTrue(ig.cfg_excludes(ig.tokenize("cfg(test)")))
        self.assertTrue(ig.cfg_excludes(ig.tokenize("cfg(all(test, not(loom)))")))
        self.assertTrue(ig.cfg_excludes(ig.tokenize("cfg(doc)")))
        self.assertFalse(ig.cfg_excludes(ig.tokenize("cfg(not(test))")))
        self.assertFalse(ig.cfg_excludes(ig.tokenize('cfg(feature = "std")')))


class Graph(unittest.TestCase):
    def setUp(self):
        self.trees = []

    def tearDown(self):
        for t in self.trees:
            t.close()

    def make(self, files):
        t = Tree(files)
        self.trees.append(t)
        return t

    def test_a_circle_through_use_and_a_path_in_code(self):
        t = self.make(
            {
                "lib.rs": "mod a;\nmod b;\nmod c;\n",
                "a.rs": "use crate::b::B;\npub struct A;\n",
                "b.rs": "pub struct B(crate::c::C);\n",
                "c.rs": "pub struct C;\nfn f() -> super::a::A { todo!() }\n",
            }
        )
        self.assertEqual(t.circles(), [["a.rs", "b.rs", "c.rs"]])

    def test_layers_that_look_down_are_no_circle(self):
        t = self.make(
            {
                "lib.rs": "mod low;\nmod high;\npub use high::H;\npub use low::L;\n",
                "low.rs": "pub struct L;\n",
                "high.rs": "use crate::L;\npub struct H(L);\n",
            }
        )
        # `crate::L` is lib.rs's re-export: the edge goes to the file that
        # defines `L`, not to lib.rs.
        self.assertEqual(t.edges(), {("high.rs", "low.rs")})
        self.assertEqual(t.circles(), [])

    def test_containment_is_not_a_circle(self):
        t = self.make(
            {
                "lib.rs": "pub mod clock;\n",
                "clock.rs": "mod fake;\npub use fake::Fake;\npub trait Clock {}\n",
                "clock/fake.rs": "use super::Clock;\npub struct Fake;\nimpl Clock for Fake {}\n",
            }
        )
        self.assertEqual(t.edges(), {("clock/fake.rs", "clock.rs")})
        self.assertEqual(t.circles(), [])

    def test_a_parent_importing_from_its_child_is_a_circle(self):
        t = self.make(
            {
                "lib.rs": "pub mod reg;\n",
                "reg/mod.rs": "mod settings;\nuse settings::Settings;\npub struct Reg(Settings);\n",
                "reg/settings.rs": "use super::Reg;\npub struct Settings;\nfn f(_: Reg) {}\n",
            }
        )
        self.assertEqual(t.circles(), [["reg/mod.rs", "reg/settings.rs"]])

    def test_test_code_is_left_out(self):
        t = self.make(
            {
                "lib.rs": "mod a;\nmod b;\n#[cfg(test)]\nmod tests;\n",
                "a.rs": "use crate::b::B;\npub struct A;\n#[cfg(test)]\nmod tests {\n    use crate::b::B;\n}\n",
                "b.rs": (
                    "pub struct B;\n"
                    "#[cfg(test)]\nuse crate::a::A;\n"
                    "#[cfg(test)]\nfn helper() -> crate::a::A { crate::a::A }\n"
                    "#[cfg(test)]\nmod tests;\n"
                ),
                "b/tests.rs": "use crate::a::A;\n",
                "tests.rs": "use crate::a::A;\n",
            }
        )
        self.assertEqual(t.edges(), {("a.rs", "b.rs")})
        self.assertEqual(t.circles(), [])
        self.assertEqual(sorted(f.name for f in t.report().files), ["a.rs", "b.rs", "lib.rs"])

    def test_inline_modules_resolve_super_from_where_they_are(self):
        t = self.make(
            {
                "lib.rs": "mod word;\nmod cell;\n",
                "word.rs": "pub trait Word {}\npub(crate) mod store {\n    use super::Word;\n    pub trait Cell<W: Word> {}\n}\n",
                "cell.rs": "pub use crate::word::store::Cell;\nuse crate::word::Word;\n",
            }
        )
        self.assertEqual(t.edges(), {("cell.rs", "word.rs")})

    def test_glob_reexport_followed_to_the_defining_file(self):
        t = self.make(
            {
                "lib.rs": "mod inner;\nmod user;\npub use inner::*;\n",
                "inner.rs": "pub struct Thing;\n",
                "user.rs": "use crate::Thing;\n",
            }
        )
        self.assertEqual(t.edges(), {("user.rs", "inner.rs")})

    def test_deny_fails_on_a_circle_and_reports_long_files(self):
        t = self.make(
            {
                "lib.rs": "mod a;\nmod b;\n",
                "a.rs": "use crate::b::B;\npub struct A;\n" + "// filler\n" * 801,
                "b.rs": "use crate::a::A;\npub struct B;\n",
            }
        )
        r = t.report()
        self.assertEqual(len(r.circles), 1)
        self.assertEqual([f.name for f, _ in r.long_files], ["a.rs"])
        self.assertEqual(r.longest[0].name, "a.rs")
        root = str(t.root.parent)
        name = t.root.name
        with open(os.devnull, "w") as devnull:
            with contextlib.redirect_stdout(devnull), contextlib.redirect_stderr(devnull):
                self.assertEqual(ig.main(["--root", root, name]), 0)
                self.assertEqual(ig.main(["--root", root, "--deny", name, name]), 1)


if __name__ == "__main__":
    unittest.main()
