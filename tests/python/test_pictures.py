"""The pictures: `shardpoint draw` and `--report html|svg` of suggest,
simulate and memory.

- Every SVG parses as XML, and the numbers in it (its data-* attributes)
  equal the JSON reports' of the same run: suggest's stages, memory's
  devices, simulate's makespan.
- Every page loads in a real browser (Debian's chromium, headless), with
  no console error, fetches nothing, shows one block per stage with the
  right labels and numbers (read from the DOM chromium dumps), and its
  screenshot is not blank. A page that logs an error, and a blank page,
  are caught by the same checks (their negative controls).
- `simulate --trace` holds to the Trace Event Format's schema (JSON Schema
  written from its documentation), for forward runs and training steps.

Run by ctest (test_pictures) with SHARDPOINT_CLI set; the browser tests
skip, saying so, where chromium is not installed (scripts/setup.sh installs
it).
"""

import json
import os
import re
import shutil
import struct
import subprocess
import tempfile
import xml.etree.ElementTree as ET
import zlib

import pytest

from cli_support import CLI, run

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = os.environ.get("SHARDPOINT_MODELS_DIR", os.path.join(SOURCE, "..", "shared", "models"))
MODEL = os.path.join(MODELS, "resnet50-v1-7-replica.onnx")
CONFIG = os.path.join(MODELS, "resnet50-v1-7-shard.yaml")
SVG = "{http://www.w3.org/2000/svg}"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

needs_models = pytest.mark.skipif(not os.path.exists(MODEL), reason=f"no {MODEL}")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (scripts/setup.sh installs it)")




def report(*args):
    return json.loads(run(*args, "--report", "json").stdout)


def svgs(folder):
    """{name: parsed root} of every SVG in `folder` (each must parse)."""
    out = {}
    for name in sorted(os.listdir(folder)):
        if name.endswith(".svg"):
            root = ET.parse(os.path.join(folder, name)).getroot()
            assert root.tag == SVG + "svg", name
            out[name] = root
    return out


def attrs(root, tag, cls):
    """The data-* attributes of every `tag` element of class `cls`."""
    found = []
    for e in root.iter(SVG + tag):
        if cls in e.get("class", "").split():
            found.append({k[5:]: v for k, v in e.attrib.items() if k.startswith("data-")})
    return found


def close(a, b):
    return abs(float(a) - float(b)) <= 1e-9 * max(1.0, abs(float(b)))


# ---- the SVGs hold the reports' numbers


@needs_models
def test_draw_svgs_parse_and_hold_suggest_memory_and_simulate_numbers(tmp_path):
    cfg = tmp_path / "s.yaml"
    s = report("suggest", "--input-model", MODEL, "--stages", 4, "--output-config", cfg)
    run("draw", "--input-model", MODEL, "--manual-sharding-config", cfg, "--format", "svg",
        "--output", tmp_path / "pics", "--batches-per-step", 8)
    pics = svgs(tmp_path / "pics")
    assert set(pics) == {"stages.svg", "bars.svg", "timeline.svg", "nodes.svg"}

    # The bars: suggest's stages, its lower bound, its bottleneck.
    bars = pics["bars.svg"]
    for metric, key in [("cost", "cost"), ("parameter-bytes", "parameter_bytes")]:
        values = {int(b["stage"]): b["value"] for b in attrs(bars, "rect", "bar")
                  if b["metric"] == metric}
        assert len(values) == 4
        for st in s["stages"]:
            assert close(values[st["stage"]], st[key]), (metric, st)
    (bound,) = attrs(bars, "line", "lower-bound")
    assert close(bound["value"], s["lower_bound"])
    (neck,) = attrs(bars, "rect", "bottleneck")
    assert neck["metric"] == "cost" and close(neck["value"], s["bottleneck"])

    # The blocks: one run a stage here, with suggest's node counts and costs.
    blocks = attrs(pics["stages.svg"], "g", "block")
    assert [int(b["stage"]) for b in blocks] == [0, 1, 2, 3]
    for b, st in zip(blocks, s["stages"]):
        assert int(b["nodes"]) == st["nodes"] and close(b["cost"], st["cost"])
    crossings = attrs(pics["stages.svg"], "g", "crossing")
    for st in s["stages"][1:]:  # what each stage receives, by where it comes from
        got = sum(float(c["bytes"]) for c in crossings
                  if blocks[int(c["to"])]["stage"] == str(st["stage"]))
        assert close(got, st["received_bytes"]), st

    # The memory bars: memory's devices with the same options (its micro-batches
    # a step too).
    m = report("memory", "--input-model", MODEL, "--manual-sharding-config", cfg,
               "--batches-per-step", 8)
    memory = {int(b["stage"]): b["value"] for b in attrs(bars, "rect", "bar")
              if b["metric"] == "memory-bytes"}
    for stage in range(4):
        largest = max(d["total_bytes"] for d in m["devices"] if d["stage"] == stage)
        assert close(memory[stage], largest)

    # The timeline: simulate's run with the same costs and micro-batches.
    sim = report("simulate", "--input-model", MODEL, "--manual-sharding-config", cfg,
                 "--batches-per-step", 8, "--cost", "flops")
    ops = attrs(pics["timeline.svg"], "rect", "op")
    assert len(ops) == 4 * 8
    assert close(max(float(o["end"]) for o in ops), sim["makespan"])
    assert {(o["stage"], o["micro-batch"]) for o in ops} == {
        (str(st), str(j)) for st in range(4) for j in range(8)}


