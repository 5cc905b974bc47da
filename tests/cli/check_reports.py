"""check_reports.py NATIVE_OPS SCHEMA WORKDIR: runs `native-ops test --junit` and
`native-ops bench --json-file --csv --svg` on one op, then checks each file: the JSON against
the documented schema, the CSV's columns, the SVG and JUnit XML as well-formed documents
whose content matches the JSON."""
import csv
import json
import subprocess
import sys
import xml.etree.ElementTree as ET

native_ops, schema_path, workdir = sys.argv[1:4]


def validate(value, schema, defs, path="$"):
    """The subset of JSON Schema the bench schema uses: type, required, properties,
    items, const, enum, minItems/maxItems and local $ref."""
    if "$ref" in schema:
        return validate(value, defs[schema["$ref"].split("/")[-1]], defs, path)
    kinds = {"object": dict, "array": list, "string": str, "boolean": bool, "integer": int, "number": (int, float)}
    kind = schema.get("type")
    if kind:
        ok = isinstance(value, kinds[kind]) and not (kind in ("integer", "number") and isinstance(value, bool))
        assert ok, f"{path}: {value!r} is not {kind}"
    if "const" in schema:
        assert value == schema["const"], f"{path}: {value!r} != {schema['const']!r}"
    if "enum" in schema:
        assert value in schema["enum"], f"{path}: {value!r} not in {schema['enum']}"
    for key in schema.get("required", []):
        assert key in value, f"{path}: missing {key}"
    for key, sub in schema.get("properties", {}).items():
        if isinstance(value, dict) and key in value:
            validate(value[key], sub, defs, f"{path}.{key}")
    if "items" in schema and isinstance(value, list):
        assert len(value) >= schema.get("minItems", 0), f"{path}: too few items"
        assert len(value) <= schema.get("maxItems", len(value)), f"{path}: too many items"
        for i, item in enumerate(value):
            validate(item, schema["items"], defs, f"{path}[{i}]")


def run(*args):
    result = subprocess.run([native_ops, *args], capture_output=True, text=True)
    print(result.stdout, result.stderr)
    assert result.returncode == 0, f"{args}: exit {result.returncode}"
    return result.stdout


junit_path = f"{workdir}/conformance.xml"
sweep = json.loads(run("test", "--op", "bmm", "--json", "--junit", junit_path))
suites = ET.parse(junit_path).getroot()
assert suites.tag == "testsuites"
cases = suites.findall("./testsuite/testcase")
assert len(cases) == len(sweep["results"]) > 0, (len(cases), len(sweep["results"]))
assert int(suites.get("failures")) == sweep["failed"] == 0

json_path, csv_path, svg_path = (f"{workdir}/bench.{ext}" for ext in ("json", "csv", "svg"))
run("bench", "--op", "bmm", "--seconds", "0.02", "--json-file", json_path, "--csv", csv_path, "--svg", svg_path)
schema = json.load(open(schema_path))
report = json.load(open(json_path))
validate(report, schema, schema["$defs"])
timed = [row for row in report["rows"] if row["timed"]]
assert timed, "no row was timed"
for row in timed:
    low, high = row["speedup_ci"]
    assert 0 < low <= row["speedup"] <= high, row
    assert row["original"]["median_ns"] > 0 and row["impl"]["median_ns"] > 0, row
    assert row["bytes"] > 0 and row["override_gbps"] > 0, row

rows = list(csv.reader(open(csv_path)))
assert len(rows) == len(report["rows"]) + 1, "one CSV line per row, and a header"
assert all(len(r) == len(rows[0]) for r in rows), "every CSV line has every column"

svg = ET.parse(svg_path).getroot()
assert svg.tag == "{http://www.w3.org/2000/svg}svg", svg.tag
bars = [r for r in svg.iter("{http://www.w3.org/2000/svg}rect") if "faster" in r.get("class", "") or "slower" in r.get("class", "")]
assert len(bars) == len(timed), f"{len(bars)} bars for {len(timed)} timed rows"
print("reports are valid:", len(sweep["results"]), "sweep results,", len(report["rows"]), "bench rows")
