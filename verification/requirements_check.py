"""Check that docs/requirements.md still maps every invariant to tests that exist.

    python3 -B verification/requirements_check.py [--root DIR]

The invariants are read from the contract and the fleet's pages:

- `docs/spec.md` and `docs/distributed*.md`: a list item that opens with a
  bold id, `- **I1 single probe**` or `- **R1. Making room ...**`. Its
  letter is a family; every other mention of that family in `docs/spec.md`
  (`I11` in a new paragraph) is an invariant too.
- `docs/distributed-proofs.md`: the fleet model's properties, list items
  `- (a) *one probe per open period:* ...`, as ids `fleet (a)`.

`docs/requirements.md` has one table row per invariant:

    | id | invariant | tests | techniques | gap |

where the tests cell lists, separated by `<br>`, citations
`` `path :: test_name` [technique, technique] `` (a path without `.rs` is a
test target or module: its file or its folder), and the techniques cell
is the comma-separated union of those brackets, each technique one of the
page's technique table (its first column). The check fails, naming the
reason, when an invariant has no row, a row names no invariant, a cited
file or `fn test_name` in it is gone, a row has no test left, the
techniques cell is not the union of its citations' techniques, or a row
has fewer than three techniques and its gap cell does not say
`gap: <reason>`, or a test tagged `Miri` is ignored under Miri. It prints
one summary line, last.
"""

import argparse
import functools
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

SPEC = "docs/spec.md"
FLEET_GLOB = "distributed*.md"
FLEET_PROPERTIES = "docs/distributed-proofs.md"
REQUIREMENTS = "docs/requirements.md"
MIN_TECHNIQUES = 3

BOLD_ID = re.compile(r"^\s*[-*]\s+\*\*([A-Z])([0-9]+)\b")
FLEET_PROPERTY = re.compile(r"^\s*[-*]\s+\(([a-z])\)\s+\*")
CITATION = re.compile(r"`([^`\s]+)\s*::\s*([A-Za-z_][A-Za-z0-9_]*)`\s*\[([^\]]*)\]")
BOLD = re.compile(r"\*\*(.+?)\*\*")


@dataclass
class Row:
    """One invariant's row of docs/requirements.md."""

    id: str
    line: int
    citations: list[tuple[str, str, list[str]]] = field(default_factory=list)
    techniques: list[str] = field(default_factory=list)
    gap: str = ""


@dataclass
class Report:
    """What the check found."""

    invariants: list[str]
    rows: dict[str, Row]
    techniques: set[str]
    problems: list[str]

    def summary(self) -> str:
        cited = sum(len(r.citations) for r in self.rows.values())
        distinct = len({(p, n) for r in self.rows.values() for p, n, _ in r.citations})
        used = sorted({t for r in self.rows.values() for t in r.techniques})
        gaps = sum(1 for r in self.rows.values() if r.gap)
        verdict = "ok" if not self.problems else f"{len(self.problems)} problem(s)"
        return (
            f"requirements: {len(self.invariants)} invariants, {cited} test citations "
            f"({distinct} distinct tests), {len(used)} techniques, {gaps} rows with a known gap: {verdict}"
        )


def invariant_ids(root: Path) -> list[str]:
    """The invariant ids the contract and the fleet's pages define, in order."""
    ids: list[str] = []
    families: set[str] = set()
    spec = root / SPEC
    pages = [spec] + sorted((root / "docs").glob(FLEET_GLOB))
    for page in pages:
        if not page.is_file():
            continue
        for line in page.read_text(encoding="utf-8").splitlines():
            m = BOLD_ID.match(line)
            if m:
                families.add(m.group(1))
                ids.append(m.group(1) + m.group(2))
    if spec.is_file() and families:
        mention = re.compile(r"\b([" + "".join(sorted(families)) + r"])([0-9]+)\b")
        for m in mention.finditer(spec.read_text(encoding="utf-8")):
            ids.append(m.group(1) + m.group(2))
    proofs = root / FLEET_PROPERTIES
    if proofs.is_file():
        for line in proofs.read_text(encoding="utf-8").splitlines():
            m = FLEET_PROPERTY.match(line)
            if m:
                ids.append(f"fleet ({m.group(1)})")
    unique = list(dict.fromkeys(ids))
    return sorted(unique, key=_order)


def _order(id_: str) -> tuple:
    m = re.fullmatch(r"([A-Z])([0-9]+)", id_)
    return (0, m.group(1), int(m.group(2))) if m else (1, id_, 0)


def _cells(line: str) -> list[str]:
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|"):
        body = body[:-1]
    return [c.strip() for c in re.split(r"(?<!\\)\|", body)]


