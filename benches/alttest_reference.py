#!/usr/bin/env python3
"""`calibench alttest` against the published alt-test figures.

Calderon, Reichart & Dror (ACL 2025) publish their annotations and, in the executed notebook
`alt_test_example.ipynb` of https://github.com/nitaytech/AltTest, every LLM's winning rate and
advantage probability on each data set. This script reads that repository where it is given
(nothing of it is committed here: the repository states no licence), writes each data set as a
long CSV (unit,rater,value), runs `calibench alttest` with the data set's scoring and epsilon
as the notebook does, and compares calibench's figures with the notebook's printed ones
(parsed from the notebook, not typed in).

Usage: benches/alttest_reference.py PATH_TO_ALTTEST_CHECKOUT [CALIBENCH_BINARY]
Exit 0 when every figure matches to the notebook's two decimals.
"""
import csv
import json
import os
import re
import subprocess
import sys
import tempfile


def notebook_figures(repo):
    nb = json.load(open(os.path.join(repo, "alt_test_example.ipynb")))
    out, scoring, epsilon = {}, {}, {}
    for cell in nb["cells"]:
        src = "".join(cell.get("source", ""))
        if "datasets_scoring_functions" in src:
            scoring = dict(re.findall(r"'(\w+)': '(accuracy|neg_rmse)'", src))
            epsilon = {k: float(v) for k, v in re.findall(r"'(\w+)': (0\.\d+)", src)}
        for o in cell.get("outputs", []):
            for line in o.get("text", []):
                m = re.match(r"(\S+) (\S+) \[(PASSED|FAILED)\]:\tWinning Rate=([\d.]+)\tAdvantage Probability=([\d.]+)", line)
                if m:
                    out[(m[1], m[2])] = (m[3] == "PASSED", m[4], m[5])
    return out, scoring, epsilon


def main():
    repo = sys.argv[1]
    binary = sys.argv[2] if len(sys.argv) > 2 else "target/release/calibench"
    published, scoring, epsilon = notebook_figures(repo)
    failures, checked = 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        for dataset in sorted({d for d, _ in published}):
            folder = os.path.join(repo, "data", dataset)
            if not os.path.exists(os.path.join(folder, "human_annotations.json")):
                print(f"{dataset}: not in the checkout (skipped)")
                continue
            humans = json.load(open(os.path.join(folder, "human_annotations.json")))
            llms = json.load(open(os.path.join(folder, "llm_annotations.json")))
            path = os.path.join(tmp, f"{dataset}.csv")
            with open(path, "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(["unit", "rater", "value"])
                for who, anns in list(humans.items()) + list(llms.items()):
                    for item, value in anns.items():
                        w.writerow([item, who, value])
            level = "nominal" if scoring[dataset] == "accuracy" else "interval"
            for llm in llms:
                if (dataset, llm) not in published:
                    continue
                # Every other LLM is left out of the humans: name them all, test one at a time.
                others = [x for x in llms if x != llm]
                args = [binary, "alttest", path, "--level", level, "--epsilon", str(epsilon[dataset]), "--json", "--llm", llm]
                for o in others:
                    args += ["--llm", o]
                run = subprocess.run(args, capture_output=True, text=True)
                if run.returncode == 2:
                    print(f"{dataset} {llm}: calibench refused: {run.stderr.strip()}")
                    failures += 1
                    continue
                r = json.loads(run.stdout.splitlines()[0])
                passed, wr, ap = published[(dataset, llm)]
                ours = (r["passed"], f"{r['winning_rate']:.2f}", f"{r['advantage_probability']:.2f}")
                ok = ours == (passed, wr, ap)
                checked += 1
                failures += not ok
                print(f"{'ok ' if ok else 'DIFF'} {dataset:14} {llm:13} published {'PASSED' if passed else 'FAILED'} {wr} {ap}"
                      f"   calibench {'PASSED' if ours[0] else 'FAILED'} {ours[1]} {ours[2]}")
    print(f"{checked - failures} of {checked} (data set, LLM) pairs match the notebook")
    sys.exit(1 if failures else 0)


main()