@needs_models
def test_suggest_picture_has_the_candidates_and_the_baselines(tmp_path):
    s = report("suggest", "--input-model", MODEL, "--stages", 3, "--cost", "unit")
    run("suggest", "--input-model", MODEL, "--stages", 3, "--cost", "unit", "--report", "svg",
        "--report-file", tmp_path / "pics")
    pics = svgs(tmp_path / "pics")
    cands = attrs(pics["candidates.svg"], "circle", "candidate")
    assert [int(c["stages"]) for c in cands] == list(range(1, 7))
    (chosen,) = attrs(pics["candidates.svg"], "circle", "chosen")
    assert chosen["stages"] == "3" and close(chosen["bottleneck"], s["bottleneck"])
    for c in cands:  # unit costs: the best bottleneck is at least ceil(V / k)
        assert float(c["bottleneck"]) >= float(c["lower-bound"]) - 1e-9
    assert cands[0]["bottleneck"] == str(sum(st["nodes"] for st in s["stages"]))
    baselines = {b["name"]: b["bottleneck"] for b in attrs(pics["candidates.svg"], "g", "baseline")}
    assert {b["name"] for b in s["baselines"]} <= set(baselines)
    for b in s["baselines"]:
        assert close(baselines[b["name"]], b["bottleneck"])
    # Around a larger count, from S - 8: 17 counts at most (from 1, a trial's
    # 65536 stages asked for 65544 solves, hours on a large model).
    run("suggest", "--input-model", MODEL, "--stages", 20, "--cost", "unit", "--report", "svg",
        "--report-file", tmp_path / "many")
    many = attrs(svgs(tmp_path / "many")["candidates.svg"], "circle", "candidate")
    assert [int(c["stages"]) for c in many] == list(range(12, 29))


@needs_models
def test_simulate_schedule_picture_has_every_pass_and_the_memory_curve(tmp_path):
    args = ["simulate", "--input-model", MODEL, "--manual-sharding-config", CONFIG,
            "--batches-per-step", 6, "--schedule", "zb-h1"]
    sim = report(*args)
    run(*args, "--report", "svg", "--report-file", tmp_path / "pics")
    pics = svgs(tmp_path / "pics")
    ops = attrs(pics["timeline.svg"], "rect", "op")
    assert sorted({o["kind"] for o in ops}) == ["B", "F", "W"]
    assert len(ops) == 3 * 4 * 6
    assert close(max(float(o["end"]) for o in ops), sim["makespan"])
    curves = attrs(pics["timeline.svg"], "polyline", "memory-curve")
    assert sorted(int(c["device"]) for c in curves) == [0, 1, 2, 3]


