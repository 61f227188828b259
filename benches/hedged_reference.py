#!/usr/bin/env python3
"""Reference vectors for calibench's hedged-capital sequence, from confseq 0.0.11 itself.

calibench's default sequential method (docs/guides/stop-when-you-know.md) is Waudby-Smith &
Ramdas's hedged-capital betting confidence sequence with two bettors per side (truncations 1/2
and 1), which confseq 0.0.11 (MIT) computes with `confseq.betting.betting_cs` given those two
strategies; with the one truncation 1/2 it is `confseq.betting.hedged_cs(x, alpha, breaks=1000,
running_intersection=True)`. This script draws seeded streams in [0, 1] of several shapes and
lengths, runs confseq on each at several levels, both ways, and writes the streams with
confseq's bounds to tests/fixtures/confseq/hedged.json, which tests/sequence_reference.rs checks
calibench against (to the grid's resolution, 1/1000).

confseq's betting module is pure Python; the PyPI package also compiles a C++ extension this
script does not need, so it reads the modules from a checkout you give it
(github.com/gostevehoward/confseq, whose setup.py says 0.0.11). Nothing of confseq is committed.

Usage: benches/hedged_reference.py CHECKOUT
  (makes a throw-away virtualenv under bench-data/hedged-venv with numpy < 2, scipy,
  matplotlib and multiprocess, which confseq's betting module imports)
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(ROOT, "tests", "fixtures", "confseq", "hedged.json")
VENV = os.path.join(ROOT, "bench-data", "hedged-venv")


def ensure_venv():
    py = os.path.join(VENV, "bin", "python")
    if not os.path.exists(py):
        subprocess.check_call([sys.executable, "-m", "venv", VENV])
    try:
        subprocess.check_call([py, "-c", "import numpy, scipy, matplotlib, multiprocess"],
                              stderr=subprocess.DEVNULL)
    except subprocess.CalledProcessError:
        subprocess.check_call([py, "-m", "pip", "install", "-q", "numpy<2", "scipy",
                               "matplotlib", "multiprocess"])
    return py


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    checkout = os.path.abspath(sys.argv[1])
    if os.environ.get("HEDGED_INNER") != "1":
        py = ensure_venv()
        env = dict(os.environ, HEDGED_INNER="1", MPLBACKEND="Agg")
        sys.exit(subprocess.call([py, os.path.abspath(__file__), checkout], env=env))
    sys.path.insert(0, os.path.join(checkout, "src"))
    import numpy as np
    from confseq.betting import betting_cs, hedged_cs
    from confseq.betting_strategies import lambda_predmix_eb

    def two_bettors(x, alpha):
        """betting_cs with a bettor per truncation (1/2 and 1) on each side, each betting
        lambda_predmix_eb at alpha/2 truncated at c/m (c/(1 - m) below)."""
        def up(c):
            def fn(x, m):
                with np.errstate(divide="ignore"):
                    return np.minimum(lambda_predmix_eb(x, alpha=alpha / 2), c / m)
            return fn

        def down(c):
            def fn(x, m):
                with np.errstate(divide="ignore"):
                    return np.minimum(lambda_predmix_eb(x, alpha=alpha / 2), c / (1 - m))
            return fn

        return betting_cs(
            x,
            lambdas_fns_positive=[up(0.5), up(1.0)],
            lambdas_fns_negative=[down(0.5), down(1.0)],
            alpha=alpha,
            breaks=1000,
            running_intersection=True,
            theta=1 / 2,
            convex_comb=False,
            trunc_scale=1,
            m_trunc=True,
        )

    rng = np.random.default_rng(20261205)
    streams = {
        # A paired 0/1 outcome's difference mapped to [0, 1]: 0, 1/2 or 1.
        "mcnemar": lambda n: (rng.choice([-1, 0, 0, 0, 1, 1], n) + 1) / 2,
        "uniform": lambda n: rng.uniform(0, 1, n),
        "skewed": lambda n: rng.beta(0.5, 3.0, n),
        "constant": lambda n: np.full(n, 0.5),
        "edges": lambda n: rng.choice([0.0, 1.0], n),
        # A score difference of sd 0.2 mapped to [0, 1]: sd 0.1 around 0.53.
        "narrow": lambda n: np.clip(rng.normal(0.53, 0.1, n), 0, 1),
    }
    cases = []
    for name, draw in streams.items():
        for n in (1, 7, 60, 300):
            x = draw(n)
            for alpha in (0.05, 0.025, 0.05 / 3):
                for truncations, cs in (
                    ([0.5], lambda x, a: hedged_cs(x, alpha=a, breaks=1000, running_intersection=True)),
                    ([0.5, 1.0], two_bettors),
                ):
                    lo, hi = cs(x, alpha)
                    cases.append({
                        "stream": name,
                        "alpha": alpha,
                        "truncations": truncations,
                        "x": [float(v) for v in x],
                        "lower": [float(v) for v in lo],
                        "upper": [float(v) for v in hi],
                    })
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump({"source": "confseq 0.0.11: truncations [0.5] betting.hedged_cs(x, alpha, breaks=1000, running_intersection=True); [0.5, 1.0] betting.betting_cs with one predmix bettor per truncation on each side, theta 1/2, trunc_scale 1", "cases": cases}, f)
        f.write("\n")
    print(f"{len(cases)} cases -> {os.path.relpath(OUT, ROOT)}")


if __name__ == "__main__":
    main()
