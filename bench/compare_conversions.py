"""Two ``migrate convert`` output folders compared file by file: every file byte-equal, but for
the timing fields of report.json, stats.csv and report.html and the folders' own names (a change
meant to keep the conversion's output, such as a speed-up, must print 0 differences).

    python3 bench/compare_conversions.py OUT_A OUT_B      (exit 1 where they differ)"""
import json, re, sys
from pathlib import Path

a, b = Path(sys.argv[1]), Path(sys.argv[2])
SKIP = {".cuda2tile-manifest.json"}
fa = {p.relative_to(a) for p in a.rglob("*") if p.is_file()}
fb = {p.relative_to(b) for p in b.rglob("*") if p.is_file()}
bad = 0
for p in sorted(fa ^ fb):
    print("only in one:", p); bad += 1
def norm(p, data):
    if p.name == "report.json":
        d = json.loads(data)
        d["summary"].pop("seconds", None)
        for f in d.get("files", []): f.pop("seconds", None)
        d.pop("output", None)
        return json.dumps(d, sort_keys=True).encode()
    if p.name == "stats.csv":
        return b"\n".join(l.rsplit(b",", 1)[0] for l in data.splitlines())
    data = re.sub(rb'"generated":"[^"]*"', b"", data)
    data = re.sub(rb'"seconds":[\d.]+', b"", data)
    # seconds and folder names in the other reports
    return re.sub(rb"\d+\.\d+ ?s\b|\"seconds\": [\d.]+|seconds[^\n,]*", b"", data.replace(str(a).encode(), b"OUT").replace(str(b).encode(), b"OUT"))
for p in sorted(fa & fb):
    if str(p) in SKIP: continue
    x, y = (a / p).read_bytes(), (b / p).read_bytes()
    if x != y and norm(p, x) != norm(p, y):
        print("differs:", p); bad += 1
print(f"{len(fa & fb)} files compared, {bad} differences")
sys.exit(1 if bad else 0)