@needs_models
def test_draw_memory_bars_follow_the_timelines_schedule(tmp_path):
    # A trial's page drew GPipe's bars (every micro-batch in flight) beside a
    # zb-h1 and an interleaved timeline.
    base = ["draw", "--input-model", MODEL, "--manual-sharding-config", CONFIG,
            "--batches-per-step", 6, "--format", "svg"]
    run(*base, "--schedule", "zb-h1", "--output", tmp_path / "zb")
    bars = svgs(tmp_path / "zb")["bars.svg"]
    held = {int(b["stage"]): b["value"] for b in attrs(bars, "rect", "bar")
            if b["metric"] == "activation-bytes"}
    sim = report("simulate", "--input-model", MODEL, "--manual-sharding-config", CONFIG,
                 "--batches-per-step", 6, "--schedule", "zb-h1")
    assert len(held) == len(sim["stages"]) == 4
    for k, st in enumerate(sim["stages"]):  # ZB-H1 holds 1F1B's micro-batches
        assert close(held[k], st["activation_peak"]), (k, st)
    m = report("memory", "--input-model", MODEL, "--manual-sharding-config", CONFIG,
               "--batches-per-step", 6, "--schedule", "1f1b")
    for stage in range(4):
        assert close(held[stage], max(d["activation_bytes"] for d in m["devices"]
                                      if d["stage"] == stage))
    # Interleaved (four stages on two devices, 0 1 0 1): the planner does not
    # count it; no bars, said.
    run("synth", "decoder", "--layers", 4, tmp_path / "d.onnx")
    r = run("draw", "--input-model", tmp_path / "d.onnx", "--shard", "layer1/q=1:1",
            "--shard", "layer2/q=0:2", "--shard", "layer3/q=1:3", "--schedule", "interleaved",
            "--virtual-stages", 2, "--batches-per-step", 4, "--format", "svg",
            "--output", tmp_path / "il")
    bars = svgs(tmp_path / "il")["bars.svg"]
    assert {b["metric"] for b in attrs(bars, "rect", "bar")} == {"cost", "parameter-bytes"}
    assert "not the interleaved schedule's" in r.stderr
    # The findings are printed once, as findings, not again as notes.
    assert "shardpoint: warning [input-on-several-devices]" in r.stderr
    assert "note: Warning [" not in r.stderr


@needs_models
def test_suggest_picture_with_a_communication_weight_shows_the_loads(tmp_path):
    # A trial's page named the heaviest stage by compute, where suggest's
    # report named the one whose load (cost and bytes received) is largest.
    args = ["suggest", "--input-model", MODEL, "--stages", 3, "--communication-weight", 0.002]
    s = report(*args)
    run(*args, "--report", "svg", "--report-file", tmp_path / "pics")
    bars = svgs(tmp_path / "pics")["bars.svg"]
    loads = {int(b["stage"]): b["value"] for b in attrs(bars, "rect", "bar")
             if b["metric"] == "cost"}
    for st in s["stages"]:
        assert close(loads[st["stage"]], st["load"]), st
    (neck,) = attrs(bars, "rect", "bottleneck")
    assert close(neck["value"], s["bottleneck"])
    heading = "".join(t.text or "" for t in bars.iter(SVG + "text"))
    assert "load (MFLOP + 0.002 a byte received)" in heading
    run(*args, "--report", "html", "--report-file", tmp_path / "p.html")
    page = (tmp_path / "p.html").read_text()
    assert ", a load in MFLOP + 0.002 a byte received (stage %d)" % int(neck["stage"]) in page


@needs_models
def test_memory_picture_of_a_plan_that_does_not_fit_is_written_exit_3(tmp_path):
    # The page shows why (docs/cli.md, exit 3): the stages over the capacity.
    args = ["memory", "--input-model", MODEL, "--manual-sharding-config", CONFIG,
            "--device-memory", "100MiB"]
    m = json.loads(run(*args, "--report", "json", code=3).stdout)
    run(*args, "--report", "svg", "--report-file", tmp_path / "pics", code=3)
    bars = svgs(tmp_path / "pics")["bars.svg"]
    over = {int(b["stage"]) for b in attrs(bars, "rect", "over")}
    assert over == {d["stage"] for d in m["devices"] if d["total_bytes"] > 100 * 2**20}
    assert over


def test_a_long_run_draws_its_first_operations_and_says_so(tmp_path):
    run("simulate", "--stage-times", "1,2,1", "--schedule", "1f1b", "--batches-per-step", 5000,
        "--report", "svg", "--report-file", tmp_path / "pics")
    timeline = svgs(tmp_path / "pics")["timeline.svg"]
    ops = attrs(timeline, "rect", "op")
    assert 19000 < len(ops) <= 20000  # those that start before the 20,001st does
    title = "".join(t.text or "" for t in timeline.iter(SVG + "text"))
    assert f"the {len(ops)} of 30000 operations that start before" in title
    starts = sorted(float(o["start"]) for o in ops)
    assert starts[0] == 0


