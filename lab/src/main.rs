//! `tripword-lab`: the lab with every built-in implementation this build
//! has (the baselines, `tripword`, the peers). `tripword-lab --help` for
//! the options, `tripword-lab compare A.json B.json` to compare two runs;
//! `docs/lab.md` is the guide.

fn main() {
    tripword_lab::Lab::from_args().builtin().run().report(&[]);
}
