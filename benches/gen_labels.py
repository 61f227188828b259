#!/usr/bin/env python3
"""A doc corpus with a crowd of human labels, for `benches/bench.sh labels`.

Usage: benches/gen_labels.py OUT_DIR ANNOTATORS FINDINGS PER_ANNOTATOR

OUT_DIR gets experiment.toml, reviews.jsonl (100 plans, two reviewers, two findings each per
arm), verdicts.jsonl (three judges scoring `real` and `important` on every plan and finding) and
labels.jsonl: ANNOTATORS annotators, each labelling PER_ANNOTATOR of the first FINDINGS baseline
findings on both dimensions. OUT_DIR.csv is the same labels as a long `unit,rater,value` file
(the `real` dimension) with one model rater, `model-x`, on every unit, for `calibench alttest`.
Seeded: the same arguments write the same files.
"""
import csv
import json
import os
import random
import sys

out, annotators, findings, per = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(20261127)
os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "experiment.toml"), "w") as f:
    f.write('name = "labels-bench"\nmode = "doc"\nbootstrap = 200\n'
            '[arms.baseline]\nsource = "baseline"\n[arms.baseline.review]\npolicy = "float-gates"\n'
            '[arms.treatment]\nsource = "treatment"\n[arms.treatment.review]\npolicy = "anchored"\n')
ids = []
with open(os.path.join(out, "reviews.jsonl"), "w") as r, open(os.path.join(out, "verdicts.jsonl"), "w") as v:
    def judged(item, arm, q):
        judges = [{"model": m, "per_dimension": {"real": round(min(1, max(0, q + rng.gauss(0, 0.1))), 3),
                                                  "important": round(rng.random(), 3)}}
                  for m in ("judge-a", "judge-b", "judge-c")]
        v.write(json.dumps({"item_id": item, "arm": arm, "verdicts": judges}) + "\n")
    for arm in ("baseline", "treatment"):
        for p in range(100):
            target = f"plan-{p:03d}"
            for reviewer in ("correctness", "feasibility"):
                fs = []
                for k in range(max(2, findings // 400 + 1)):
                    fid = f"{arm}-{target}-{reviewer}-{k}"
                    q = rng.random()
                    conf = round(q, 2) if arm == "baseline" else rng.choice([25, 50, 75, 100])
                    fs.append({"id": fid, "title": f"Finding {k} of {reviewer}", "severity": "P2",
                               "section": f"S{k}", "finding_type": "error", "autofix_class": "manual",
                               "confidence": conf})
                    judged(fid, arm, q)
                    if arm == "baseline":
                        ids.append(fid)
                r.write(json.dumps({"target": target, "arm": arm, "reviewer": reviewer, "findings": fs}) + "\n")
            judged(target, arm, rng.random())
ids = ids[:findings]
with open(os.path.join(out, "labels.jsonl"), "w") as lf, open(out + ".csv", "w", newline="") as cf:
    w = csv.writer(cf)
    w.writerow(["unit", "rater", "value"])
    for a in range(annotators):
        who = f"c{a:06d}"
        for item in rng.sample(ids, per):
            real, important = round(rng.random(), 2), round(rng.random(), 2)
            lf.write(json.dumps({"item_id": item, "arm": "baseline", "annotator": who,
                                 "per_dimension": {"real": real, "important": important}}) + "\n")
            w.writerow([item, who, real])
    for item in ids:
        w.writerow([item, "model-x", 0.5])