def test_a_model_without_a_sharding_is_one_stage(tmp_path):
    run("synth", "decoder", "--layers", 2, tmp_path / "d.onnx")
    r = run("draw", "--input-model", tmp_path / "d.onnx", "--format", "svg", "--output",
            tmp_path / "pics")
    said = ("the model has no sharding (no --shard, no --manual-sharding-config, no sharding "
            "attributes of its own): drawn as one stage on one device")
    assert f"shardpoint: note: {said}\n" in r.stderr  # (a trial's: drawn so without a word)
    run("draw", "--input-model", tmp_path / "d.onnx", "--output", tmp_path / "d.html")
    assert f'<p class="note">{said}</p>' in (tmp_path / "d.html").read_text()
    sharded = run("draw", "--input-model", tmp_path / "d.onnx", "--shard",
                  "layer1/ln_mean=1:1", "--output", tmp_path / "s.html")
    assert "no sharding" not in sharded.stderr
    assert "no sharding" not in (tmp_path / "s.html").read_text()
    pics = svgs(tmp_path / "pics")
    (block,) = attrs(pics["stages.svg"], "g", "block")
    nodes = len(run("inspect", tmp_path / "d.onnx").stdout.splitlines())  # a line a node
    assert block["stage"] == "0" and int(block["nodes"]) == nodes
    assert len(attrs(pics["timeline.svg"], "rect", "op")) == 2  # twice the (one) stage


@pytest.mark.parametrize("source", ["model", "counts"])
def test_plan_picture_is_the_best_layout(tmp_path, source):
    cluster = ["--devices", 8, "--devices-per-node", 4, "--device-memory", "1GiB",
               "--device-flops", "50T", "--intra-node-bandwidth", "100GB/s",
               "--inter-node-bandwidth", "10GB/s", "--global-batch", 32]
    if source == "model":
        run("synth", "decoder", "--layers", 8, tmp_path / "d.onnx")
        args = ["plan", "--input-model", tmp_path / "d.onnx", *cluster]
    else:
        args = ["plan", "--layers", 8, "--hidden", 512, "--sequence", 256, "--vocabulary", 1000,
                "--heads", 8, *cluster]
    best = report(*args)["candidates"][0]
    run(*args, "--report", "svg", "--report-file", tmp_path / "pics")
    pics = svgs(tmp_path / "pics")
    assert ("stages.svg" in pics) == (source == "model")
    bars = pics["bars.svg"]
    memory = {int(b["stage"]): b["value"] for b in attrs(bars, "rect", "bar")
              if b["metric"] == "memory-bytes"}
    assert len(memory) == len(best["stages"]) == best["pipeline"] * best["virtual_stages"]
    for k, st in enumerate(best["stages"]):
        assert close(memory[k], st["total_bytes"])
    ops = attrs(pics["timeline.svg"], "rect", "op")
    passes = 3 if best["schedule"] == "zb-h1" else 2
    assert len(ops) == passes * len(best["stages"]) * best["micro_batches"]
    assert close(max(float(o["end"]) for o in ops), best["makespan"])
    if source == "counts":  # a stage after the first receives a layer's output, s h 2 bytes
        run(*args, "--report", "html", "--report-file", tmp_path / "p.html")
        page = (tmp_path / "p.html").read_text()
        rows = dict(re.findall(r'<tr data-stage="(\d+)">(.*?)</tr>', page))
        assert len(rows) == len(best["stages"])
        for k, row in rows.items():
            received = re.findall(r"<td>(.*?)</td>", row)[5]
            assert received == ("0 B" if k == "0" else "256.0 KiB"), (k, received)


