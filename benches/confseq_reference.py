#!/usr/bin/env python3
"""Reference vectors for calibench's anytime-valid sequence, from confseq 0.0.11 itself.

calibench's sequential decision (docs/guides/stop-when-you-know.md) is the predictable plug-in
empirical-Bernstein confidence sequence of Waudby-Smith & Ramdas (JRSS-B 2024), as confseq
0.0.11 (MIT) computes it in `predmix_empbern_twosided_cs(x, alpha, truncation=0.5,
running_intersection=True)`. This script draws seeded streams in [0, 1] of several shapes and
lengths, runs confseq on each at several levels, and writes the streams with confseq's lower and
upper bounds to tests/fixtures/confseq/expected.json, which tests/sequence_reference.rs checks
calibench against to 1e-9. Nothing of confseq is committed.

Usage: benches/confseq_reference.py
  (makes a throw-away virtualenv under bench-data/confseq-venv; confseq 0.0.11 compiles a C++
  extension: it needs Boost's headers (`apt-get install libboost-dev`), a pybind11 newer than the
  one it pins (for Python 3.11), and numpy < 2)
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(ROOT, "tests", "fixtures", "confseq", "expected.json")
VENV = os.path.join(ROOT, "bench-data", "confseq-venv")


def ensure_venv():
    py = os.path.join(VENV, "bin", "python")
    if not os.path.exists(py):
        subprocess.check_call([sys.executable, "-m", "venv", VENV])
    try:
        subprocess.check_call([py, "-c", "import confseq.predmix"], stderr=subprocess.DEVNULL)
    except subprocess.CalledProcessError:
        pip = [py, "-m", "pip", "install", "-q"]
        subprocess.check_call(pip + ["pybind11>=2.10", "scikit-build", "cmake", "numpy<2", "setuptools", "wheel"])
        subprocess.check_call(pip + ["--no-build-isolation", "confseq==0.0.11"])
    return py


def main():
    if os.environ.get("CONFSEQ_INNER") != "1":
        py = ensure_venv()
        env = dict(os.environ, CONFSEQ_INNER="1")
        sys.exit(subprocess.call([py, os.path.abspath(__file__)], env=env))
    import numpy as np
    from confseq.predmix import predmix_empbern_twosided_cs

    rng = np.random.default_rng(20261127)
    streams = {
        # A paired 0/1 outcome's difference mapped to [0, 1]: 0, 1/2 or 1.
        "mcnemar": lambda n: (rng.choice([-1, 0, 0, 0, 1, 1], n) + 1) / 2,
        "uniform": lambda n: rng.uniform(0, 1, n),
        "skewed": lambda n: rng.beta(0.5, 3.0, n),
        "constant": lambda n: np.full(n, 0.5),
        "edges": lambda n: rng.choice([0.0, 1.0], n),
        "shifted": lambda n: np.clip(rng.normal(0.62, 0.1, n), 0, 1),
    }
    cases = []
    for name, draw in streams.items():
        for n in (1, 2, 7, 60, 400):
            x = draw(n)
            for alpha in (0.05, 0.025, 0.05 / 3):
                lo, hi = predmix_empbern_twosided_cs(
                    x, alpha=alpha, truncation=0.5, running_intersection=True
                )
                cases.append({
                    "stream": name,
                    "alpha": alpha,
                    "x": [float(v) for v in x],
                    "lower": [float(v) for v in lo],
                    "upper": [float(v) for v in hi],
                })
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump({"source": "confseq 0.0.11 predmix_empbern_twosided_cs(x, alpha, truncation=0.5, running_intersection=True)", "cases": cases}, f)
        f.write("\n")
    print(f"{len(cases)} cases -> {os.path.relpath(OUT, ROOT)}")


if __name__ == "__main__":
    main()
