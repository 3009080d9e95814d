#!/bin/sh
# Seeds fuzz/corpus/<target>/ from the rule fixtures: each fixtures/rules/*.jsonl, behind the
# two bytes that choose its scenario's options and start position (see fuzz_targets/common.rs).
# A fixture whose start position is not in fuzz/fens.txt, or that no scenario names, gets the
# initial position with --clock --declarations. Usage: fuzz/seed.sh (from anywhere).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
python3 - "$root" <<'PY'
import json, os, sys
root = sys.argv[1]
fens = [l.strip() for l in open(os.path.join(root, "fuzz/fens.txt")) if l.strip()]
scenarios = json.load(open(os.path.join(root, "fixtures/rules/scenarios.json")))
by_file = {s["events"]: s for s in scenarios}
rules = os.path.join(root, "fixtures/rules")
corpus = os.path.join(root, "fuzz/corpus/events_to_rulings")
os.makedirs(corpus, exist_ok=True)
n = 0
for name in sorted(os.listdir(rules)):
    if not name.endswith(".jsonl"):
        continue
    s = by_file.get(name, {"fen": fens[0], "flags": ["--clock", "--declarations"]})
    flags = s["flags"]
    b0 = (1 if "--clock" in flags else 0) | (2 if "--declarations" in flags else 0)
    if "--time-control" in flags:
        b0 |= {"standard": 0, "rapid": 1, "blitz": 2}[flags[flags.index("--time-control") + 1]] << 2
    b1 = fens.index(s["fen"]) if s["fen"] in fens else 0
    data = open(os.path.join(rules, name), "rb").read()
    with open(os.path.join(corpus, name[:-len(".jsonl")]), "wb") as f:
        f.write(bytes([b0, b1]) + data)
    n += 1
print(f"{n} seeds in {corpus}")
PY
# event_stream: one seed per start position and option byte, playing legal moves with presses
# (op 0x4c = play legal move, time +1; op 0x4b = press, time +1), so runs start from real games.
mkdir -p "$root/fuzz/corpus/event_stream"
i=0
while [ $i -lt $(grep -c . "$root/fuzz/fens.txt") ]; do
    for b0 in 3 1; do
        printf "$(printf '\\%03o\\%03o' $b0 $i)"'\114\001\113\114\007\113\114\003\113\114\011\113' > "$root/fuzz/corpus/event_stream/p${i}-o${b0}"
    done
    i=$((i + 1))
done
echo "$(ls "$root/fuzz/corpus/event_stream" | wc -l) seeds in $root/fuzz/corpus/event_stream"