@needs_models
def test_picture_outputs_follow_the_output_policy(tmp_path):
    # No file, a file without a picture, a folder of the user's files.
    r = run("suggest", "--input-model", MODEL, "--stages", 2, "--report", "html", code=1)
    assert "--report-file" in r.stderr
    run("suggest", "--input-model", MODEL, "--stages", 2, "--report-file", tmp_path / "x.html",
        code=1)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep")
    for force in ([], ["--force"]):
        r = run("draw", "--input-model", MODEL, "--manual-sharding-config", CONFIG, "--format",
                "svg", "--output", mine, *force, code=2)
        assert r.stdout == "" and len(r.stderr.strip().splitlines()) == 1
    assert os.listdir(mine) == ["notes.txt"] and (mine / "notes.txt").read_text() == "keep"
    # The input itself, and the config.
    for target in (MODEL, CONFIG):
        run("draw", "--input-model", MODEL, "--manual-sharding-config", CONFIG, "--output",
            target, code=2)
    # An earlier svg folder is replaced with --force only.
    out = tmp_path / "pics"
    run("draw", "--input-model", MODEL, "--manual-sharding-config", CONFIG, "--format", "svg",
        "--output", out)
    run("draw", "--input-model", MODEL, "--manual-sharding-config", CONFIG, "--format", "svg",
        "--output", out, code=2)
    run("draw", "--input-model", MODEL, "--manual-sharding-config", CONFIG, "--format", "svg",
        "--output", out, "--force")
    assert "stages.svg" in os.listdir(out)


# ---- the Trace Event Format


TRACE_SCHEMA = {
    # From the Trace Event Format document (Google, "Trace Event Format"):
    # the JSON Object Format, its complete ("X") and metadata ("M") events.
    "type": "object",
    "required": ["traceEvents"],
    "properties": {
        "traceEvents": {"type": "array", "items": {"$ref": "#/definitions/event"}},
        "displayTimeUnit": {"enum": ["ms", "ns"]},
    },
    "definitions": {
        "event": {
            "type": "object",
            "required": ["name", "ph", "pid", "tid"],
            "properties": {
                "name": {"type": "string"},
                "cat": {"type": "string"},
                "ph": {"enum": ["X", "M"]},
                "ts": {"type": "number", "minimum": 0},
                "dur": {"type": "number", "minimum": 0},
                "pid": {"type": "integer"},
                "tid": {"type": "integer"},
                "args": {"type": "object"},
            },
            "allOf": [
                {"if": {"properties": {"ph": {"const": "X"}}},
                 "then": {"required": ["ts", "dur"]}},
                {"if": {"properties": {"ph": {"const": "M"}}},
                 "then": {"properties": {"name": {"enum": [
                     "process_name", "process_labels", "process_sort_index", "thread_name",
                     "thread_sort_index"]}},
                     "required": ["args"]}},
            ],
        }
    },
}


@needs_models
@pytest.mark.parametrize("schedule", [None, "1f1b", "interleaved", "zb-h1"])
def test_trace_holds_to_the_trace_event_format(tmp_path, schedule):
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft7Validator(TRACE_SCHEMA)
    # The checker catches what the format forbids (its negative control).
    assert not validator.is_valid({"traceEvents": [{"name": "a", "ph": "X", "pid": 0, "tid": 0}]})
    args = ["simulate", "--input-model", MODEL, "--manual-sharding-config", CONFIG,
            "--batches-per-step", 8, "--trace", tmp_path / "t.json"]
    if schedule == "interleaved":
        # v = 2 over the seed's 4 stages: stage s on device s mod 2.
        cfg = tmp_path / "i.yaml"
        cfg.write_text("- {node: resnetv17_stage1__plus0, device: 0, stage: 0}\n"
                       "- {node: resnetv17_stage4_batchnorm2_fwd, device: 1, stage: 1}\n"
                       "- {node: resnetv17_stage4__plus0, device: 0, stage: 2}\n"
                       "- {node: resnetv17_dense0_fwd, device: 1, stage: 3}\n")
        args[4] = cfg
        args += ["--virtual-stages", 2]
    if schedule:
        args += ["--schedule", schedule]
    run(*args)
    trace = json.loads((tmp_path / "t.json").read_text())
    errors = sorted(validator.iter_errors(trace), key=str)
    assert not errors, errors[0].message
    assert sum(e["ph"] == "X" for e in trace["traceEvents"]) >= 8


# ---- in a real browser


def chromium(*args, timeout=120):
    """Runs headless chromium with a profile of its own; returns (stdout, stderr)."""
    with tempfile.TemporaryDirectory() as profile:
        r = subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--enable-logging=stderr", "--v=0", f"--user-data-dir={profile}",
             *map(str, args)],
            capture_output=True, text=True, timeout=timeout)
    return r.stdout, r.stderr


