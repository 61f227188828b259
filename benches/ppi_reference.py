#!/usr/bin/env python3
"""Reference figures for calibench's PPI++ mean estimation, from `ppi_py` 0.2.3 itself.

Two published data sets from ppi_py's repository (MIT licence, tests/fixtures/ppi/LICENSE-ppi_py):
- forest_badmodel.csv: `examples/baselines/forest_badmodel.npz`, Y a deforestation label and
  Yhat a deliberately poor model's prediction (the predictions do not help: lambda 0);
- moral_machine_gpt4o.csv: the first 5,000 rows of `examples/5_SurveySampleLLM_ppipy.csv.gz`
  (commit 2b7fa2f), a sample of Moral Machine survey answers: Y = `Saved` (the person's choice)
  and Yhat = `gpt4o_wp_Saved` (GPT-4o's prediction of it): an LLM as annotator.
For each, the first n rows are labelled and the rest unlabelled, for several n; what ppi_py
computes (lambda, the point estimate, the 95% PPI++ interval, the classical interval) is written
to tests/fixtures/ppi/expected.json, which tests/ppi_reference.rs checks calibench against.

Usage: benches/ppi_reference.py   (makes a throw-away virtualenv under bench-data/ with
ppi_python==0.2.3; nothing of it is committed)

To rebuild the CSVs from github.com/aangelopoulos/ppi_py:
  benches/ppi_reference.py --from-npz PATH/forest_badmodel.npz --from-survey PATH/5_SurveySampleLLM_ppipy.csv.gz
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FIX = os.path.join(ROOT, "tests", "fixtures", "ppi")
VENV = os.path.join(ROOT, "bench-data", "ppi-venv")


def in_venv():
    py = os.path.join(VENV, "bin", "python")
    if not os.path.exists(py):
        subprocess.check_call([sys.executable, "-m", "venv", VENV])
        subprocess.check_call([py, "-m", "pip", "install", "-q", "ppi_python==0.2.3"])
    if os.path.realpath(sys.prefix) != os.path.realpath(VENV):
        os.execv(py, [py] + sys.argv)


def main():
    in_venv()
    import numpy as np
    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate, classical_mean_ci
    from ppi_py.ppi import _calc_lam_glm

    args = sys.argv[1:]
    if "--from-npz" in args:
        d = np.load(args[args.index("--from-npz") + 1])
        with open(os.path.join(FIX, "forest_badmodel.csv"), "w") as f:
            f.write("Y,Yhat\n")
            for y, yh in zip(d["Y"], d["Yhat"]):
                f.write(f"{int(y)},{int(yh)}\n")
    if "--from-survey" in args:
        import csv, gzip
        with gzip.open(args[args.index("--from-survey") + 1], "rt", newline="") as g, \
                open(os.path.join(FIX, "moral_machine_gpt4o.csv"), "w") as f:
            f.write("Y,Yhat\n")
            for i, row in enumerate(csv.DictReader(g)):
                if i == 5000:
                    break
                f.write(f"{int(float(row['Saved']))},{int(float(row['gpt4o_wp_Saved']))}\n")
    out = {}
    for name in ["forest_badmodel", "moral_machine_gpt4o"]:
        rows = np.loadtxt(os.path.join(FIX, name + ".csv"), delimiter=",", skiprows=1)
        Y, Yhat = rows[:, 0], rows[:, 1]
        cases = []
        for n in [20, 100, 400]:
            y, f, u = Y[:n], Yhat[:n], Yhat[n:]
            # lambda exactly as ppi_mean_ci tunes it (lam=None).
            est1 = ppi_mean_pointestimate(y, f, u, lam=1)
            lam = _calc_lam_glm((y - est1).reshape(-1, 1), (f - est1).reshape(-1, 1),
                                (u - est1).reshape(-1, 1), np.eye(1), clip=True)
            lo, hi = ppi_mean_ci(y, f, u, alpha=0.05)
            clo, chi = classical_mean_ci(y, alpha=0.05)
            cases.append({
                "labelled": n, "unlabelled": len(u), "lambda": float(lam),
                "value": float(ppi_mean_pointestimate(y, f, u)[0]),
                "ci": [float(lo[0]), float(hi[0])],
                "classical_value": float(y.mean()), "classical_ci": [float(clo), float(chi)],
            })
        out[name] = cases
    with open(os.path.join(FIX, "expected.json"), "w") as f:
        json.dump({"computed_by": "ppi_py 0.2.3 (benches/ppi_reference.py)", "data": out}, f, indent=2)
        f.write("\n")
    print(json.dumps(out, indent=1))


main()