def _tables(text: str):
    """Yields (header cells, [(line number, cells)]) for each table."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].lstrip().startswith("|") and i + 1 < len(lines) and re.match(r"^\s*\|[\s:|-]+\|\s*$", lines[i + 1]):
            header = [c.lower() for c in _cells(lines[i])]
            body = []
            i += 2
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                body.append((i + 1, _cells(lines[i])))
                i += 1
            yield header, body
        else:
            i += 1


def _split_list(cell: str) -> list[str]:
    return [t.strip() for t in cell.split(",") if t.strip()]


def parse(text: str, problems: list[str]) -> tuple[set[str], dict[str, Row]]:
    """The technique names and the rows of docs/requirements.md."""
    techniques: set[str] = set()
    rows: dict[str, Row] = {}
    for header, body in _tables(text):
        if header and header[0] == "technique":
            for _, cells in body:
                techniques.add(cells[0].strip("`* "))
        elif header[:5] == ["id", "invariant", "tests", "techniques", "gap"]:
            for line, cells in body:
                if len(cells) != 5:
                    problems.append(f"{REQUIREMENTS}:{line}: a row needs 5 cells, has {len(cells)}")
                    continue
                m = BOLD.fullmatch(cells[0])
                id_ = (m.group(1) if m else cells[0]).strip()
                if id_ in rows:
                    problems.append(f"{REQUIREMENTS}:{line}: a second row for {id_}")
                    continue
                row = Row(id_, line)
                for path, name, tags in CITATION.findall(cells[2]):
                    row.citations.append((path, name, _split_list(tags)))
                row.techniques = _split_list(cells[3])
                gap = cells[4].strip()
                row.gap = "" if gap in ("", "-", "—") else gap
                rows[id_] = row
    if not techniques:
        problems.append(f"{REQUIREMENTS}: no technique table (a table whose first column is `technique`)")
    return techniques, rows


def _sources(root: Path, path: str) -> list[Path] | None:
    """The files a cited path stands for; None when there are none.

    A path names a file, or a test target or module with `.rs` left off
    (`verification/tests/fleet_model`: `fleet_model.rs` or every `.rs` file
    under the folder `fleet_model/`), so a target split into a folder keeps
    its citations."""
    f = root / path
    if f.is_file():
        return [f]
    if not path.endswith(".rs"):
        if (root / (path + ".rs")).is_file():
            return [root / (path + ".rs")]
        if f.is_dir():
            files = sorted(f.rglob("*.rs"))
            return files or None
    return None


@functools.lru_cache(maxsize=None)
def _read(f: Path) -> str:
    return f.read_text(encoding="utf-8", errors="replace")


def _defines(root: Path, path: str, name: str) -> bool | None:
    """Whether `fn name` is in the cited source; None when it is gone."""
    files = _sources(root, path)
    if files is None:
        return None
    pattern = re.compile(r"\bfn\s+" + re.escape(name) + r"\s*[(<]")
    return any(pattern.search(_read(f)) for f in files)


def _ignored_under_miri(root: Path, path: str, name: str) -> bool:
    """Whether the attributes right above `fn name` ignore it under Miri."""
    pattern = re.compile(r"\bfn\s+" + re.escape(name) + r"\s*[(<]")
    for f in _sources(root, path) or []:
        lines = _read(f).splitlines()
        for i, line in enumerate(lines):
            if not pattern.search(line):
                continue
            above = []
            j = i - 1
            while j >= 0 and lines[j].strip() and not lines[j].rstrip().endswith(("}", ";", "{")):
                above.append(lines[j])
                j -= 1
            if re.search(r"cfg_attr\(\s*miri\s*,\s*ignore", " ".join(reversed(above))):
                return True
    return False


def check(root: Path) -> Report:
    """Runs every check on the repository at `root`."""
    _read.cache_clear()
    problems: list[str] = []
    req = root / REQUIREMENTS
    if not req.is_file():
        problems.append(f"{REQUIREMENTS} is missing")
        return Report(invariant_ids(root), {}, set(), problems)
    techniques, rows = parse(req.read_text(encoding="utf-8"), problems)
    invariants = invariant_ids(root)
    if not invariants:
        problems.append(f"no invariant found in {SPEC} (a list item opening with a bold id, `- **I1 ...**`)")
    for id_ in invariants:
        if id_ not in rows:
            problems.append(f"{id_}: no row in {REQUIREMENTS} (add one: see the page's \"Adding a row\")")
    known = set(invariants)
    for row in rows.values():
        where = f"{REQUIREMENTS}:{row.line}: {row.id}"
        if row.id not in known:
            problems.append(f"{where}: names no invariant of {SPEC} or docs/{FLEET_GLOB}")
        if not row.citations:
            problems.append(f"{where}: cites no test (`path :: test_name` [technique])")
        alive = 0
        for path, name, tags in row.citations:
            found = _defines(root, path, name)
            if found is None:
                problems.append(f"{where}: cited file {path} is gone")
            elif not found:
                problems.append(f"{where}: cited test `fn {name}` is not in {path}")
            else:
                alive += 1
                if "Miri" in tags and _ignored_under_miri(root, path, name):
                    problems.append(f"{where}: {name} is tagged Miri but ignored under Miri")
            if not tags:
                problems.append(f"{where}: {path} :: {name} names no technique")
            for t in tags:
                if t not in techniques:
                    problems.append(f"{where}: technique \"{t}\" of {name} is not in the technique table")
        if row.citations and not alive:
            problems.append(f"{where}: lost its last test")
        backed = {t for _, _, tags in row.citations for t in tags}
        claimed = set(row.techniques)
        for t in sorted(claimed - backed):
            problems.append(f"{where}: technique \"{t}\" is claimed but no cited test uses it")
        for t in sorted(backed - claimed):
            problems.append(f"{where}: technique \"{t}\" of a cited test is missing from the techniques cell")
        if len(claimed) < MIN_TECHNIQUES and not re.match(r"gap:\s*\S", row.gap):
            problems.append(
                f"{where}: {len(claimed)} technique(s), fewer than {MIN_TECHNIQUES}, and no `gap: <reason>` in the gap cell"
            )
    return Report(invariants, rows, techniques, problems)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=".", help="the repository root")
    args = parser.parse_args(argv)
    report = check(Path(args.root))
    for p in report.problems:
        print(f"FAIL {p}")
    print(report.summary())
    return 1 if report.problems else 0


if __name__ == "__main__":
    sys.exit(main())