def console_errors(stderr):
    """What the page said on its console, and any page error, from chromium's log."""
    return [line for line in stderr.splitlines()
            if "CONSOLE" in line or "Uncaught" in line or "Failed to load resource" in line]


def png_colours(path):
    """The number of distinct pixel colours of an 8-bit RGB(A) PNG (a decoder
    of the five filters, enough for chromium's screenshots)."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height, kind = 8, b"", 0, 0, 0
    while pos < len(data):
        length, tag = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if tag == b"IHDR":
            width, height, depth, kind = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and kind in (2, 6)
        elif tag == b"IDAT":
            idat += body
        pos += 12 + length
    bpp = 3 if kind == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    colours = set()
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        if y % 4 == 0:  # a sample of the rows is plenty
            colours.update(bytes(line[i:i + 3]) for i in range(0, stride, bpp * 2))
        prev = line
    return len(colours)


def load(page, tmp_path):
    """The page in chromium: its DOM after load, its console errors, and the
    number of colours of its screenshot."""
    dom, log = chromium("--dump-dom", f"file://{page}")
    shot = tmp_path / (os.path.basename(page) + ".png")
    chromium("--window-size=1280,1600", f"--screenshot={shot}", f"file://{page}")
    return dom, console_errors(log), png_colours(shot)


def blocks_of(dom):
    """The data-* attributes of every block in a dumped DOM."""
    out = []
    for m in re.finditer(r'<g class="block"([^>]*)>', dom):
        out.append(dict(re.findall(r'data-([a-z-]+)="([^"]*)"', m.group(1))))
    return out


@needs_chromium
def test_the_browser_checks_catch_a_console_error_and_a_blank_page(tmp_path):
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><html><body><script>console.error('broken')</script>"
                   "</body></html>")
    dom, errors, colours = load(bad, tmp_path)
    assert errors and "broken" in "".join(errors)
    assert colours <= 2  # blank


@needs_chromium
@needs_models
def test_pages_load_in_chromium_with_one_block_a_stage(tmp_path):
    cfg = tmp_path / "s.yaml"
    s = report("suggest", "--input-model", MODEL, "--stages", 4, "--output-config", cfg)
    pages = {
        "draw": ["draw", "--input-model", MODEL, "--manual-sharding-config", CONFIG,
                 "--schedule", "1f1b", "--output", tmp_path / "draw.html"],
        "suggest": ["suggest", "--input-model", MODEL, "--stages", 4, "--report", "html",
                    "--report-file", tmp_path / "suggest.html"],
        "simulate": ["simulate", "--input-model", MODEL, "--manual-sharding-config", cfg,
                     "--batches-per-step", 8, "--report", "html", "--report-file",
                     tmp_path / "simulate.html"],
        "memory": ["memory", "--input-model", MODEL, "--manual-sharding-config", cfg,
                   "--report", "html", "--report-file", tmp_path / "memory.html"],
    }
    for name, args in pages.items():
        run(*args)
        page = tmp_path / f"{name}.html"
        text = page.read_text()
        # Self-contained: no script, no stylesheet or image from elsewhere.
        assert "<script" not in text and "<link" not in text
        assert not re.search(r'(src|href)="(?!#)', text)
        dom, errors, colours = load(page, tmp_path)
        assert errors == [], (name, errors)
        assert colours > 8, (name, colours)
        blocks = blocks_of(dom)
        assert len(blocks) == 4, name
        assert [b["stage"] for b in blocks] == ["0", "1", "2", "3"]
        labels = re.findall(r'class="label"[^>]*>([^<]*)<', dom)
        assert labels == [f"stage {k} \u00b7 device {k}" for k in range(4)], (name, labels)
        if name in ("suggest", "simulate", "memory"):  # suggest's split
            for b, st in zip(blocks, s["stages"]):
                assert int(b["nodes"]) == st["nodes"], name
                assert close(b["parameter-bytes"], st["parameter_bytes"]), name
        assert 'id="timeline"' in dom or name == "memory"


# ---- what a first user found (2026-11-26)


@needs_models
def test_draw_memory_counts_the_timelines_schedule_and_micro_batches(tmp_path):
    common = ["--input-model", MODEL, "--manual-sharding-config", CONFIG, "--training"]
    run("draw", *common, "--schedule", "1f1b", "--batches-per-step", 8, "--format", "svg",
        "--output", tmp_path / "pics")
    m = report("memory", *common, "--schedule", "1f1b", "--batches-per-step", 8)
    bars = svgs(tmp_path / "pics")["bars.svg"]
    for metric, key in [("memory-bytes", "total_bytes"), ("activation-bytes", "activation_bytes")]:
        drawn = {int(b["stage"]): b["value"] for b in attrs(bars, "rect", "bar")
                 if b["metric"] == metric}
        for stage, value in drawn.items():
            assert close(value, max(d[key] for d in m["devices"] if d["stage"] == stage)), metric


@needs_models
def test_suggest_picture_memory_is_the_reports_memory_bytes(tmp_path):
    args = ["suggest", "--input-model", MODEL, "--stages", 4, "--memory-per-device", "300MiB",
            "--training", "--schedule", "1f1b", "--batches-per-step", 8]
    s = report(*args)
    run(*args, "--report", "svg", "--report-file", tmp_path / "pics")
    drawn = {int(b["stage"]): b["value"] for b in attrs(svgs(tmp_path / "pics")["bars.svg"],
                                                        "rect", "bar")
             if b["metric"] == "memory-bytes"}
    assert len(drawn) == 4
    for st in s["stages"]:
        assert close(drawn[st["stage"]], st["memory_bytes"])


@needs_models
def test_a_sharding_that_breaks_the_rules_is_drawn_with_its_findings(tmp_path):
    backward = ["--shard", "resnetv17_stage1__plus0=0:1", "--shard", "resnetv17_stage4__plus0=1:0"]
    r = run("simulate", "--input-model", MODEL, *backward, "--batches-per-step", 6, code=3)
    assert "cannot run as a pipeline" in r.stderr and "back to stage 0" in r.stderr
    r = run("draw", "--input-model", MODEL, *backward, "--output", tmp_path / "bad.html")
    assert "error [backward-edge]" in r.stderr
    page = (tmp_path / "bad.html").read_text()
    assert "Validation error [backward-edge]" in page
    assert "No timeline: the sharding cannot run as a pipeline" in page
    assert 'class="op"' not in page
    # suggest's page: the findings go to stderr, as its table would show them.
    r = run("suggest", "--input-model", MODEL, "--stages", 4, "--num-ipus", 2, "--report",
            "html", "--report-file", tmp_path / "s.html", code=3)
    assert "[too-many-devices]" in r.stderr
    assert "Validation error [too-many-devices]" in (tmp_path / "s.html").read_text()


def test_nodes_without_a_stage_are_drawn_without_memory_bars(tmp_path):
    # A model's own sharding may leave nodes out (validate lets it: they are
    # stage "-"); the memory planner counts by stage, so draw, which draws
    # what it is given, leaves the memory bars out and says why (it exited 3
    # with the planner's "has no stage" before).
    onnx = pytest.importorskip("onnx")
    run("synth", "decoder", "--layers", 1, tmp_path / "d.onnx")
    run("suggest", "--input-model", tmp_path / "d.onnx", "--stages", 2, "--output-model",
        tmp_path / "s.onnx")
    model = onnx.load(tmp_path / "s.onnx")
    first = model.graph.node[0].name
    for n in list(model.graph.node)[:3]:
        kept = [a for a in n.attribute if a.name not in ("__ipu_number", "__pipeline_stage")]
        del n.attribute[:]
        n.attribute.extend(kept)
    onnx.save(model, tmp_path / "partial.onnx")
    run("validate", tmp_path / "partial.onnx")
    r = run("draw", "--input-model", tmp_path / "partial.onnx", "--output", tmp_path / "p.html")
    assert "[pipelining-needs-sharding]" in r.stderr
    page = (tmp_path / "p.html").read_text()
    assert (f"No memory bars: 3 node(s) have no stage (the first: &#39;{first}&#39;)" in page)
    assert 'data-metric="memory-bytes"' not in page and 'data-metric="cost"' in page
    # The same model fully sharded has its memory bars.
    run("draw", "--input-model", tmp_path / "s.onnx", "--output", tmp_path / "s.html")
    assert 'data-metric="memory-bytes"' in (tmp_path / "s.html").read_text()


def test_draw_refuses_a_cycle_an_empty_output_and_a_folders_name(tmp_path):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])
    nodes = [helper.make_node("Add", ["x", "b"], ["a"], name="n0"),
             helper.make_node("Relu", ["a"], ["b"], name="n1"),
             helper.make_node("Relu", ["a"], ["y"], name="n2")]
    model = helper.make_model(helper.make_graph(nodes, "cycle", [x], [y]))
    onnx.save(model, tmp_path / "cycle.onnx")
    r = run("draw", "--input-model", tmp_path / "cycle.onnx", "--output", tmp_path / "c.html",
            code=2)
    assert "nodes form a cycle through node 0" in r.stderr and not (tmp_path / "c.html").exists()
    run("synth", "decoder", "--layers", 1, tmp_path / "d.onnx")
    r = run("draw", "--input-model", tmp_path / "d.onnx", "--output", "", code=2)
    assert "--output: an empty value; give one" in r.stderr
    r = run("draw", "--input-model", tmp_path / "d.onnx", "--output", f"{tmp_path}/new/", code=2)
    assert "ends in '/'" in r.stderr and not (tmp_path / "new").exists()
    r = run("draw", "--input-model", tmp_path / "d.onnx", "--output", ".", code=2)
    assert "give --output a file name" in r.stderr
    # A timeline option without --schedule is refused, as simulate refuses it,
    # not ignored; and zb-h1's weight split with another schedule.
    r = run("draw", "--input-model", tmp_path / "d.onnx", "--virtual-stages", 2, "--output",
            tmp_path / "v.html", code=1)
    assert "--virtual-stages describes a training step; give --schedule" in r.stderr
    r = run("draw", "--input-model", tmp_path / "d.onnx", "--schedule", "1f1b", "--weight-share",
            0.25, "--output", tmp_path / "v.html", code=1)
    assert "only zb-h1" in r.stderr and not (tmp_path / "v.html").exists()
    r = run("draw", "--input-model", tmp_path / "d.onnx", "--schedule", "1f1b",
            "--virtual-stages", 2, "--output", tmp_path / "v.html", code=1)
    assert "only the interleaved schedule runs" in r.stderr and not (tmp_path / "v.html").exists()


def test_stages_holding_no_nodes_are_a_note_not_bars(tmp_path):
    # A new user's trial: stage 65535 and device 65535 in a config made
    # 65,536 stage bars, an 84 MB page taking 300 MB and 3.7 s.
    run("synth", "decoder", "--layers", 2, tmp_path / "d.onnx")
    cfg = tmp_path / "sparse.yaml"
    cfg.write_text("- {node: layer1/mlp_residual, device: 0, stage: 65535}\n"
                   "- {node: layer0/q, device: 65535, stage: 0}\n")
    run("shard", "--input-model", tmp_path / "d.onnx", "--manual-sharding-config", cfg,
        "--output-model", tmp_path / "s.onnx", "--force", "--report", "none", code=3)
    run("draw", "--input-model", tmp_path / "s.onnx", "--output", tmp_path / "s.html")
    page = (tmp_path / "s.html").read_text()
    assert len(page) < 1_000_000
    assert "Stages 1-65534 hold no nodes and are not drawn." in page
    assert page.count('data-stage="65535"') >= 1 and 'data-stage="7"' not in page


def test_a_sparse_device_id_is_one_lane_not_a_lane_per_id(tmp_path):
    # A new user's trial: a split on devices 65535 and 0 drew a lane for each
    # id below 65536, a 9.4 MB page; simulate said "2 stages on 2 devices".
    run("synth", "decoder", "--layers", 2, tmp_path / "d.onnx")
    run("draw", "--input-model", tmp_path / "d.onnx", "--shard", "layer0/mlp_residual=65535:0",
        "--output", tmp_path / "p.html")
    page = (tmp_path / "p.html").read_text()
    assert len(page) < 1_000_000
    # (the nodes after the point go to the default group, device 65536)
    lanes = re.findall(r'<rect class="lane" data-device="(\d+)"', page)
    assert lanes == ["65535", "65536"]
    assert ">device 65535<" in page and ">device 0<" not in page
