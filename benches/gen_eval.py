"""Writes a large Inspect `.eval` log for the import benchmark (benches/bench.sh import).

The log is the real scored popularity log of tests/fixtures/import/inspect/ grown to N samples:
its journal and reductions as Inspect wrote them; its header and summaries with the sample count
and ids made N (so that Inspect's own readers accept it whole); and its first sample copied N
times under new ids (1..N), each with a score drawn from a fixed seed, so every copy is a real
sample's shape and size (about 8 KB of JSON). Python's standard library only.

With --slim each sample keeps only its id, epoch and scores (about 100 bytes): the same log
with nothing but what an import reads, to show what memory follows.

Usage: gen_eval.py N OUT.eval [--slim]
"""

import json
import random
import sys
import zipfile

TEMPLATE = (
    "tests/fixtures/import/inspect/"
    "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval"
)


def main() -> None:
    n, out = int(sys.argv[1]), sys.argv[2]
    slim = "--slim" in sys.argv[3:]
    rng = random.Random(20260421)
    with zipfile.ZipFile(TEMPLATE) as src:
        names = src.namelist()
        sample = json.loads(src.read(next(x for x in names if x.startswith("samples/"))))
        rest = {x: src.read(x) for x in names if not x.startswith("samples/")}
    header = json.loads(rest["header.json"])
    header["eval"]["dataset"]["samples"] = n
    header["eval"]["dataset"]["sample_ids"] = list(range(1, n + 1))
    header["results"]["total_samples"] = n
    header["results"]["completed_samples"] = n
    summary = json.loads(rest["summaries.json"])[0]
    summaries = []
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as dst:
        for name, data in rest.items():
            if name not in ("header.json", "summaries.json") and not name.startswith("_journal/summaries/"):
                dst.writestr(name, data)
        for i in range(1, n + 1):
            sample["id"] = i
            for score in sample["scores"].values():
                score["value"] = "C" if rng.random() < 0.7 else "I"
            kept = {k: sample[k] for k in ("id", "epoch", "scores")} if slim else sample
            dst.writestr(f"samples/{i}_epoch_1.json", json.dumps(kept))
            summaries.append({**summary, "id": i, "scores": sample["scores"]})
        dst.writestr("summaries.json", json.dumps(summaries))
        # The header last, as Inspect writes it when the eval finishes.
        dst.writestr("header.json", json.dumps(header))


if __name__ == "__main__":
    main()
